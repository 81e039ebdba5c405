package results

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Where the model ran (issue #50): a server that cannot fit a model on
// its GPU runs the rest on the CPU without a word — Ollama loads as many
// layers as fit, llama-server as many as -ngl (or its fit) gives — and
// every figure is then a split model's, three to ten times slower than
// the card's. The server says it where it can; the run keeps it beside
// the engine's detection and the result says it in the words below,
// a problem only where the model is split.

// Placement is where the server put the model, as it said.
type Placement struct {
	// Source names where it was read: PlacementOllamaPS or
	// PlacementServerLog.
	Source string `json:"source"`
	// ModelBytes and GPUBytes are Ollama's size and size_vram: the
	// loaded model's memory and the part of it in the GPUs' memory.
	ModelBytes int64 `json:"model_bytes,omitempty"`
	GPUBytes   int64 `json:"gpu_bytes,omitempty"`
	// LayersGPU of LayersTotal were offloaded to the GPU (a llama.cpp
	// log's "offloaded 20/33 layers to GPU").
	LayersGPU   int `json:"layers_gpu,omitempty"`
	LayersTotal int `json:"layers_total,omitempty"`
	// CPUShare is the share of the model on the CPU, 0 to 1.
	CPUShare float64 `json:"cpu_share"`
	// NoGPU: the server said it has no GPU to offload to (a CPU-only
	// build's log, which offloads nothing and says so).
	NoGPU bool `json:"no_gpu,omitempty"`
}

// Where a placement was read.
const (
	PlacementOllamaPS  = "/api/ps size_vram"
	PlacementServerLog = "the server's start-up log"
)

// PlacementOf is Ollama's /api/ps figures for one model as a placement:
// size_vram against size, as `ollama ps` reads them (a size_vram Ollama
// left out, as some versions do when it is 0, is 0). ok is false when
// the figures say nothing (no size, or more in VRAM than the model).
func PlacementOf(size, sizeVRAM int64) (Placement, bool) {
	if size <= 0 || sizeVRAM < 0 || sizeVRAM > size {
		return Placement{}, false
	}
	return Placement{Source: PlacementOllamaPS, ModelBytes: size, GPUBytes: sizeVRAM,
		CPUShare: float64(size-sizeVRAM) / float64(size)}, true
}

// Split says part of the model ran on the CPU and part on a GPU.
func (p *Placement) Split() bool { return p != nil && p.CPUShare > 0 && p.CPUShare < 1 }

// percentCPU is the CPU's share as `ollama ps` rounds it.
func (p *Placement) percentCPU() int { return int(math.Round(p.CPUShare * 100)) }

// Words says where the model ran, and for a split model what that does
// to the figures and what to change: the sentence every surface shows.
// problem is true for a split model only: a model wholly on the CPU is
// said plainly as a note (on a machine without a GPU it is no fault, and
// the figures are the CPU's as asked).
func (p *Placement) Words(family string) (text string, problem bool) {
	if p == nil {
		return "", false
	}
	who := FamilyName(family)
	if who == "" {
		who = "The server"
	}
	switch {
	case p.Split():
		fix := "give it more GPU memory (a smaller context or quantisation) or offload more layers (-ngl)"
		if family == FamilyOllama {
			fix = "give it more GPU memory (a smaller context or quantisation) or set num_gpu"
		}
		where := fmt.Sprintf("%d %% of this model", p.percentCPU())
		if p.LayersTotal > 0 {
			where = fmt.Sprintf("%d of this model's %d layers", p.LayersTotal-p.LayersGPU, p.LayersTotal)
		}
		return fmt.Sprintf("%s ran %s on the CPU: these figures are a split model's, not the GPU's alone — %s", who, where, fix), true
	case p.CPUShare >= 1 && p.NoGPU:
		return fmt.Sprintf("%s has no GPU to offload to: the whole model ran on the CPU, and these are the CPU's figures", who), false
	case p.CPUShare >= 1:
		return fmt.Sprintf("%s ran the whole model on the CPU (none of it in GPU memory): these are the CPU's figures — on a machine with a GPU, the server found none it could use, or none with room", who), false
	}
	return "", false
}

// offloadedRe is llama.cpp's start-up line saying how many layers went
// to the GPU ("load_tensors: offloaded 20/33 layers to GPU"; before
// 2025 the prefix was llm_load_tensors).
var offloadedRe = regexp.MustCompile(`offloaded (\d+)/(\d+) layers to GPU`)

// PlacementFromLog reads where a llama.cpp server (llama-server, or the
// runner inside Ollama) put the model from its start-up log: the
// "offloaded N/M layers to GPU" line, the last one when it loaded more
// than once; a log that loaded a model's buffers with no such line is a
// build without a GPU backend (NoGPU). ok is false when the log says
// neither (it was cut before the model loaded, or is another server's).
func PlacementFromLog(lines []string) (Placement, bool) {
	var p Placement
	found, cpuBuffer := false, false
	for _, l := range lines {
		if m := offloadedRe.FindStringSubmatch(l); m != nil {
			gpu, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			if total > 0 && gpu >= 0 && gpu <= total {
				p, found = Placement{Source: PlacementServerLog, LayersGPU: gpu, LayersTotal: total, CPUShare: float64(total-gpu) / float64(total)}, true
			}
			continue
		}
		if strings.Contains(l, "load_tensors") && strings.Contains(l, "CPU") && strings.Contains(l, "buffer size") {
			cpuBuffer = true
		}
	}
	if found {
		return p, true
	}
	if cpuBuffer {
		return Placement{Source: PlacementServerLog, CPUShare: 1, NoGPU: true}, true
	}
	return Placement{}, false
}
