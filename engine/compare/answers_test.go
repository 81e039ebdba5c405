package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestAnswersTableIsNeutral: two answers comparisons side by side show
// each figure and its change, never marked better or worse, and the
// legend for one-measurement speeds ("a change under 10 % … not
// marked") is not said of them: each drift was judged against its own
// floor.
func TestAnswersTableIsNeutral(t *testing.T) {
	t.Parallel()
	doc := func(kl float64) *results.AnswersResult {
		return &results.AnswersResult{Figures: &results.AnswersFigures{Positions: 96, SameTop: 1, KLMean: kl, KLP99: 3 * kl, RefProb: 0.82},
			Floor: &results.AnswersFigures{Positions: 96, SameTop: 1, RefProb: 0.83}}
	}
	rows := AnswersTable([]*results.AnswersResult{doc(1.2e-4), doc(1.3e-4)}, []string{"q4 llama", "q4 ollama"})
	if len(rows) != len(AnswersMetrics) {
		t.Fatalf("%d rows, want one a metric (%d)", len(rows), len(AnswersMetrics))
	}
	for _, r := range rows {
		if c := r.Cells[1]; c.Better != 0 {
			t.Errorf("%s: marked %+d", r.Metric.Label, c.Better)
		}
	}
	if got := DocLegends(rows); len(got) != 0 {
		t.Errorf("legends %q, want none for neutral figures", got)
	}
}
