package hw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// amdSMISource reads AMD's amd-smi (ROCm 6.1 and later): `amd-smi metric
// … --json` once a tick, run by a shell loop on the machine so that ssh
// connects once. Every number is {"value": N, "unit": "W"}; any field (or
// a whole section) may be the string "N/A": missing, never 0.
type amdSMISource struct{ toolBase }

func newAMDSMISource(sh shell, gpus []int) *amdSMISource {
	return &amdSMISource{newToolBase(sh, gpus, toolAMDSMI, toolAMDSMI)}
}

// amdSMIArgs asks for the sections read here only (the whole of `metric`
// includes slow ones, such as ECC counts).
var amdSMIArgs = []string{"metric", "--usage", "--power", "--clock", "--temperature", "--mem-usage", "--json"}

// amdSMIGPU is one card of amd-smi's JSON: its index and its sections
// (nil where the section was absent or "N/A").
type amdSMIGPU struct {
	index    int
	sections map[string]map[string]json.RawMessage
}

// parseAMDSMI reads `amd-smi metric --json`: a top-level list of
// {"gpu": N, …} (ROCm 6.1–6.3) or the same list under "gpu_data"
// (later releases).
func parseAMDSMI(data []byte) ([]amdSMIGPU, error) {
	data = bytes.TrimSpace(data)
	var list []map[string]json.RawMessage
	switch {
	case len(data) > 0 && data[0] == '[':
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, errors.New("it is not amd-smi's JSON list of GPUs")
		}
	case len(data) > 0 && data[0] == '{':
		var wrap struct {
			GPUData []map[string]json.RawMessage `json:"gpu_data"`
		}
		if err := json.Unmarshal(data, &wrap); err != nil || wrap.GPUData == nil {
			return nil, errors.New("it is JSON without amd-smi's gpu_data list")
		}
		list = wrap.GPUData
	default:
		return nil, errors.New("it is not JSON")
	}
	out := make([]amdSMIGPU, 0, len(list))
	for _, m := range list {
		var idx float64
		if err := json.Unmarshal(m["gpu"], &idx); err != nil || idx < 0 || idx != math.Trunc(idx) || idx >= 1<<10 {
			return nil, errors.New(`a GPU without a "gpu" index`)
		}
		g := amdSMIGPU{index: int(idx), sections: map[string]map[string]json.RawMessage{}}
		for name, raw := range m {
			var sec map[string]json.RawMessage
			if json.Unmarshal(raw, &sec) == nil && sec != nil {
				g.sections[name] = sec
			}
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, errors.New("it lists no GPUs")
	}
	return out, nil
}

// The scales from amd-smi's units to ours (W, %, MiB, MHz, °C). amd-smi's
// "MB" is MiB: it divides bytes by 1024².
var (
	unitsPower   = map[string]float64{"W": 1, "mW": 1e-3, "uW": 1e-6, "µW": 1e-6}
	unitsPercent = map[string]float64{"%": 1}
	unitsMemory  = map[string]float64{"B": 1.0 / (1 << 20), "KB": 1.0 / 1024, "MB": 1, "GB": 1024, "KiB": 1.0 / 1024, "MiB": 1, "GiB": 1024}
	unitsClock   = map[string]float64{"MHz": 1, "GHz": 1000}
	unitsTemp    = map[string]float64{"C": 1, "°C": 1}
)

// quantity reads {"value": N, "unit": "W"} in one of units; "N/A", an
// unknown unit or anything else is missing.
func quantity(raw json.RawMessage, units map[string]float64) opt {
	var q struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	}
	if json.Unmarshal(raw, &q) != nil {
		return opt{}
	}
	scale, ok := units[strings.TrimSpace(q.Unit)]
	if !ok {
		return opt{}
	}
	var v float64
	if json.Unmarshal(q.Value, &v) != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return opt{}
	}
	return opt{roundTo(v*scale, 6), true}
}

// get is the first of the named fields of a section that reads in units.
func (g amdSMIGPU) get(section string, units map[string]float64, fields ...string) opt {
	sec := g.sections[section]
	for _, f := range fields {
		if o := quantity(sec[f], units); o.ok {
			return o
		}
	}
	return opt{}
}

// gfxClock is clock.gfx_0.clk, the first graphics engine's clock.
func (g amdSMIGPU) gfxClock() opt {
	var gfx map[string]json.RawMessage
	if json.Unmarshal(g.sections["clock"]["gfx_0"], &gfx) != nil {
		return opt{}
	}
	return quantity(gfx["clk"], unitsClock)
}

func (g amdSMIGPU) sample() Sample {
	s := Sample{GPU: g.index}
	setFloat(&s.PowerW, &s.Valid, FieldPower, g.get("power", unitsPower, "socket_power", "current_socket_power", "average_socket_power"))
	setFloat(&s.UtilPct, &s.Valid, FieldUtil, g.get("usage", unitsPercent, "gfx_activity"))
	setFloat(&s.MemUsedMiB, &s.Valid, FieldMemUsed, g.get("mem_usage", unitsMemory, "used_vram"))
	setFloat(&s.SMClockMHz, &s.Valid, FieldSMClock, g.gfxClock())
	setFloat(&s.TempC, &s.Valid, FieldTemp, g.get("temperature", unitsTemp, "edge", "hotspot"))
	return s
}

func (a *amdSMISource) Inventory(ctx context.Context) ([]GPU, error) {
	out, err := a.sh.run(ctx, a.runTimeout, 4<<20, "amd-smi", amdSMIArgs...)
	if err != nil {
		return nil, err
	}
	list, err := parseAMDSMI(out)
	if err != nil {
		return nil, fmt.Errorf("amd-smi on %s gave a GPU list we could not read: %v", a.sh.where(), err)
	}
	gpus := make([]GPU, len(list))
	for i, g := range list {
		gpus[i] = GPU{Index: g.index, Name: "AMD GPU", MemoryTotalMiB: floatPtr(g.get("mem_usage", unitsMemory, "total_vram"))}
	}
	return a.finishInventory(gpus)
}

func (a *amdSMISource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	parse := blockLines(tickMark, 4<<20, func(block string) ([]Sample, error) {
		list, err := parseAMDSMI([]byte(block))
		if err != nil {
			return nil, err
		}
		out := make([]Sample, len(list))
		for i, g := range list {
			out[i] = g.sample()
		}
		return out, nil
	})
	body := remoteCommand("amd-smi", amdSMIArgs)
	// amd-smi is a Python program: allow it a few seconds a pass.
	return a.startLines(ctx, interval, 10*time.Second, parse.line, parse.pending, 64<<10, "sh", "-c", loopScript(body, interval))
}
