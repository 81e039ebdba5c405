package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/results"
)

// TestContextPlanRunViewHistory runs the context plan on the built-in
// simulator (its depth model) from the Benchmark form, and finds its
// result in History, where it opens again.
func TestContextPlanRunViewHistory(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		b.planSelect.SetSelected(planContext)
		if b.formBox.Objects[0] != b.context.content() {
			t.Error("the context plan's own form (its depths, repeats, users and the answer's length) is not shown")
		}
		if b.context.outputEntry.Text != "128" {
			t.Errorf("answer length %q, want the plan's default 128", b.context.outputEntry.Text)
		}
		b.context.depthsEntry.SetText("0,1x")
		if !b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "depths: ") {
			t.Errorf("bad depths: run enabled %v, note %q", !b.runButton.Disabled(), b.planNote.Text)
		}
		b.context.depthsEntry.SetText("1k,2k") // the short prompt is measured all the same, and said
		b.context.repeatsEntry.SetText("2")
		b.context.outputEntry.SetText("16")
		if b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "Context: depths 0,1k,2k; at each, 2 × 1 user with a fresh prompt and a 16-token answer, then a cached follow-up.") {
			t.Fatalf("context plan: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the context result", 120*time.Second, func() bool { return b.running == nil && b.shownResult })
	check := func(where string) {
		h.locked(func() {
			v := h.u.contextView
			if v == nil {
				t.Fatalf("%s: no context view", where)
			}
			if len(v.rows) != 3 || !v.prefill.ShowingChart() || !v.decode.ShowingChart() || !v.ttft.ShowingChart() || len(v.saveAll) != 3 {
				t.Errorf("%s: %d rows, charts %q / %q / %q", where, len(v.rows), v.prefill.Text(), v.decode.Text(), v.ttft.Text())
			}
			if v.headline.Text == "" || !strings.Contains(v.method.Text, "Prefill tok/s = (cold prompt tokens read − the short prompt's) / (TTFT − the short prompt's median TTFT)") {
				t.Errorf("%s: headline %q, method %q", where, v.headline.Text, v.method.Text)
			}
		})
	}
	check("after the run")
	list, err := h.u.lib.List()
	if err != nil || len(list) != 1 || list[0].Plan != results.PlanContext {
		t.Fatalf("library %+v, %v", list, err)
	}
	h.locked(func() { h.u.contextView = nil; h.u.historyScreen.reload(); h.u.historyScreen.open(list[0].ID) })
	check("opened from History")

	// The run told the app the simulator's context (16,384 tokens): a
	// depth that would not fit with its answer and follow-up is refused
	// before Run, in the plan's own words.
	h.locked(func() {
		b.backToSetup()
		b.context.depthsEntry.SetText("0,1k,16k")
		if !b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "Cannot run: depth 16384 does not fit: its follow-up sends the 16384-token prompt") ||
			!strings.Contains(b.planNote.Text, "at the endpoint's last check") || !strings.Contains(b.planNote.Text, "the depths or the output tokens") {
			t.Errorf("a depth beyond the context: run enabled %v, note %q", !b.runButton.Disabled(), b.planNote.Text)
		}
		b.context.depthsEntry.SetText("0,1k,8k")
		if b.runButton.Disabled() {
			t.Errorf("8k fits in 16,384 tokens: %q", b.planNote.Text)
		}
		// Left to the server's context, the note says which depths that is.
		b.context.depthsEntry.SetText("")
		if want := "Context: depths 0,1k,2k,4k,8k (what fits the server's context of 16384 tokens at the endpoint's last check);"; !strings.HasPrefix(b.planNote.Text, want) {
			t.Errorf("note %q, want it to begin %q", b.planNote.Text, want)
		}
	})
}
