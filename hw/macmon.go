package hw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// macmonSource reads an Apple Silicon Mac through macmon
// (github.com/vladkens/macmon, no sudo): one long-lived `macmon pipe -i MS`
// prints one JSON line a tick.
//
// A Mac has one GPU sharing the SoC's unified memory with the CPU and the
// Neural Engine, and a model's work runs on all three. So the one GPU
// sample of a tick carries, as PowerW, macmon's all_power: CPU + GPU + ANE
// in watts, the power the model's work costs, and what energy per token is
// computed from. The GPU's own figure is kept in GPUPowerW, the CPU's in
// CPUPowerW and the Neural Engine's in ANEPowerW. Memory used is the
// unified memory in use (ram_usage, bytes, the whole machine's: the GPU has
// no memory of its own). A GPU temperature of 0.0 means macmon found no
// sensor: missing.
//
// Formats: before v0.8 the GPU's use is gpu_usage [MHz, ratio 0–1 scaled by
// frequency]; v0.8 adds gpu_freq_mhz and gpu_active_ratio (active
// residency, what nvidia-smi's utilization means), which wins when present.
type macmonSource struct{ toolBase }

func newMacmonSource(sh shell, gpus []int) *macmonSource {
	return &macmonSource{newToolBase(sh, gpus, toolMacmon, toolMacmon)}
}

// macmonLine is one line of `macmon pipe`. Pointers are nil where the
// field was absent.
type macmonLine struct {
	AllPower       *float64   `json:"all_power"`
	CPUPower       *float64   `json:"cpu_power"`
	GPUPower       *float64   `json:"gpu_power"`
	ANEPower       *float64   `json:"ane_power"`
	GPUUsage       []float64  `json:"gpu_usage"` // before v0.8 (kept as an alias since): [MHz, ratio]
	GPUFreqMHz     *float64   `json:"gpu_freq_mhz"`
	GPUActiveRatio *float64   `json:"gpu_active_ratio"`
	Temp           macmonTemp `json:"temp"`
	Memory         struct {
		RAMTotal *float64 `json:"ram_total"`
		RAMUsage *float64 `json:"ram_usage"`
	} `json:"memory"`
	SoC struct {
		ChipName string `json:"chip_name"`
	} `json:"soc"` // with --soc-info only
}

type macmonTemp struct {
	GPUTempAvg *float64 `json:"gpu_temp_avg"`
}

func parseMacmonLine(line string) (macmonLine, error) {
	var m macmonLine
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &m) != nil {
		return m, errors.New("not a line of macmon's JSON")
	}
	if m.AllPower == nil && m.GPUPower == nil && m.Memory.RAMTotal == nil {
		return m, errors.New("a JSON line without macmon's readings")
	}
	return m, nil
}

func watts(p *float64) opt {
	if p == nil || *p < 0 || math.IsInf(*p, 0) || math.IsNaN(*p) {
		return opt{}
	}
	return opt{*p, true}
}

func (m macmonLine) sample() Sample {
	s := Sample{GPU: 0}
	setFloat(&s.PowerW, &s.Valid, FieldPower, watts(m.AllPower))
	setFloat(&s.GPUPowerW, &s.Valid, FieldGPUPower, watts(m.GPUPower))
	setFloat(&s.CPUPowerW, &s.Valid, FieldCPUPower, watts(m.CPUPower))
	setFloat(&s.ANEPowerW, &s.Valid, FieldANEPower, watts(m.ANEPower))
	switch {
	case m.GPUActiveRatio != nil:
		setFloat(&s.UtilPct, &s.Valid, FieldUtil, watts(m.GPUActiveRatio).percent())
	case len(m.GPUUsage) == 2:
		setFloat(&s.UtilPct, &s.Valid, FieldUtil, watts(&m.GPUUsage[1]).percent())
	}
	switch {
	case m.GPUFreqMHz != nil:
		setFloat(&s.SMClockMHz, &s.Valid, FieldSMClock, watts(m.GPUFreqMHz))
	case len(m.GPUUsage) == 2:
		setFloat(&s.SMClockMHz, &s.Valid, FieldSMClock, watts(&m.GPUUsage[0]))
	}
	if t := watts(m.Temp.GPUTempAvg); t.ok && t.v > 0 {
		setFloat(&s.TempC, &s.Valid, FieldTemp, t)
	}
	setFloat(&s.MemUsedMiB, &s.Valid, FieldMemUsed, watts(m.Memory.RAMUsage).div(1<<20))
	return s
}

func (m macmonLine) gpu() telemetry.GPU {
	name := strings.TrimSpace(m.SoC.ChipName)
	if name == "" {
		name = "Apple Silicon"
	}
	return telemetry.GPU{Index: 0, Name: name + " GPU (unified memory)", MemoryTotalMiB: floatPtr(watts(m.Memory.RAMTotal).div(1 << 20))}
}

// macmonMS is macmon's -i: the interval in whole milliseconds (at least
// macmon's own 100 ms floor).
func macmonMS(interval time.Duration) string {
	return strconv.FormatInt(max(interval.Milliseconds(), 100), 10)
}

func (m *macmonSource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	out, err := m.sh.run(ctx, m.runTimeout, 64<<10, "macmon", "pipe", "-s", "1", "-i", "200", "--soc-info")
	if err != nil {
		return nil, err
	}
	var line macmonLine
	err = errors.New("it printed nothing")
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "" {
			line, err = parseMacmonLine(l)
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("macmon on %s gave a reading we could not read: %v", m.sh.where(), err)
	}
	return m.finishInventory([]telemetry.GPU{line.gpu()})
}

func (m *macmonSource) Start(ctx context.Context, interval time.Duration) (*Sampler, error) {
	interval, err := checkInterval(interval)
	if err != nil {
		return nil, err
	}
	interval = max(interval, 100*time.Millisecond)
	parse := func(line string) ([]Sample, error) {
		if strings.TrimSpace(line) == "" {
			return nil, nil
		}
		ml, err := parseMacmonLine(line)
		if err != nil {
			return nil, err
		}
		return []Sample{ml.sample()}, nil
	}
	return m.startLines(ctx, interval, 0, parse, nil, 64<<10, "macmon", "pipe", "-i", macmonMS(interval))
}
