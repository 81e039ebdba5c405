package ui

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

// TestKovaraFormWorkload: the Kovara form's shared system prompt, prefix
// groups and turns (under Advanced) reach the plan, each only when typed,
// are said in the summary, count toward the longest prompt the context
// check holds, and a value that does not read is named.
func TestKovaraFormWorkload(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		f := newKovaraForm(h.u.bench)
		p, err := f.plan()
		if err != nil || p.Workload.Set() {
			t.Errorf("defaults: workload %+v, %v; want the method's prompts", p.Workload, err)
		}
		if s := f.summary(); strings.Contains(s, "The requests") {
			t.Errorf("summary without a workload %q", s)
		}
		in, _, _ := f.check()
		f.prefixEntry.SetText("2000")
		f.groupsEntry.SetText("2")
		f.turnsEntry.SetText("3")
		p, err = f.plan()
		if got, want := p.Workload, (setup.Workload{SharedPrefix: 2000, PrefixGroups: 2, Turns: 3}); err != nil || got != want {
			t.Errorf("workload %+v, %v; want %+v", got, err, want)
		}
		if s, want := f.summary(), "The requests: a shared 2,000-token system prompt in 2 groups, 3-turn conversations, so the run cannot be published."; !strings.Contains(s, want) {
			t.Errorf("summary %q lacks %q", s, want)
		}
		if got, _, _ := f.check(); got != in+2000+2*(p.InputTokens+p.OutputTokens) {
			t.Errorf("the context check holds %d prompt tokens, want %d", got, in+2000+2*(p.InputTokens+p.OutputTokens))
		}
		f.prefixEntry.SetText("")
		if _, err := f.plan(); err == nil || !strings.Contains(err.Error(), "prefix groups need a shared prefix") {
			t.Errorf("groups without a prefix: %v", err)
		}
		f.groupsEntry.SetText("")
		f.turnsEntry.SetText("x")
		if _, err := f.plan(); err == nil || !strings.Contains(err.Error(), "turns per conversation") {
			t.Errorf("turns that do not read: %v", err)
		}
	})
}
