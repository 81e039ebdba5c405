package ui

import (
	"fmt"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// openAccordions opens every accordion item in o (a form's advanced
// settings), so a test sees the form at its tallest.
func openAccordions(o fyne.CanvasObject) {
	switch x := o.(type) {
	case *widget.Accordion:
		x.OpenAll()
	case *fyne.Container:
		for _, c := range x.Objects {
			openAccordions(c)
		}
	}
}

// TestWindowFitsSmallScreen: the window can be made as small as 1024×640
// (a small laptop screen) in every place and state — each plan's form,
// the live view, the result, History, Compare and Endpoints — because the
// window's least size is its content's.
func TestWindowFitsSmallScreen(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	fits := func(state string) {
		t.Helper()
		if m := h.win.Content().MinSize(); m.Width > minWindowSize.Width || m.Height > minWindowSize.Height {
			t.Errorf("%s: the window needs at least %v×%v, more than %v×%v", state, m.Width, m.Height, minWindowSize.Width, minWindowSize.Height)
		}
	}
	h.locked(func() {
		h.u.historyScreen.reload()
		fits("an empty History")
	})
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedLabelled(url, "a", 1)
	c := h.seedLabelled(url, "c", 2)
	h.locked(func() {
		for _, k := range plans.All {
			b.planSelect.SetSelected(k.Title)
			fits("the form of " + k.ID)
			openAccordions(b.forms[k.ID].content())
			fits("the form of " + k.ID + " with its advanced settings open")
		}
		for _, c := range planstest.Cases() {
			b.show(h.u.resultView(c.Doc, "", nil, b.backToSetup).content)
			fits("the result of " + c.Name)
		}
		b.backToSetup()
		h.u.historyScreen.reload()
		fits("History")
		h.u.compareRuns([]string{a, c})
		fits("Compare")
		h.u.historyScreen.open(a)
		fits("a run opened in History")
		b.planSelect.SetSelected(planKovara)
		b.selectEndpoint(SimulatorName)
		h.setPlan("1,2", "6", "400")
		test.Tap(b.runButton)
		for i := 0; i < 3; i++ {
			b.live.tabs.SelectIndex(i)
			fits(fmt.Sprintf("the live view, tab %d", i))
		}
	})
	h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
	h.locked(func() { fits("the result") })
}
