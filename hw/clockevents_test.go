package hw

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/telemetry"
)

func TestParseSampleLineClockEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line  string
		valid bool   // FieldClockEvents set
		mask  uint64 // when valid
		err   string // substring; "" = none
	}{
		{line: "0, 435.39, 100, 22980, 2475, 47, 4, 16, 0x0000000000000004", valid: true, mask: 0x4},
		{line: "1, 15.42, 0, 120, 210, 29, 1, 16, 0x0000000000000001", valid: true, mask: 0x1},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 0x00000000000000A4", valid: true, mask: 0xa4},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 0x0000000000000000", valid: true, mask: 0},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, [N/A]"},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, [Not Supported]"},
		{line: "0, 31.47, 0, 22816, 210, 41, 1, 16"}, // a driver asked without the field
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 4", err: "not a bitmask"},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 0x", err: "not a bitmask"},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 0x00000000000000004", err: "not a bitmask"},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 0xZZ", err: "not a bitmask"},
		{line: "0, 300.00, 99, 22980, 1410, 85, 4, 16, 0x4, 1", err: "10 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := parseSampleLine(tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Has(FieldClockEvents) != tt.valid || got.ClockEvents != tt.mask {
				t.Errorf("got valid %v mask %#x, want %v %#x", got.Has(FieldClockEvents), got.ClockEvents, tt.valid, tt.mask)
			}
			if !got.Has(FieldPower) || !got.Has(FieldPCIeWidth) {
				t.Errorf("the other readings were lost: %+v", got)
			}
		})
	}
}

// capturedThrottleTrace reads hw/testdata/captured's real RTX 4090 trace
// (SOURCES.md): nvidia-smi --query-gpu=index,temperature.gpu,clocks.sm,
// power.draw,clocks_event_reasons.active --format=csv,noheader, both cards
// every 1.5 s. Its columns are read with the parsers the sampler uses for
// the same fields; each pair of lines is one tick.
func capturedThrottleTrace(t *testing.T) []Sample {
	t.Helper()
	var out []Sample
	for i, line := range fixtureLines(t, "captured/nvidia_smi_clocks_event_reasons_2x4090_power_cap_vllmExperience.csv") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		vals, ok := splitCSV(line, 5, -1)
		if !ok {
			t.Fatalf("line %d: %q", i+1, line)
		}
		idx, ok := smiInt(vals[0])
		temp, okT, errT := smiNumber(vals[1])
		clock, okC, errC := smiNumber(vals[2])
		power, okP, errP := smiNumber(vals[3])
		mask, okM, errM := smiBitmask(vals[4])
		if !ok || !okT || !okC || !okP || !okM || errT != nil || errC != nil || errP != nil || errM != nil {
			t.Fatalf("line %d does not read: %q", i+1, line)
		}
		tick := time.Duration(len(out)/2) * 1500 * time.Millisecond
		out = append(out, Sample{T: tick, GPU: idx, Valid: FieldTemp | FieldSMClock | FieldPower | FieldClockEvents,
			TempC: temp, SMClockMHz: clock, PowerW: power, ClockEvents: mask})
	}
	return out
}

