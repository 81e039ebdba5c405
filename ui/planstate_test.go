package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestResultStateEveryPlan: the app's result view of every registered
// plan judges a clean and a failed document by the plans' one rule, the
// one the CLI's exit code and History's mark follow (their tests range over
// the same cases): a failed result says its state and every problem in
// the warning colour; a clean one shows nothing in it. Its back button
// is the view's own, and leaves it.
func TestResultStateEveryPlan(t *testing.T) {
	h := newHarness(t)
	for _, c := range planstest.Cases() {
		h.locked(func() {
			left := false
			v := h.u.resultView(c.Doc, "", nil, func() { left = true })
			if v.back == nil || v.view == nil {
				t.Fatalf("%s: a view without its back button (%v) or its own struct (%T)", c.Name, v.back, v.view)
			}
			if test.Tap(v.back); !left {
				t.Errorf("%s: %q does not leave the view", c.Name, v.back.Text)
			}
			h.win.SetContent(v.content)
			text := test.RenderObjectToMarkup(v.content)
			warned := strings.Contains(text, `color="warning"`)
			if warned != c.Failed {
				t.Errorf("%s: shown in the warning colour %v, want %v", c.Name, warned, c.Failed)
			}
			if c.Failed && !strings.Contains(text, plans.State(c.Doc)) {
				t.Errorf("%s: the view does not say its state %q", c.Name, plans.State(c.Doc))
			}
			for _, p := range c.Doc.Problems() {
				if !strings.Contains(text, firstWords(p)) {
					t.Errorf("%s: the view does not say the problem %q", c.Name, p)
				}
			}
		})
	}
}

// firstWords is the start of a sentence, which a wrapped label keeps on
// its first line.
func firstWords(s string) string {
	if len(s) > 24 {
		return s[:24]
	}
	return s
}
