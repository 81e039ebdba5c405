package compare

import (
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestContextVerdictPrefillMethod: a context result whose prefill was
// taken above the short prompt is not like for like with one written
// before, which took it over the whole TTFT; and the short prompt has no
// prefill row (it is the baseline).
func TestContextVerdictPrefillMethod(t *testing.T) {
	t.Parallel()
	doc := func(base *results.PrefillBaseline) *results.ContextResult {
		return &results.ContextResult{Model: "m", Settings: results.ContextSettings{OutputTokens: 128, Users: 1}, PrefillBaseline: base}
	}
	now, old := doc(&results.PrefillBaseline{ReadTokens: 8, TTFTMs: 6.8}), doc(nil)
	if like, diffs := ContextVerdict([]*results.ContextResult{now, doc(&results.PrefillBaseline{ReadTokens: 9, TTFTMs: 5})}); !like || len(diffs) != 0 {
		t.Errorf("two results with a baseline: like %v, %v", like, diffs)
	}
	like, diffs := ContextVerdict([]*results.ContextResult{now, old})
	if want := "prefill measured differs (above the short prompt vs over the whole TTFT, run 2)"; like || !slices.Contains(diffs, want) {
		t.Errorf("got like %v, %q; want %q", like, diffs, want)
	}
	for _, m := range ContextMetrics(0) {
		if m.ID == "prefill_tps@0" {
			t.Error("the short prompt has a prefill row")
		}
	}
	if m := ContextMetrics(1024); len(m) != 4 || m[0].ID != "prefill_tps@1024" {
		t.Errorf("1k metrics %+v", m)
	}
}