func TestClockEventsCapturedRTX4090PowerCap(t *testing.T) {
	t.Parallel()
	samples := capturedThrottleTrace(t)
	if len(samples) != 80 {
		t.Fatalf("%d readings, want 80", len(samples))
	}
	// The load on GPU 0 starts at tick 12 (18 s) and the trace ends at tick
	// 39 (58.5 s): 27 steps of 1.5 s, 22 of them begun by a reading with
	// the power cap bit (0x4) set. GPU 1 idles (0x1) throughout.
	from, to := 18*time.Second, 58500*time.Millisecond
	le := Energy(samples, from, to, nil)
	wantShare := 22.0 / 27
	if le.ThrottledShare == nil || math.Abs(*le.ThrottledShare-wantShare) > 1e-9 {
		t.Fatalf("throttled share %v, want %.4f", fmtPtr(le.ThrottledShare), wantShare)
	}
	want := map[string]float64{"sw_power_cap": 33, "gpu_idle": 40.5}
	if fmt.Sprint(roundMap(le.ClockEventS)) != fmt.Sprint(want) {
		t.Errorf("clock events %v, want %v", le.ClockEventS, want)
	}
	g0, g1 := le.GPUs[0], le.GPUs[1]
	if g0.ThrottledShare == nil || math.Abs(*g0.ThrottledShare-wantShare) > 1e-9 || g1.ThrottledShare == nil || *g1.ThrottledShare != 0 {
		t.Errorf("GPU throttled shares %v, %v", fmtPtr(g0.ThrottledShare), fmtPtr(g1.ThrottledShare))
	}
	if fmt.Sprint(roundMap(g0.ClockEventS)) != fmt.Sprint(map[string]float64{"sw_power_cap": 33}) {
		t.Errorf("GPU 0 clock events %v", g0.ClockEventS)
	}
	if le.PeakTempC == nil || *le.PeakTempC != 64 {
		t.Errorf("peak temperature %v, want 64", fmtPtr(le.PeakTempC))
	}
	// The trace's own figures against the card's maximum: the RTX 4090's
	// boost reached 2820 MHz here (its reading with no reason set).
	max := 2820.0
	clockShares(&le, []telemetry.GPU{{Index: 0, SMClockMaxMHz: &max}})
	if g := le.GPUs[0]; g.SMClockShare == nil || *g.SMClockShare < 0.88 || *g.SMClockShare > 0.93 {
		t.Errorf("GPU 0 SM clock share %v, want about 0.9 (2550 of 2820 MHz)", fmtPtr(g.SMClockShare))
	}

	tel := results.Telemetry{Levels: map[int]results.LevelTelemetry{1: {Concurrency: 1, LevelEnergy: le}}}
	got := results.HardwareFindings(&tel, 1)
	if len(got) != 1 || got[0].Severity != results.SeverityProblem || got[0].GPU != 0 ||
		got[0].Text != "GPU 0 slowed itself for its power cap for 81 % of this level: this level and later ones may read slower for that, not for the load" {
		t.Errorf("findings %+v", got)
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprintf("%.4f", *p)
}

func roundMap(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = math.Round(v*1000) / 1000
	}
	return out
}

