package plans_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestFailedWhenNothingMeasured: a context or rate result that measured
// nothing failed, and when it ran to its end (not stopped) says so among
// its problems; a depth or rate with no success fails it too, a rate
// stopped part way does not.
func TestFailedWhenNothingMeasured(t *testing.T) {
	t.Parallel()
	context := func(complete bool, depths ...results.ContextDepth) plans.Doc {
		r := &results.ContextResult{Depths: depths}
		r.Complete = complete
		return plans.NewContext(r)
	}
	rate := func(complete bool, levels ...results.RateLevel) plans.Doc {
		r := &results.RateResult{Levels: levels}
		r.Complete = complete
		return plans.NewRate(r)
	}
	tests := []struct {
		name    string
		doc     plans.Doc
		failed  bool
		problem string // among the problems; "" for none of the two below
	}{
		{"context, none measured", context(true), true, "no depth was measured"},
		{"context, stopped before a depth", context(false), true, ""},
		{"context, a depth measured", context(true, results.ContextDepth{Depth: 0, Conversations: 3, OK: 3}), false, ""},
		{"context, a depth without success", context(true, results.ContextDepth{Depth: 0, Conversations: 3, OK: 3}, results.ContextDepth{Depth: 1024, Conversations: 3}), true, ""},
		{"rate, none measured", rate(true), true, "no rate was measured"},
		{"rate, stopped before a rate", rate(false), true, ""},
		{"rate, a rate measured", rate(true, results.RateLevel{Rate: 1, Requests: 4, OK: 4}), false, ""},
		{"rate, a rate without success", rate(true, results.RateLevel{Rate: 1, Requests: 4, OK: 4}, results.RateLevel{Rate: 2, Requests: 4}), true, "at 2 req/s no request succeeded"},
		{"rate, stopped part way through a rate", rate(false, results.RateLevel{Rate: 1, Requests: 4, OK: 4}, results.RateLevel{Rate: 2, Partial: true}), false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.doc.Failed(); got != tc.failed {
				t.Errorf("Failed = %v, want %v", got, tc.failed)
			}
			problems := tc.doc.Problems()
			if tc.problem != "" && !slices.Contains(problems, tc.problem) {
				t.Errorf("Problems = %q, want %q among them", problems, tc.problem)
			}
			for _, none := range []string{"no depth was measured", "no rate was measured"} {
				if none != tc.problem && slices.Contains(problems, none) {
					t.Errorf("Problems = %q, want no %q", problems, none)
				}
			}
		})
	}
}

// TestMeasuredEveryPlan: every registered plan's clean and failed
// documents hold something measured (the CLI keeps them after an error),
// and a document of each that holds nothing is not measured (the CLI
// keeps nothing after an error then, and a finished one says so).
func TestMeasuredEveryPlan(t *testing.T) {
	t.Parallel()
	for _, c := range planstest.Cases() {
		if !c.Doc.Measured() {
			t.Errorf("%s: not measured", c.Name)
		}
	}
	empty := map[string]plans.Doc{
		results.PlanKovara:   plans.Kovara{File: &results.File{}},
		results.PlanStages:   plans.NewStages(&results.StagesResult{}),
		results.PlanSpecDec:  plans.NewSpecDec(&results.SpecDecResult{}),
		results.PlanCapacity: plans.NewCapacity(&results.CapacityResult{}),
		results.PlanContext:  plans.NewContext(&results.ContextResult{}),
		results.PlanRate:     plans.NewRate(&results.RateResult{}),
		results.PlanTune:     plans.NewTune(&results.TuneResult{}),
		results.PlanAnswers:  plans.NewAnswers(&results.AnswersResult{}),
	}
	for _, k := range plans.All {
		d, ok := empty[k.ID]
		if !ok {
			t.Errorf("%s: no empty document in this test", k.ID)
			continue
		}
		if d.Measured() {
			t.Errorf("%s: a document with nothing in it is measured", k.ID)
		}
	}
}

// TestStopSaysWhatIsKept: Stop's question says what a run of each kind
// keeps; the answers comparison keeps nothing (RunAnswers returns no
// document from part of the positions), never "the level in progress".
func TestStopSaysWhatIsKept(t *testing.T) {
	for _, k := range plans.All {
		got := k.Stopped()
		switch {
		case k.ID == results.PlanAnswers && !strings.HasPrefix(got, "nothing of the comparison is kept"):
			t.Errorf("%s: Stop says %q", k.ID, got)
		case k.ID != results.PlanAnswers && got != plans.StopKeepsLevels:
			t.Errorf("%s: Stop says %q, want the levels' rule", k.ID, got)
		}
	}
}

// TestAnswersSummaryNamesBothModels: History and Compare name an answers
// comparison by both models, so that two of one baseline are told apart.
func TestAnswersSummaryNamesBothModels(t *testing.T) {
	if got, want := plans.NewAnswers(planstest.Answers(false)).Summary().Model, "qwen3-8b-q4_0 against qwen3-8b"; got != want {
		t.Errorf("summary model %q, want %q", got, want)
	}
}
