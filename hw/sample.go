package hw

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/internal/clip"
)

// Field names one reading of a Sample.
type Field uint16

// The readings a Sample may carry.
const (
	FieldPower Field = 1 << iota
	FieldUtil
	FieldMemUsed
	FieldSMClock
	FieldTemp
	FieldPCIeGen
	FieldPCIeWidth
	// The parts of PowerW where a source's PowerW is more than one chip's:
	// on an Apple Silicon Mac PowerW is CPU + GPU + Neural Engine (see
	// macmonSource), and these are each alone. Nothing sums or stores them
	// yet; results has no place for them.
	FieldGPUPower
	FieldCPUPower
	FieldANEPower
	// FieldClockEvents: ClockEvents holds nvidia-smi's
	// clocks_event_reasons.active (clocks_throttle_reasons.active on older
	// drivers), NVML's bitmask of why the clocks are below their maximum,
	// or another tool's reasons in the same bits: amd-smi's violation
	// status (amdViolations), powermetrics' thermal pressure.
	FieldClockEvents
)

// Sample is one GPU's readings at one moment. A reading whose Field bit is
// not in Valid was missing ([N/A], [Not Supported], absent from the exporter)
// and its number is 0: check Has before using it. Samples are values and
// never change once made.
type Sample struct {
	// T is the monotonic offset from the Sampler's start. All GPUs read in
	// one loop of nvidia-smi (or one exporter fetch) share one T.
	T          time.Duration `json:"t_ns"`
	GPU        int           `json:"gpu"`
	Valid      Field         `json:"valid"`
	PowerW     float64       `json:"power_w"`
	UtilPct    float64       `json:"util_pct"`
	MemUsedMiB float64       `json:"mem_used_mib"`
	SMClockMHz float64       `json:"sm_clock_mhz"`
	TempC      float64       `json:"temp_c"`
	PCIeGen    int           `json:"pcie_gen"`
	PCIeWidth  int           `json:"pcie_width"`
	GPUPowerW  float64       `json:"gpu_power_w,omitempty"`
	CPUPowerW  float64       `json:"cpu_power_w,omitempty"`
	ANEPowerW  float64       `json:"ane_power_w,omitempty"`
	// ClockEvents is NVML's clock event (throttle) reasons bitmask: see
	// ClockEventNames for its bits.
	ClockEvents uint64 `json:"clock_events,omitempty"`
}

// Has reports whether the reading f is present.
func (s Sample) Has(f Field) bool { return s.Valid&f != 0 }

// baseSampleFields is the per-loop query every driver answers, in the
// order parseSampleLine reads it; sampleFields adds the clock event
// reasons under their current name, and throttleSampleFields under the
// name drivers before R535 use (see smiSource.sampleQuery).
var (
	baseSampleFields     = []string{"index", "power.draw", "utilization.gpu", "memory.used", "clocks.sm", "temperature.gpu", "pcie.link.gen.current", "pcie.link.width.current"}
	sampleFields         = append(slices.Clip(baseSampleFields), fieldClockEvents)
	throttleSampleFields = append(slices.Clip(baseSampleFields), fieldClockThrottle)
)

// The clock event reasons field under its two names: NVIDIA renamed
// clocks_throttle_reasons.* to clocks_event_reasons.* (driver R535); a
// driver that does not know a name refuses the whole query with "is not a
// valid field to query".
const (
	fieldClockEvents   = "clocks_event_reasons.active"
	fieldClockThrottle = "clocks_throttle_reasons.active"
)

var errBadIndex = errors.New("the GPU index is not a number")

