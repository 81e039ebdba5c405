package storage

import (
	"testing"

	"github.com/kovara/desktop/plans"
)

func TestSummaryState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    Summary
		want string
	}{
		{Summary{Summary: plans.Summary{Complete: true}}, "complete"},
		{Summary{}, "incomplete"},
		{Summary{Summary: plans.Summary{Complete: true, Problems: []string{"a", "b"}}}, "finished, 2 problems"},
		{Summary{Summary: plans.Summary{Problems: []string{"a"}}}, "incomplete, 1 problem"},
		// A 0 / 3 run: failed, never "finished" (#35 item 8).
		{Summary{Summary: plans.Summary{Complete: true, Failed: true, Problems: []string{"a"}}}, "failed, 1 problem"},
		{Summary{Summary: plans.Summary{Complete: true, Failed: true}}, "failed"},
		{Summary{Summary: plans.Summary{Failed: true, Problems: []string{"a"}}}, "incomplete, 1 problem"},
	}
	for _, tt := range tests {
		if got := tt.s.State(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestSummaryBest: a run that measured no output says so, never "0.0"
// (#35 item 8: "Best tok/s 0.0" for a 0 / 3 run).
func TestSummaryBest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tps  float64
		want string
	}{
		{0, "—"},
		{473.846, "473.8"},
		{0.04, "0.0"},
	}
	for _, tt := range tests {
		s := Summary{Summary: plans.Summary{BestOutputTPS: tt.tps}}
		if got := s.Best(); got != tt.want {
			t.Errorf("best %v: got %q, want %q", tt.tps, got, tt.want)
		}
	}
}
