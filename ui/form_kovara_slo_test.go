package ui

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

// TestKovaraFormServiceLevel: the Kovara form's service level (under
// Advanced) reaches the plan, each limit only when typed, is said in the
// summary, and a limit that does not read is named.
func TestKovaraFormServiceLevel(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		f := newKovaraForm(h.u.bench)
		if p, err := f.plan(); err != nil || p.SLO.Set() {
			t.Errorf("defaults: service level %+v, %v; want none", p.SLO, err)
		}
		if s := f.summary(); strings.Contains(s, "Goodput") {
			t.Errorf("summary without a service level %q", s)
		}
		f.sloTTFTEntry.SetText("500")
		f.sloTPOTEntry.SetText("40")
		p, err := f.plan()
		if err != nil || p.SLO != (setup.RateSLO{TTFTMs: 500, TPOTMs: 40}) {
			t.Errorf("service level %+v, %v; want TTFT 500 ms and TPOT 40 ms", p.SLO, err)
		}
		if s, want := f.summary(), "Goodput: requests with TTFT ≤ 500 ms, TPOT ≤ 40 ms."; !strings.Contains(s, want) {
			t.Errorf("summary %q lacks %q", s, want)
		}
		f.sloTPOTEntry.SetText("-1")
		if _, err := f.plan(); err == nil || !strings.Contains(strings.ToLower(err.Error()), "tpot limit must be more than 0") {
			t.Errorf("a negative TPOT limit: %v", err)
		}
	})
}