// parseSampleLine reads one line of
//
//	nvidia-smi --query-gpu=index,power.draw,utilization.gpu,memory.used,clocks.sm,temperature.gpu,pcie.link.gen.current,pcie.link.width.current[,clocks_event_reasons.active] --format=csv,noheader,nounits
//
// such as "0, 312.45, 98, 22816, 2520, 64, 4, 16" or, with the clock event
// reasons, "0, 435.39, 100, 22980, 2475, 47, 4, 16, 0x0000000000000004"
// (either name of the field gives the same bitmask). Readings nvidia-smi
// could not give ([N/A], [Not Supported], [Unknown Error], …) are left out
// of Valid. A line with the wrong number of fields, an unreadable index, or a
// field that is neither a number nor such a marker is an error: it is not a
// line of ours. T is left 0.
func parseSampleLine(line string) (Sample, error) {
	var s Sample
	line = strings.TrimRight(line, "\r\n")
	vals, ok := splitCSV(line, len(sampleFields), -1)
	if !ok && len(vals) != len(baseSampleFields) {
		return s, fmt.Errorf("%d fields instead of %d", len(vals), len(sampleFields))
	}
	idx, ok := smiInt(vals[0])
	if !ok {
		return s, errBadIndex
	}
	s.GPU = idx
	floats := []struct {
		f   Field
		dst *float64
	}{
		{FieldPower, &s.PowerW}, {FieldUtil, &s.UtilPct}, {FieldMemUsed, &s.MemUsedMiB},
		{FieldSMClock, &s.SMClockMHz}, {FieldTemp, &s.TempC},
	}
	for i, fl := range floats {
		v, ok, err := smiNumber(vals[1+i])
		if err != nil {
			return Sample{}, fmt.Errorf("%s: %w", sampleFields[1+i], err)
		}
		if ok {
			*fl.dst = v
			s.Valid |= fl.f
		}
	}
	ints := []struct {
		f   Field
		dst *int
	}{{FieldPCIeGen, &s.PCIeGen}, {FieldPCIeWidth, &s.PCIeWidth}}
	for i, in := range ints {
		v, ok, err := smiNumber(vals[6+i])
		if err != nil {
			return Sample{}, fmt.Errorf("%s: %w", sampleFields[6+i], err)
		}
		if ok {
			if v != float64(int(v)) || v > 1<<10 {
				return Sample{}, fmt.Errorf("%s: %q is not a whole number", sampleFields[6+i], vals[6+i])
			}
			*in.dst = int(v)
			s.Valid |= in.f
		}
	}
	if len(vals) == len(sampleFields) {
		mask, ok, err := smiBitmask(vals[len(baseSampleFields)])
		if err != nil {
			return Sample{}, fmt.Errorf("%s: %w", fieldClockEvents, err)
		}
		if ok {
			s.ClockEvents = mask
			s.Valid |= FieldClockEvents
		}
	}
	return s, nil
}

// smiBitmask reads nvidia-smi's hexadecimal bitmask ("0x0000000000000004"):
// ok=false for a missing-value marker ([N/A], [Not Supported]), an error for
// anything else that is not 0x and 1 to 16 hex digits.
func smiBitmask(v string) (uint64, bool, error) {
	v = strings.TrimSpace(v)
	if missingMark(v) {
		return 0, false, nil
	}
	digits, found := strings.CutPrefix(strings.ToLower(v), "0x")
	if !found || len(digits) == 0 || len(digits) > 16 {
		return 0, false, fmt.Errorf("%q is not a bitmask", clip.Line(v, 160))
	}
	n, err := strconv.ParseUint(digits, 16, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q is not a bitmask", clip.Line(v, 160))
	}
	return n, true, nil
}

// missingMark reports nvidia-smi's ways of saying it has no value:
// "[N/A]", "N/A", "[Not Supported]", "[Unknown Error]", "[Insufficient
// Permissions]", "[GPU is lost]", "[Requested functionality has been
// deprecated]", and an empty field.
func missingMark(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "N/A") || strings.EqualFold(v, "Not Supported") {
		return true
	}
	return len(v) >= 2 && v[0] == '[' && v[len(v)-1] == ']'
}

// smiNumber reads a numeric field: ok=false for a missing-value marker, an
// error for anything that is neither. nvidia-smi writes plain decimals; a
// trailing unit (" W", " %", " MiB", " MHz", when nounits was ignored) is
// tolerated. Negative, exponent, NaN and infinite forms are refused.
func smiNumber(v string) (float64, bool, error) {
	v = strings.TrimSpace(v)
	if missingMark(v) {
		return 0, false, nil
	}
	if num, unit, found := strings.Cut(v, " "); found {
		switch strings.TrimSpace(unit) {
		case "W", "%", "MiB", "MHz", "C":
			v = num
		default:
			return 0, false, fmt.Errorf("%q is not a number", clip.Line(v, 160))
		}
	}
	dots := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return 0, false, fmt.Errorf("%q is not a number", clip.Line(v, 160))
		}
	}
	if dots > 1 || v == "." || len(v) > 24 {
		return 0, false, fmt.Errorf("%q is not a number", clip.Line(v, 160))
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%q is not a number", clip.Line(v, 160))
	}
	return f, true, nil
}

// smiInt reads a required whole number such as the GPU index.
func smiInt(v string) (int, bool) {
	v = strings.TrimSpace(v)
	if !isDigits(v) || len(v) > 6 {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}
