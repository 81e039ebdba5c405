package plans_test

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// TestRateSummary: History's Levels column of a rate result lists its
// rates, lowest first, in plain decimals, without a rate stopped part
// way (#36).
func TestRateSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		levels []results.RateLevel
		want   string
	}{
		{"given rates, in the order a sweep ran them", []results.RateLevel{{Rate: 4}, {Rate: 0.5}, {Rate: 2}, {Rate: 20000}}, "0.5,2,4,20000"},
		{"a rate stopped part way", []results.RateLevel{{Rate: 1}, {Rate: 2, Partial: true}}, "1"},
		{"none", nil, ""},
	}
	for _, tt := range tests {
		r := &results.RateResult{Levels: tt.levels}
		if got := plans.NewRate(r).Summary().LevelList(); got != tt.want {
			t.Errorf("%s: levels %q, want %q", tt.name, got, tt.want)
		}
	}
	if got, want := (plans.Summary{Levels: []int{1, 2}, PartialLevel: 4}).LevelList(), "1,2,4*"; got != want {
		t.Errorf("a Kovara run's levels %q, want %q", got, want)
	}
}
