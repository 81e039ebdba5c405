package hw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// amdSMISource reads AMD's amd-smi (ROCm 6.1 and later): `amd-smi metric
// … --json` once a tick, run by a shell loop on the machine so that ssh
// connects once. Every number is {"value": N, "unit": "W"}; any field (or
// a whole section) may be the string "N/A": missing, never 0.
type amdSMISource struct {
	toolBase

	mu   sync.Mutex
	args []string // the metric arguments this amd-smi takes; nil until found (metric)
}

func newAMDSMISource(sh shell, gpus []int) *amdSMISource {
	return &amdSMISource{toolBase: newToolBase(sh, gpus, toolAMDSMI, toolAMDSMI)}
}

// amdSMIArgs asks for the sections read here only (the whole of `metric`
// includes slow ones, such as ECC counts). amdSMIThrottleArgs adds the
// violation status (--throttle: why the clocks are held down, on MI300 and
// later), which amd-smi before ROCm 6.3 does not know and amd-smi on a
// virtual machine's guest does not offer; see metric. It costs amd-smi
// 100 ms a GPU: it reads the card's counters twice that far apart.
var (
	amdSMIArgs         = []string{"metric", "--usage", "--power", "--clock", "--temperature", "--mem-usage", "--json"}
	amdSMIThrottleArgs = []string{"metric", "--usage", "--power", "--clock", "--temperature", "--mem-usage", "--throttle", "--json"}
)

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
	if m, ok := g.clockEvents(); ok {
		s.ClockEvents = m
		s.Valid |= FieldClockEvents
	}
	return s
}

// amdViolations are the reasons amd-smi's throttle section names (its
// violation status, MI300 and later) and the NVML clock event bit each is
// counted as, so that a level's throttle figures read for an AMD card as
// for an NVIDIA one. NVML's split is software against hardware: a "sw"
// reason is the card's own control loop holding the clocks down to stay
// under a limit, an "hw" one a protection the hardware asserts.
//
//   - PPT, package power tracking (AMD's PVIOL), is the firmware holding
//     the package at its power limit: sw_power_cap (0x4).
//   - Socket thermal (AMD's TVIOL) and HBM thermal are the same firmware
//     keeping the die, or the memory, under its temperature limit:
//     sw_thermal_slowdown (0x20), which NVML too raises for memory heat.
//   - VR thermal is a voltage regulator on the board signalling that it is
//     too hot: a hardware signal, and heat, so hw_thermal_slowdown (0x40).
//   - PROCHOT is the processor-hot line, which the GPU's sensors or the
//     platform around it (the board, its management controller, its power
//     supply) may assert: a hardware slowdown whose cause amd-smi does not
//     say, so hw_slowdown (0x8), "heat or the power supply" in the results'
//     words, rather than a claim of heat.
var amdViolations = []struct {
	name string // the prefix of <name>_violation_status
	bit  uint64
}{
	{"ppt", 0x4},
	{"socket_thermal", 0x20},
	{"hbm_thermal", 0x20},
	{"vr_thermal", 0x40},
	{"prochot", 0x8},
}

// clockEvents reads the throttle section (`metric --throttle`) as NVML's
// clock event reasons: each amdViolations reason whose
// <reason>_violation_status is "ACTIVE" sets its bit; "NOT ACTIVE" sets
// none. ok is false when no reason has either word: the section is absent
// (an amd-smi asked without --throttle), "N/A" (a card before MI300, a
// partition other than the first), or every status is "N/A" — then the
// reasons are unknown, not "none". One "N/A" among known statuses sets no
// bit, as NVML's mask leaves out a reason a card does not support.
//
// The status is a live flag, not a total: amd-smi reads the card's
// residency counters twice, 100 ms apart, during each pass, and says
// ACTIVE when a reason's counter grew by at least 1 % of that time
// (amdsmi_get_violation_status). So a reading's reasons are what held the
// clocks down at the moment of the pass, held until the next as
// nvidia-smi's are; the accumulated counters beside them are not read.
func (g amdSMIGPU) clockEvents() (uint64, bool) {
	sec := g.sections["throttle"]
	var mask uint64
	known := false
	for _, v := range amdViolations {
		var word string
		if json.Unmarshal(sec[v.name+"_violation_status"], &word) != nil {
			continue
		}
		switch strings.ToUpper(strings.TrimSpace(word)) {
		case "ACTIVE":
			mask |= v.bit
			known = true
		case "NOT ACTIVE":
			known = true
		}
	}
	return mask, known
}

// metric runs `amd-smi metric … --json` once with the arguments this
// amd-smi takes, finding them the first time: with --throttle, and, when
// that is refused (throttleRefused), once more without it. What answered
// is kept for the rest of the run, as smiSource keeps the name of the
// clock event reasons its driver takes.
func (a *amdSMISource) metric(ctx context.Context) ([]byte, error) {
	if args := a.knownArgs(); args != nil {
		return a.sh.run(ctx, a.runTimeout, 4<<20, "amd-smi", args...)
	}
	args := amdSMIThrottleArgs
	out, err := a.sh.run(ctx, a.runTimeout, 4<<20, "amd-smi", args...)
	if throttleRefused(out, err) {
		args = amdSMIArgs
		out, err = a.sh.run(ctx, a.runTimeout, 4<<20, "amd-smi", args...)
	}
	if err == nil {
		a.mu.Lock()
		a.args = args
		a.mu.Unlock()
	}
	return out, err
}

func (a *amdSMISource) knownArgs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.args
}

// throttleRefused reports whether amd-smi refused --throttle rather than
// failing for another reason (the driver not loaded, ssh refused: those
// are not asked again). amd-smi's own parser answers an argument it does
// not have with "Parameter '--throttle' is invalid. Run '--help' for more
// info." — under --json as {"error": "…", "code": -2} — and amd-smi of
// ROCm 6.1 and 6.2 prints that and exits 0 (amdsmi_cli.py catches the
// error and returns), later releases exit non-zero. Python's argparse,
// when amd-smi's handler is not reached, exits 2.
func throttleRefused(out []byte, err error) bool {
	if err != nil {
		var re *runError
		return errors.As(err, &re) && (re.code == 2 || re.code > 0 && strings.Contains(strings.ToLower(re.msg), "throttle"))
	}
	var answer struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(bytes.TrimSpace(out), &answer) == nil && strings.Contains(strings.ToLower(answer.Error), "throttle")
}

func (a *amdSMISource) Inventory(ctx context.Context) ([]telemetry.GPU, error) {
	out, err := a.metric(ctx)
	if err != nil {
		return nil, err
	}
	list, err := parseAMDSMI(out)
	if err != nil {
		return nil, fmt.Errorf("amd-smi on %s gave a GPU list we could not read: %v", a.sh.where(), err)
	}
	gpus := make([]telemetry.GPU, len(list))
	for i, g := range list {
		gpus[i] = telemetry.GPU{Index: g.index, Name: "AMD GPU", MemoryTotalMiB: floatPtr(g.get("mem_usage", unitsMemory, "total_vram"))}
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
	args := a.knownArgs()
	if args == nil {
		// Started before any inventory: find them now (one pass). If
		// amd-smi fails for another reason, the loop says so in its words.
		_, _ = a.metric(ctx)
		if args = a.knownArgs(); args == nil {
			args = amdSMIArgs
		}
	}
	body := remoteCommand("amd-smi", args)
	// amd-smi is a Python program: allow it a few seconds a pass.
	return a.startLines(ctx, interval, 10*time.Second, parse.line, parse.pending, 64<<10, "sh", "-c", loopScript(body, interval))
}
