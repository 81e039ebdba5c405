package plans_test

import (
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// TestCapacitySummary: History's line of a capacity result gives the
// answer short (its column) and whole (the status line of the run
// selected), and a search stopped during a probe lists that level as
// partial, with no answer before a probe ended (#35 item 8).
func TestCapacitySummary(t *testing.T) {
	t.Parallel()
	held := results.CapacityProbe{Concurrency: 1, Requests: 20, Step: results.StepDouble, Met: true, OutputTPS: 40}
	missed := results.CapacityProbe{Concurrency: 2, Requests: 20, Step: results.StepDouble, Missed: []string{results.LimitTTFT}, OutputTPS: 70}
	partial := results.CapacityProbe{Concurrency: 2, Requests: 7, Step: results.StepDouble, Partial: true, OutputTPS: 90}
	settings := results.CapacitySettings{UserTPS: 20, TTFTP95Ms: 2000, MaxConcurrency: 8}
	tests := []struct {
		name         string
		complete     bool
		probes       []results.CapacityProbe
		answer       results.CapacityAnswer
		partial      *results.CapacityProbe
		mark, line   string
		levels       []int
		partialLevel int
		best         float64
	}{
		{"ended", true, []results.CapacityProbe{held, missed}, results.CapacityAnswer{Capacity: 1, Held: 1, Missed: 2, MissedAt: 2, MissedOn: []string{results.LimitTTFT}}, nil,
			"1 user", "capacity: 1 concurrent user (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms); 2 missed on TTFT p95", []int{1, 2}, 0, 70},
		{"stopped in the second probe", false, []results.CapacityProbe{held}, results.CapacityAnswer{Capacity: 1, Held: 1}, &partial,
			"1 user", "capacity: 1 concurrent user (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms) (stopped before the search ended)", []int{1}, 2, 40},
		{"stopped in the first probe", false, nil, results.CapacityAnswer{}, &partial, "", "", nil, 2, 0},
	}
	for _, tt := range tests {
		r := &results.CapacityResult{Settings: settings, Probes: tt.probes, Answer: tt.answer, Partial: tt.partial}
		r.Complete = tt.complete
		if tt.partial != nil {
			r.Local.PartialRun = &results.Run{Concurrency: tt.partial.Concurrency, Requests: 20}
		}
		s := plans.NewCapacity(r).Summary()
		if s.Capacity != tt.mark || s.Answer != tt.line || s.PartialLevel != tt.partialLevel || s.BestOutputTPS != tt.best || !slices.Equal(s.Levels, tt.levels) {
			t.Errorf("%s: summary mark %q, answer %q, levels %v, partial %d, best %v; want %q, %q, %v, %d, %v",
				tt.name, s.Capacity, s.Answer, s.Levels, s.PartialLevel, s.BestOutputTPS, tt.mark, tt.line, tt.levels, tt.partialLevel, tt.best)
		}
	}
}
