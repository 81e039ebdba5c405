package ui

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/plans/planstest"
)

// TestSpecDecViewSaysWhetherItIsWorthIt: the speculative-decoding page
// says the result's headline — why levels were not run, and whether
// drafting is worth it — not only how the answers stopped (the real
// llama-server b4748 capture: no acceptance reported, so it says it
// cannot tell and how to find out).
func TestSpecDecViewSaysWhetherItIsWorthIt(t *testing.T) {
	h := newHarness(t)
	r := planstest.LlamaSpecDec(t)
	want := r.WorthWords()
	if want == "" {
		t.Fatal("the capture's result has no worth-it sentence")
	}
	h.locked(func() {
		v := newSpecDecView(h.u, r, "", nil, func() {})
		if got := v.state.Text; !strings.Contains(got, "Is it worth it?") || !strings.Contains(got, want) {
			t.Errorf("the page says %q, want the headline's %q", got, want)
		}
	})
}
