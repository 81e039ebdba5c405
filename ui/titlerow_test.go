package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// TestResultTitleAfterRunAgainLike: the result of a run made again like
// another, with "Compare with <that run>" first among its buttons, keeps
// its title readable at 1024×640 — on one line, or two at most — and its
// buttons at their own height inside the window. The title was squeezed
// beside the longer row of buttons to one word a line, and the buttons
// grew with it, about 130 px tall.
func TestResultTitleAfterRunAgainLike(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	first := h.seedRun(url, []int{1}, 8, nil)
	again := h.seedRun(url, []int{1}, 8, nil)
	f, err := h.u.lib.Load(again)
	if err != nil {
		t.Fatal(err)
	}
	b := h.u.bench
	h.locked(func() {
		h.win.Resize(minWindowSize)
		b.showResult(f, again, nil, nil)
		b.kovara.offerCompare([]string{first, again}, storage.ShortName(first))
		// Laid out again as the window would at its next frame.
		h.win.Resize(minWindowSize.AddWidthHeight(1, 0))
		h.win.Resize(minWindowSize)
		v := b.result
		line := widget.NewLabelWithStyle("Kovara", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}).MinSize().Height
		if got := v.title.Size().Height; got > 2*line {
			t.Errorf("the title %q is %v px high, more than two lines (%v each): squeezed beside the buttons", v.title.Text, got, line)
		}
		if w, need := v.title.Size().Width, textWidth(v.title.Text, v.title.TextStyle); w < need {
			t.Errorf("the title is %v px wide, its one line needs %v: it wraps", w, need)
		}
		d := fyne.CurrentApp().Driver()
		win := h.win.Canvas().Size()
		for _, o := range v.buttons.Objects {
			if !o.Visible() {
				continue
			}
			objs := []fyne.CanvasObject{o}
			if c, ok := o.(*fyne.Container); ok {
				objs = c.Objects // the share bar's buttons
			}
			for _, o := range objs {
				btn, ok := o.(*widget.Button)
				if !ok {
					continue
				}
				if got, want := btn.Size().Height, btn.MinSize().Height; got > want+1 {
					t.Errorf("button %q is %v px high, its own height is %v", btn.Text, got, want)
				}
				if p := d.AbsolutePositionForObject(btn); p.X < 0 || p.X+btn.Size().Width > win.Width+0.5 {
					t.Errorf("button %q lies at x %v–%v, outside the %v-wide window", btn.Text, p.X, p.X+btn.Size().Width, win.Width)
				}
			}
		}
	})
}
