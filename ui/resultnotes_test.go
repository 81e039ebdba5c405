package ui

import (
	"fmt"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// placed is where o is drawn in the window: its position from the
// window's top left, and the innermost vertical scroll around it (nil
// when none), with o's position inside that scroll's content.
type placed struct {
	pos       fyne.Position
	scroll    *container.Scroll
	posInside fyne.Position
}

// placeOf finds target in the tree under root, whose top left is at pos.
func placeOf(t *testing.T, root fyne.CanvasObject, target fyne.CanvasObject) (placed, bool) {
	var walk func(o fyne.CanvasObject, at placed) (placed, bool)
	walk = func(o fyne.CanvasObject, at placed) (placed, bool) {
		if !o.Visible() {
			return placed{}, false
		}
		at.pos = at.pos.Add(o.Position())
		at.posInside = at.posInside.Add(o.Position())
		if o == target {
			return at, true
		}
		var kids []fyne.CanvasObject
		switch x := o.(type) {
		case *container.Scroll:
			if x.Direction == container.ScrollVerticalOnly || x.Direction == container.ScrollBoth {
				at.scroll, at.posInside = x, fyne.Position{}
			}
			kids = []fyne.CanvasObject{x.Content}
			// The content is drawn offset by the scroll; its place
			// inside the content is what is reachable.
			at.pos = at.pos.Subtract(x.Offset)
		case *fyne.Container:
			kids = x.Objects
		case fyne.Widget:
			kids = test.TempWidgetRenderer(t, x).Objects()
		}
		for _, k := range kids {
			if p, ok := walk(k, at); ok {
				return p, true
			}
		}
		return placed{}, false
	}
	return walk(root, placed{})
}

// assertReachable fails unless every line of the wrapped label l can be
// read in the window of size win: l is given the height its text needs at
// its width, and lies either fully inside the window or inside a
// vertical scroll's content, which the scroll can bring into view.
func assertReachable(t *testing.T, what string, root fyne.CanvasObject, l fyne.CanvasObject, win fyne.Size) {
	t.Helper()
	p, ok := placeOf(t, root, l)
	if !ok {
		t.Fatalf("%s: not in the window", what)
	}
	if need, has := l.MinSize().Height, l.Size().Height; has+0.5 < need {
		t.Errorf("%s: %.0f px high, its text needs %.0f: the last lines are cut off", what, has, need)
	}
	bottom := func(at fyne.Position) float32 { return at.Y + l.Size().Height }
	if p.scroll != nil {
		if b, content := bottom(p.posInside), p.scroll.Content.Size().Height; b > content+0.5 {
			t.Errorf("%s: ends at %.0f px inside a scroll whose content is %.0f px: its end cannot be scrolled to", what, b, content)
		}
		return
	}
	if b := bottom(p.pos); b > win.Height+0.5 {
		t.Errorf("%s: ends at %.0f px in a %.0f px high window and nothing scrolls it into view", what, b, win.Height)
	}
}

// longNotes are n notes of a few lines each at a small window's width.
func longNotes(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("note %d: %s", i+1,
			strings.Repeat("a long sentence about what the run saw and what it means for the figures, ", 3)))
	}
	return out
}

// TestEveryResultsNotesReachable: every plan's result page with many
// long notes shows each of them at 1440×900 and at 1024×640, the label
// that holds the last note reachable (in a scroll, or inside the
// window). The capacity document has no notes of its own to give it.
func TestEveryResultsNotesReachable(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	for _, c := range planstest.Cases() {
		notes := longNotes(14)
		switch d := c.Doc.(type) {
		case plans.Kovara:
			d.File.Local.Warnings = append(d.File.Local.Warnings, notes...)
		case plans.Stages:
			d.Result.Warnings = append(d.Result.Warnings, notes...)
		case plans.SpecDec:
			d.Result.Warnings = append(d.Result.Warnings, notes...)
		case plans.Context:
			d.Result.Warnings = append(d.Result.Warnings, notes...)
		case plans.Tune:
			d.Result.Warnings = append(d.Result.Warnings, notes...)
		default:
			continue
		}
		for _, size := range []fyne.Size{{Width: 1440, Height: 900}, {Width: 1024, Height: 640}} {
			h.locked(func() {
				h.win.Resize(size)
				h.u.tabs.SelectIndex(0)
				b.show(h.u.resultView(c.Doc, "", nil, b.backToSetup).content)
				h.win.Content().Resize(size)
				var last []*widget.Label
				for _, l := range tableLabels(t, h.win.Content()) {
					if strings.Contains(l.Text, "note 14:") {
						last = append(last, l)
					}
				}
				if len(last) == 0 {
					t.Fatalf("%s at %v: no label shows the last note", c.Name, size)
				}
				for _, l := range last {
					assertReachable(t, fmt.Sprintf("%s at %v: the notes", c.Name, size), h.win.Content(), l, size)
				}
			})
		}
	}
}
