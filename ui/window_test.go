package ui

import (
	"fmt"
	"math"
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

// formsIn are the forms in o, in the order drawn.
func formsIn(o fyne.CanvasObject) []*widget.Form {
	switch x := o.(type) {
	case *widget.Form:
		return []*widget.Form{x}
	case *widget.Accordion:
		var fs []*widget.Form
		for _, it := range x.Items {
			fs = append(fs, formsIn(it.Detail)...)
		}
		return fs
	case *fyne.Container:
		var fs []*widget.Form
		for _, c := range x.Objects {
			fs = append(fs, formsIn(c)...)
		}
		return fs
	}
	return nil
}

// TestBenchmarkFormAtSmallScreen: in a 1024×640 window, with any plan
// chosen after any other and its advanced settings open, Run and what it
// will do stay in sight below the scrolling fields, every field starts
// where the Plan field starts (one label column for the page, whatever
// the plan) and ends inside the window, and the plan's fields take the
// height they need, no more (no blank row left by a taller plan).
func TestBenchmarkFormAtSmallScreen(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		h.win.Resize(minWindowSize)
		d := fyne.CurrentApp().Driver()
		size := h.win.Canvas().Size()
		for _, f := range b.forms {
			openAccordions(f.content())
		}
		for _, from := range plans.All {
			for _, to := range plans.All {
				b.planSelect.SetSelected(from.Title)
				b.planSelect.SetSelected(to.Title)
				state := from.ID + " then " + to.ID
				if p, s := d.AbsolutePositionForObject(b.runButton), b.runButton.Size(); p.Y < 0 || p.Y+s.Height > size.Height || s.Height == 0 {
					t.Errorf("%s: Run is at y %v–%v, outside the %v-high window", state, p.Y, p.Y+s.Height, size.Height)
				}
				if got, want := b.formBox.Size().Height, b.form().content().MinSize().Height; got > want+1 {
					t.Errorf("%s: the plan's fields take %v high, their own need is %v: a blank row", state, got, want)
				}
				col := d.AbsolutePositionForObject(b.planSelect).X
				for _, f := range formsIn(b.form().content()) {
					for _, it := range f.Items {
						p, s := d.AbsolutePositionForObject(it.Widget), it.Widget.Size()
						if math.Abs(float64(p.X-col)) > 0.5 {
							t.Errorf("%s: %q starts at x %v, the Plan field at %v", state, it.Text, p.X, col)
						}
						if p.X+s.Width > size.Width {
							t.Errorf("%s: %q ends at x %v, past the window's %v", state, it.Text, p.X+s.Width, size.Width)
						}
					}
				}
			}
		}
	})
}

// TestLiveChartsReadableAtSmallScreen: in a 1024×640 window the live
// view's charts keep the height at which their value axis has three
// ticks or more; the view scrolls rather than shrinking them to an axis
// of two.
func TestLiveChartsReadableAtSmallScreen(t *testing.T) {
	test.NewTempApp(t)
	v := newLiveView("Benchmarking", func() {})
	w := test.NewWindow(v.content)
	defer w.Close()
	w.Resize(minWindowSize)
	for i, tab := range v.tabs.Items {
		v.tabs.SelectIndex(i)
		for _, c := range append([]*ChartView{v.tpsChart}, chartsIn(tab.Content)...) {
			if h := c.Size().Height; h < chartReadableHeight {
				t.Errorf("tab %s: a chart is %v high, want at least %v", tab.Text, h, chartReadableHeight)
			}
		}
	}
}

// chartsIn are the chart views in o.
func chartsIn(o fyne.CanvasObject) []*ChartView {
	switch x := o.(type) {
	case *ChartView:
		return []*ChartView{x}
	case *fyne.Container:
		var cs []*ChartView
		for _, c := range x.Objects {
			cs = append(cs, chartsIn(c)...)
		}
		return cs
	}
	return nil
}
