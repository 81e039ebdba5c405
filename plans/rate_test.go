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

// TestTuneReplaySummary: a settings comparison that replayed a trace
// says "replay" in History's Levels column, not a number of users, and
// each replay it made names its setting and round as a Kovara run of a
// comparison does.
func TestTuneReplaySummary(t *testing.T) {
	t.Parallel()
	tune := &results.TuneResult{Plan: results.TunePlan{Concurrency: []int{results.TuneReplayLevel}, Replay: &results.TuneReplay{Requests: 9, Speed: 2}}}
	if got := plans.NewTune(tune).Summary().LevelList(); got != "replay" {
		t.Errorf("a comparison of replays: levels %q, want %q", got, "replay")
	}
	r := &results.RateResult{Levels: []results.RateLevel{{Rate: 1.5}}}
	r.Local.Tune = &results.TuneRef{Setting: "np2", Round: 2, Rounds: 3}
	if s := plans.NewRate(r).Summary(); s.Setting != "np2" || s.Group != "2 of 3" || s.LevelList() != "1.5" {
		t.Errorf("a replay of a comparison: setting %q, group %q, levels %q", s.Setting, s.Group, s.LevelList())
	}
}
