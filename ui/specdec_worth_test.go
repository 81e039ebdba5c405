package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"

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

// TestSpecDecViewWithoutPositions: with no acceptance by draft position
// to draw (the real llama-server b4748 capture), the page gives no half
// of itself to an empty chart: its one sentence stands under the
// warnings, which scroll with the table (at 1024×640 the warnings were
// cut off above an empty chart's place).
func TestSpecDecViewWithoutPositions(t *testing.T) {
	h := newHarness(t)
	r := planstest.LlamaSpecDec(t)
	h.locked(func() {
		v := newSpecDecView(h.u, r, "", nil, func() {})
		if splits := countSplits(v.content); splits != 0 {
			t.Errorf("%d splits on the page, want none without a chart", splits)
		}
		var texts []string
		windowTexts(t, v.content, nil, &texts)
		if all := strings.Join(texts, "\n"); !strings.Contains(all, "The server counts no acceptance by draft position.") || !strings.Contains(all, "Warnings:") {
			t.Errorf("the page does not say why there is no chart under its warnings: %q", all)
		}
	})
}

// countSplits counts the splits in o's tree of containers, scrolls and
// splits.
func countSplits(o fyne.CanvasObject) int {
	switch x := o.(type) {
	case *container.Split:
		return 1 + countSplits(x.Leading) + countSplits(x.Trailing)
	case *container.Scroll:
		return countSplits(x.Content)
	case *fyne.Container:
		n := 0
		for _, c := range x.Objects {
			n += countSplits(c)
		}
		return n
	}
	return 0
}
