package results

import (
	"math"
	"reflect"
	"testing"
)

// throttledDoc is a Kovara file of three levels: the first cool and at
// full clock, the second capped for 42 % of it and hot for 10 %, the
// third read by a source that gave no reasons.
func throttledDoc() *File {
	v := func(x float64) *float64 { return &x }
	b := func(x int64) *int64 { return &x }
	f := &File{Runs: []Run{{Concurrency: 1}, {Concurrency: 8}, {Concurrency: 32}}}
	f.Local.Telemetry = &Telemetry{Levels: map[int]LevelTelemetry{
		1: {Concurrency: 1, LevelEnergy: LevelEnergy{DurationS: 50, ThrottledShare: v(0), ClockEventS: map[string]float64{"gpu_idle": 2},
			SMClockShare: v(0.98), PeakTempC: v(61), GPUs: []GPUEnergy{{Index: 0, PeakMemMiB: v(9000)}, {Index: 1, PeakMemMiB: v(8500)}}},
			Host: &HostLevel{SwapInBytes: b(0), SwapOutBytes: b(0)}},
		8: {Concurrency: 8, LevelEnergy: LevelEnergy{DurationS: 100, ThrottledShare: v(0.45), ClockEventS: map[string]float64{"sw_power_cap": 42, "sw_thermal_slowdown": 10, "gpu_idle": 1},
			SMClockShare: v(0.86), PeakTempC: v(83), GPUs: []GPUEnergy{{Index: 0, PeakMemMiB: v(9400)}, {Index: 1, PeakMemMiB: v(8600)}}},
			Host: &HostLevel{SwapInBytes: b(3 << 20), SwapOutBytes: b(1 << 19)}},
		32: {Concurrency: 32, LevelEnergy: LevelEnergy{DurationS: 80, PeakTempC: v(80)}},
	}}
	return f
}

func TestHardwareTable(t *testing.T) {
	got := HardwareTable(throttledDoc())
	want := &Table{
		Columns: []string{"Concurrency", "Slowed\n% of time", "Slowed\nfor", "Clock\n% of max", "Hottest\n°C", "GPU memory\npeak MiB", "Swapped in\n+ out MiB"},
		Rows: [][]string{
			{"1", "0.0", "none", "98.0", "61", "17500", "0.0"},
			{"8", "45.0", "power cap, heat", "86.0", "83", "18000", "3.5"},
			{"32", "—", "—", "—", "80", "—", "—"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HardwareTable =\n%q\nwant\n%q", got, want)
	}
	// A source that said only temperatures: only that column.
	f := throttledDoc()
	for k, lt := range f.Local.Telemetry.Levels {
		lt.ThrottledShare, lt.ClockEventS, lt.SMClockShare, lt.GPUs, lt.Host = nil, nil, nil, nil, nil
		f.Local.Telemetry.Levels[k] = lt
	}
	if got := HardwareTable(f); got == nil || len(got.Columns) != 2 || got.Columns[1] != "Hottest\n°C" {
		t.Errorf("temperatures alone: %q", got)
	}
	for k, lt := range f.Local.Telemetry.Levels {
		lt.PeakTempC = nil
		f.Local.Telemetry.Levels[k] = lt
	}
	if got := HardwareTable(f); got != nil {
		t.Errorf("nothing read: %q, want no table", got)
	}
	if got := HardwareTable(&File{Runs: []Run{{Concurrency: 1}}}); got != nil {
		t.Errorf("no source: %q, want no table", got)
	}
}

func TestSlowdownShares(t *testing.T) {
	labels, reasons, shares := SlowdownShares(throttledDoc())
	if want := []string{"1", "8", "32"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	var names []string
	for _, r := range reasons {
		names = append(names, r.Name)
	}
	// Only the slowdowns active somewhere, in NVML's order; idle is none.
	if want := []string{"sw_power_cap", "sw_thermal_slowdown"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("reasons %q, want %q", names, want)
	}
	for i, want := range [][]float64{{0, 0.42, math.NaN()}, {0, 0.10, math.NaN()}} {
		for j := range want {
			if g, w := shares[i][j], want[j]; !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%s in window %s: %v, want %v", names[i], labels[j], g, w)
			}
		}
	}
}
