package ui

import (
	"testing"

	"fyne.io/fyne/v2"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// TestLiveStreamlessPlanSaysSoInItsTokenCharts: a plan whose requests
// stream no tokens (the answers comparison) has its token charts say so,
// however many refreshes come, rather than "Waiting for tokens…" for the
// whole run; the server's charts are drawn as for any run.
func TestLiveStreamlessPlanSaysSoInItsTokenCharts(t *testing.T) {
	note := plans.ByID(results.PlanAnswers).Streamless
	if note == "" {
		t.Fatal("the answers plan says nothing in place of its token charts")
	}
	h := newHarness(t)
	h.locked(func() {
		v := newLiveView("Benchmarking lab box", func() {})
		h.win.SetContent(v.content)
		h.win.Resize(fyne.NewSize(1024, 640))
		v.streamlessRun(note)
		d := liveRunData()
		palette := PaletteFor(h.u.fyne.Settings().Theme(), h.u.fyne.Settings().ThemeVariant())
		for i := range 2 {
			v.tabs.SelectIndex(i)
			v.update(d, palette)
		}
		for _, c := range []*ChartView{v.tpsChart, v.ttftChart, v.itlChart} {
			if !c.ShowingPlaceholder() || c.Text() != note {
				t.Errorf("%q: placeholder shown %v, says %q; want %q", c.Title(), c.ShowingPlaceholder(), c.Text(), note)
			}
		}
		if !v.srvChart.ShowingChart() {
			t.Error("the server's chart is not drawn in a streamless run")
		}
	})
}