func TestClockEventsWindow(t *testing.T) {
	t.Parallel()
	// ticks every second from 0 to 10 s; masks[i] is the reading at i s.
	series := func(gpu int, masks ...uint64) []Sample {
		var out []Sample
		for i, m := range masks {
			out = append(out, Sample{T: time.Duration(i) * time.Second, GPU: gpu, Valid: FieldPower | FieldClockEvents, PowerW: 100, ClockEvents: m})
		}
		return out
	}
	repeat := func(m uint64, n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = m
		}
		return out
	}
	cat := func(parts ...[]uint64) []uint64 {
		var out []uint64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	noReasons := series(0, repeat(0, 11)...)
	for i := range noReasons {
		noReasons[i].Valid &^= FieldClockEvents
	}
	tests := []struct {
		name     string
		samples  []Sample
		from, to time.Duration
		share    string // fmtPtr of the level's ThrottledShare
		events   map[string]float64
		gpu      []string // each GPU's fmtPtr(ThrottledShare)
	}{
		{name: "power cap the second half", samples: series(0, cat(repeat(0, 5), repeat(0x4, 6))...),
			from: 0, to: 10 * time.Second, share: "0.5000", events: map[string]float64{"sw_power_cap": 5}, gpu: []string{"0.5000"}},
		{name: "edges inside readings", samples: series(0, cat(repeat(0, 5), repeat(0x4, 6))...),
			from: 2500 * time.Millisecond, to: 7500 * time.Millisecond, share: "0.5000", events: map[string]float64{"sw_power_cap": 2.5}, gpu: []string{"0.5000"}},
		{name: "the reading before the window holds into it", samples: series(0, cat(repeat(0, 2), repeat(0x20, 1), repeat(0, 8))...),
			from: 2500 * time.Millisecond, to: 4500 * time.Millisecond, share: "0.2500", events: map[string]float64{"sw_thermal_slowdown": 0.5}, gpu: []string{"0.2500"}},
		{name: "idle and settings are not throttling", samples: series(0, cat(repeat(0x1, 4), repeat(0x2|0x10|0x100, 7))...),
			from: 0, to: 10 * time.Second, share: "0.0000",
			events: map[string]float64{"gpu_idle": 4, "applications_clocks_setting": 6, "sync_boost": 6, "display_clock_setting": 6}, gpu: []string{"0.0000"}},
		{name: "an unnamed bit", samples: series(0, repeat(0x1000, 11)...),
			from: 0, to: 10 * time.Second, share: "0.0000", events: map[string]float64{"other": 10}, gpu: []string{"0.0000"}},
		{name: "several reasons at once", samples: series(0, repeat(0x4|0x8|0x40, 11)...),
			from: 0, to: 10 * time.Second, share: "1.0000",
			events: map[string]float64{"sw_power_cap": 10, "hw_slowdown": 10, "hw_thermal_slowdown": 10}, gpu: []string{"1.0000"}},
		{name: "two GPUs: the level is either throttled",
			samples: append(series(0, cat(repeat(0x4, 4), repeat(0, 7))...), series(1, cat(repeat(0, 3), repeat(0x20, 5), repeat(0, 3))...)...),
			from:    0, to: 10 * time.Second, share: "0.8000", events: map[string]float64{"sw_power_cap": 4, "sw_thermal_slowdown": 5},
			gpu: []string{"0.4000", "0.5000"}},
		{name: "one GPU's readings stop short: no level figure",
			samples: append(series(0, repeat(0x4, 11)...), series(1, repeat(0, 3)...)...),
			from:    0, to: 10 * time.Second, share: "nil", gpu: []string{"1.0000", "nil"}},
		{name: "a source without reasons", samples: noReasons, from: 0, to: 10 * time.Second, share: "nil", gpu: []string{"nil"}},
		{name: "readings stop short of the end", samples: series(0, repeat(0x4, 3)...),
			from: 0, to: 10 * time.Second, share: "nil", gpu: []string{"nil"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le := Energy(tt.samples, tt.from, tt.to, nil)
			if got := fmtPtr(le.ThrottledShare); got != tt.share {
				t.Errorf("throttled share %s, want %s", got, tt.share)
			}
			if tt.events == nil {
				tt.events = map[string]float64{}
			}
			if got := roundMap(le.ClockEventS); fmt.Sprint(got) != fmt.Sprint(tt.events) {
				t.Errorf("clock events %v, want %v", got, tt.events)
			}
			var gpus []string
			for _, g := range le.GPUs {
				gpus = append(gpus, fmtPtr(g.ThrottledShare))
			}
			if fmt.Sprint(gpus) != fmt.Sprint(tt.gpu) {
				t.Errorf("GPU shares %v, want %v", gpus, tt.gpu)
			}
		})
	}
}

func TestClockShares(t *testing.T) {
	t.Parallel()
	var samples []Sample
	for i := range 5 {
		samples = append(samples,
			Sample{T: time.Duration(i) * time.Second, GPU: 0, Valid: FieldPower | FieldSMClock, PowerW: 300, SMClockMHz: 1800},
			Sample{T: time.Duration(i) * time.Second, GPU: 1, Valid: FieldPower | FieldSMClock, PowerW: 300, SMClockMHz: 1050 + float64(i%2)*300})
	}
	max := 2100.0
	tests := []struct {
		name      string
		inventory []telemetry.GPU
		gpu0      string
		gpu1      string
		level     string
	}{
		{"both maxima", []telemetry.GPU{{Index: 0, SMClockMaxMHz: &max}, {Index: 1, SMClockMaxMHz: &max}}, "0.8571", "0.5571", "0.7071"},
		{"one maximum", []telemetry.GPU{{Index: 0, SMClockMaxMHz: &max}, {Index: 1}}, "0.8571", "nil", "0.8571"},
		{"no inventory", nil, "nil", "nil", "nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			le := Energy(samples, 0, 4*time.Second, nil)
			clockShares(&le, tt.inventory)
			got := []string{fmtPtr(le.GPUs[0].SMClockShare), fmtPtr(le.GPUs[1].SMClockShare), fmtPtr(le.SMClockShare)}
			if want := []string{tt.gpu0, tt.gpu1, tt.level}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("shares %v, want %v", got, want)
			}
			if m := le.GPUs[1].MeanSMClockMHz; m == nil || *m != 1170 {
				t.Errorf("GPU 1 mean SM clock %v, want 1170", fmtPtr(m))
			}
		})
	}
}
