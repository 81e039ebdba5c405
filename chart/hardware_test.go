package chart

import (
	"math"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestHardwareOverLevels(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	f := &results.File{Runs: []results.Run{{Concurrency: 1}, {Concurrency: 8}}}
	f.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{
		1: {LevelEnergy: results.LevelEnergy{DurationS: 20, ThrottledShare: v(0), SMClockShare: v(0.97)}},
		8: {LevelEnergy: results.LevelEnergy{DurationS: 40, ThrottledShare: v(0.5), ClockEventS: map[string]float64{"sw_power_cap": 20}, SMClockShare: v(0.81)}},
	}}
	spec, ok := HardwareOverLevels(f, Light())
	if !ok {
		t.Fatal("no chart for a run whose card was capped")
	}
	if len(spec.Series) != 2 {
		t.Fatalf("%d series, want the cap's bars and the clock's line", len(spec.Series))
	}
	bars, clock := spec.Series[0], spec.Series[1]
	if bars.Name != "slowed for power cap" || bars.Kind != Bars || bars.Y[0] != 0 || bars.Y[1] != 50 {
		t.Errorf("bars %q %v %v, want the power cap's 0 and 50 %%", bars.Name, bars.Kind, bars.Y)
	}
	if clock.Kind != Line || math.Abs(clock.Y[0]-97) > 1e-9 || math.Abs(clock.Y[1]-81) > 1e-9 {
		t.Errorf("clock %v %v, want 97 and 81 %%", clock.Kind, clock.Y)
	}
	if got, want := spec.XTickLabels, []string{"1", "8"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("windows named %q, want %q", got, want)
	}
	if _, err := Render(spec); err != nil {
		t.Errorf("Render: %v", err)
	}
	// A source that reports neither reasons nor clocks draws nothing.
	f.Local.Telemetry.Levels = map[int]results.LevelTelemetry{1: {LevelEnergy: results.LevelEnergy{DurationS: 20, PeakTempC: v(60)}}}
	if _, ok := HardwareOverLevels(f, Light()); ok {
		t.Error("a chart for a source that said nothing the chart shows")
	}
}

// A trace's replay draws, in place of the charts against the offered
// rate, each request's time to first token replayed and recorded over the
// replay's time, and its prompt tokens replayed against recorded.
func TestReplayCharts(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	r := &results.RateResult{Replay: &results.ReplayMatch{Requests: []results.ReplayPoint{
		{AtS: 0, RecordedIn: 100, ReplayedIn: 104, RecordedTTFTMs: v(40), ReplayedTTFTMs: v(55)},
		{AtS: 1.5, RecordedIn: 900, ReplayedIn: 880, RecordedTTFTMs: v(400), ReplayedTTFTMs: v(610)},
		{AtS: 2, RecordedIn: 300}, // not answered in the replay
	}}}
	specs := RateCharts(r, Light())
	if len(specs) != 2 || specs[0].Title != ReplayTTFTTitle || specs[1].Title != ReplayPromptTitle {
		t.Fatalf("charts %q", []string{specs[0].Title, specs[1].Title})
	}
	ttft := specs[0]
	if len(ttft.Series) != 2 || len(ttft.Series[0].X) != 2 || len(ttft.Series[1].X) != 2 || ttft.Series[0].Y[1] != 610 || ttft.Series[1].Y[1] != 400 {
		t.Errorf("time to first token series %+v", ttft.Series)
	}
	if p := specs[1].Series[0]; len(p.X) != 2 || p.X[1] != 900 || p.Y[1] != 880 {
		t.Errorf("prompt series %+v", p)
	}
	for _, s := range specs {
		if _, err := Render(s); err != nil {
			t.Errorf("%s: %v", s.Title, err)
		}
	}
}
