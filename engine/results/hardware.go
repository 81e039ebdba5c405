package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// What the GPUs did during a level, judged (issue #50): the clock event
// (throttle) reasons a source reported, read from local.telemetry.

// ClockEventReason is one bit of NVML's clock event reasons, the bitmask
// nvidia-smi gives as clocks_event_reasons.active (clocks_throttle_reasons.
// active before driver R535) and dcgm as DCGM_FI_DEV_CLOCKS_EVENT_REASONS.
type ClockEventReason struct {
	Bit uint64
	// Name is its key in LevelEnergy.ClockEventS: nvidia-smi's own name for
	// the field (clocks_event_reasons.<name>).
	Name string
	// Slowdown: the card lowered its clocks below what the work asked for
	// (power cap, heat, a hardware slowdown or power brake). The others are
	// settings or rest — idle, application clocks, sync boost, display
	// clocks — and are not throttling.
	Slowdown bool
	// Words finish "the GPU slowed itself for …".
	Words string
}

// ClockEventReasons are NVML's documented bits (nvml.h,
// nvmlClocksEventReasons; the same values in every driver since the
// reasons were named "throttle"). Bits outside them count under
// ClockEventOther.
var ClockEventReasons = []ClockEventReason{
	{0x1, "gpu_idle", false, "having nothing to run"},
	{0x2, "applications_clocks_setting", false, "its application clocks setting"},
	{0x4, "sw_power_cap", true, "its power cap"},
	{0x8, "hw_slowdown", true, "a hardware slowdown (heat or the power supply)"},
	{0x10, "sync_boost", false, "its sync boost group"},
	{0x20, "sw_thermal_slowdown", true, "heat"},
	{0x40, "hw_thermal_slowdown", true, "heat at its hardware limit"},
	{0x80, "hw_power_brake_slowdown", true, "the power supply's brake"},
	{0x100, "display_clock_setting", false, "its display clocks setting"},
}

// ClockEventOther is the key of bits ClockEventReasons does not name
// (newer drivers add some); they are not counted as throttling.
const ClockEventOther = "other"

// ClockEventNames are the names of the bits set in mask, in
// ClockEventReasons' order, ClockEventOther last.
func ClockEventNames(mask uint64) []string {
	var out []string
	for _, r := range ClockEventReasons {
		if mask&r.Bit != 0 {
			out = append(out, r.Name)
			mask &^= r.Bit
		}
	}
	if mask != 0 {
		out = append(out, ClockEventOther)
	}
	return out
}

// SlowdownMask is the bits of ClockEventReasons that are throttling.
func SlowdownMask() uint64 {
	var m uint64
	for _, r := range ClockEventReasons {
		if r.Slowdown {
			m |= r.Bit
		}
	}
	return m
}

func clockEventReason(name string) (ClockEventReason, bool) {
	i := slices.IndexFunc(ClockEventReasons, func(r ClockEventReason) bool { return r.Name == name })
	if i < 0 {
		return ClockEventReason{}, false
	}
	return ClockEventReasons[i], true
}

// ThrottleProblemShare is the share of a level a slowdown reason must
// exceed to be a problem on that level. Why 10 %: a power cap or thermal
// slowdown takes a card's clocks down by roughly a tenth (the captured
// RTX 4090 under its 450 W cap: 2820 → about 2475 MHz, 12 %), so a
// slowdown active for a tenth of a level costs that level about 1 % of
// its speed — within the run-to-run noise the method allows — while past
// it the level's figures start to describe the card's cooling or power
// limit rather than the load. (A hardware slowdown halves the clocks or
// worse; at 10 % of a level that is already 5 %, so anything above the
// threshold is certainly a problem, and below it is said as a note.)
const ThrottleProblemShare = 0.10

// HardwareFinding is one thing the GPUs did during a level that bears on
// its figures.
type HardwareFinding struct {
	// Level is the key in Telemetry.Levels.
	Level    int
	Severity Severity
	// GPU is the card's index; -1 where the finding is the chosen GPUs'
	// together (one GPU, or all of them alike).
	GPU int
	// Reason is the ClockEventReason's name.
	Reason string
	// Share is the figure the finding rests on: the share of the level's
	// window (0 to 1) the reason was active; Seconds the same in seconds.
	Share   float64
	Seconds float64
	// Text is the finding in words.
	Text string
}

// HardwareFindings judges one level of the telemetry: a finding for each
// slowdown reason a GPU reported during it — a problem when it was active
// for more than ThrottleProblemShare of the level, else a note — problems
// first, then the larger share first. A source that gives no reasons (any
// but nvidia-smi), or a level without readings, gives no findings: unknown
// is not a finding. With several GPUs each card is named; with one the
// level's own figures are used.
func (t *Telemetry) HardwareFindings(level int) []HardwareFinding {
	if t == nil {
		return nil
	}
	lt, ok := t.Levels[level]
	if !ok || lt.DurationS <= 0 {
		return nil
	}
	var out []HardwareFinding
	add := func(gpu int, events map[string]float64) {
		for name, secs := range events {
			r, ok := clockEventReason(name)
			if !ok || !r.Slowdown || secs <= 0 {
				continue
			}
			share := min(secs/lt.DurationS, 1)
			f := HardwareFinding{Level: level, Severity: SeverityNote, GPU: gpu, Reason: name, Share: share, Seconds: secs}
			if share > ThrottleProblemShare {
				f.Severity = SeverityProblem
			}
			f.Text = throttleWords(gpu, r, share, f.Severity)
			out = append(out, f)
		}
	}
	withReasons := 0
	for _, g := range lt.GPUs {
		if g.ThrottledShare != nil {
			withReasons++
		}
	}
	if withReasons > 1 {
		for _, g := range lt.GPUs {
			add(g.Index, g.ClockEventS)
		}
	} else if lt.ThrottledShare != nil {
		add(-1, lt.ClockEventS)
	}
	slices.SortFunc(out, func(a, b HardwareFinding) int {
		return cmp.Or(
			cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)),
			cmp.Compare(b.Share, a.Share),
			cmp.Compare(a.GPU, b.GPU),
			strings.Compare(a.Reason, b.Reason),
		)
	})
	return out
}

// throttleWords: "the GPU slowed itself for its power cap for 42 % of this
// level: later levels may read slower for that, not for the load".
func throttleWords(gpu int, r ClockEventReason, share float64, sev Severity) string {
	who := "the GPU"
	if gpu >= 0 {
		who = fmt.Sprintf("GPU %d", gpu)
	}
	s := fmt.Sprintf("%s slowed itself for %s for %s of this level", who, r.Words, shareWords(share))
	if sev == SeverityProblem {
		return s + ": this level and later ones may read slower for that, not for the load"
	}
	return s + ", too little to move its figures much"
}

// shareWords is a share as "42 %", "0.4 %" below 1 %, and never "0 %"
// or "100 %" for a share that is neither.
func shareWords(share float64) string {
	p := share * 100
	switch {
	case p >= 99.5 && p < 100:
		return "over 99 %"
	case p >= 1:
		return fmt.Sprintf("%.0f %%", math.Round(p))
	case p >= 0.1:
		return fmt.Sprintf("%.1f %%", p)
	case p > 0:
		return "under 0.1 %"
	}
	return "0 %"
}
