package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/compare/comparetest"
)

// catcherIn is the wheel catcher of the page scroll in o's tree.
func catcherIn(t *testing.T, o fyne.CanvasObject) *wheelCatcher {
	t.Helper()
	var found *wheelCatcher
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *wheelCatcher:
			if found == nil && x.Visible() {
				found = x
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case *container.Scroll:
			walk(x.Content)
		case *container.Split:
			walk(x.Leading)
			walk(x.Trailing)
		}
	}
	walk(o)
	if found == nil {
		t.Fatal("no page scroll with a wheel catcher")
	}
	return found
}

// centre is the middle of o on its canvas.
func centre(o fyne.CanvasObject) fyne.Position {
	return absolutePos(o).Add(fyne.NewPos(o.Size().Width/2, o.Size().Height/2))
}

// TestWheelScrollsThePageOverFieldsAndTables: at 1024×640 the mouse
// wheel turned with the pointer over a text field of the Benchmark form,
// over a field of the Endpoints form, or over a result's table scrolls
// the page, as it does over a label: each field and table holds a scroll
// of its own, Fyne gives the wheel to the innermost scroll under the
// pointer only, and the page never moved. A turn sideways over a field
// whose text is wider than it still moves the field's text.
func TestWheelScrollsThePageOverFieldsAndTables(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	wheel := func(what string, page fyne.CanvasObject, over fyne.CanvasObject) {
		t.Helper()
		c := catcherIn(t, page)
		s := c.page
		s.ScrollToTop()
		if s.Content.MinSize().Height <= s.Size().Height {
			t.Fatalf("%s: the page (%v high in %v) does not scroll: nothing to test", what, s.Content.MinSize().Height, s.Size().Height)
		}
		at := centre(over)
		if at.Y < absolutePos(s).Y || at.Y > absolutePos(s).Y+s.Size().Height {
			t.Fatalf("%s: the pointer's place %v is not on the page", what, at)
		}
		// As the window does: the innermost scrollable under the pointer.
		test.Scroll(h.win.Canvas(), at, 0, -60)
		if s.Offset.Y <= 0 {
			t.Errorf("%s: the wheel over it left the page where it was", what)
		}
		// The pointer's place decides, as in a real window's event.
		s.ScrollToTop()
		c.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{AbsolutePosition: at}, Scrolled: fyne.NewDelta(0, -60)})
		if s.Offset.Y <= 0 {
			t.Errorf("%s: the wheel at the pointer left the page where it was", what)
		}
	}
	h.locked(func() {
		h.win.Resize(minWindowSize)
		b.planSelect.SetSelected(planKovara)
		openAccordions(b.kovara.content())
		b.setup.Refresh()
		h.win.Resize(minWindowSize.AddWidthHeight(0, 1))
		h.win.Resize(minWindowSize)
		wheel("the Benchmark form's Input tokens", b.setup, b.kovara.inputEntry)

		// Sideways over a field whose text does not fit, its text moves.
		e := b.kovara.levelsEntry
		e.SetText(strings.Repeat("1,2,4,8,16,32,", 12) + "64")
		c := catcherIn(t, b.setup)
		c.page.ScrollToTop()
		if e.textScroll == nil {
			t.Fatal("the field's own scroll is not known")
		}
		e.textScroll.ScrollToOffset(fyne.Position{})
		c.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{AbsolutePosition: centre(e)}, Scrolled: fyne.NewDelta(-60, 0)})
		if e.textScroll.Offset.X <= 0 || c.page.Offset.Y != 0 {
			t.Errorf("a turn sideways over a long field: its text at %v, the page at %v; want the text moved", e.textScroll.Offset.X, c.page.Offset.Y)
		}

		h.u.tabs.SelectIndex(3)
		s := h.u.endpointS
		test.Tap(s.addButton)
		// A long Test report under the form: the page scrolls.
		s.setReport(strings.TrimSpace(strings.Repeat("Serving 1 model: kovara-sim-8b\n", 30)), testPassed, "")
		h.win.Resize(minWindowSize.AddWidthHeight(0, 1))
		h.win.Resize(minWindowSize)
		wheel("the Endpoints form's Address", s.content, s.urlEntry)
	})
	// A result whose table of many levels makes the page scroll.
	levels := []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128}
	f := comparetest.Session(levels)
	id, err := h.u.lib.Save("", f)
	if err != nil {
		t.Fatal(err)
	}
	h.locked(func() {
		h.u.tabs.SelectIndex(0)
		b.showResult(f, id, nil, nil)
		h.win.Resize(minWindowSize.AddWidthHeight(0, 1))
		h.win.Resize(minWindowSize)
		wheel("a result's table", b.result.content, b.result.table)
	})
}
