package ui

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestResultTableFitsTheWindow: the default plan's three levels show in
// a table whose columns hold their content and fit a 1180-wide window
// (no sideways scrolling), every row shown; the page fits 1024×640.
func TestResultTableFitsTheWindow(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	p := setup.DefaultPlan()
	p.InputTokens, p.OutputTokens, p.Requests, p.Warmup = 32, 8, 32, 0
	if got := len(p.Concurrency); got != 3 {
		t.Fatalf("the default plan has %d levels; this test is about three", got)
	}
	f, err := engine.Run(context.Background(), p, engine.Endpoint{URL: url, Name: "sim box"}, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := h.u.lib.Save("", f)
	if err != nil {
		t.Fatal(err)
	}
	hs := h.u.historyScreen
	for _, size := range []fyne.Size{{Width: 1180, Height: 800}, {Width: 1024, Height: 640}} {
		h.locked(func() {
			h.win.Resize(size)
			h.u.tabs.SelectIndex(1)
			hs.reload()
			hs.open(id)
			v := hs.opened
			if got, room := v.table.width(), v.table.Size().Width; got > room {
				t.Errorf("at %v the columns take %.1f px, the table has %.1f: it scrolls sideways", size, got, room)
			}
			if got, want := v.table.Size().Height, v.table.height(); got < want {
				t.Errorf("at %v the table is %.1f px high, its %d rows need %.1f", size, got, len(v.rows), want)
			}
			assertColumnsHoldContent(t, "result", v.table, v.rows)
			assertNothingOverflows(t, "result", v.table)
			assertFits(t, "the result page", v.page)
			hs.closeRun()
		})
	}
}

// openerApp is the test app with a desktop that opens nothing: OpenURL
// fails as Fyne's does where xdg-open is missing. It records what it was
// asked to open.
type openerApp struct {
	fyne.App
	fail   bool
	opened []string
}

func (a *openerApp) OpenURL(u *url.URL) error {
	a.opened = append(a.opened, u.String())
	if a.fail {
		return &exec.Error{Name: "xdg-open", Err: exec.ErrNotFound}
	}
	return nil
}

// TestShowFileWithoutAnOpener: "Show file" opens the run's folder; where
// the desktop cannot, it says so and shows the file's path selectable,
// with a button that copies it.
func TestShowFileWithoutAnOpener(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	id := h.seedRun(url, []int{1}, 4, nil)
	desk := &openerApp{App: h.u.fyne}
	hs := h.u.historyScreen
	h.locked(func() {
		h.u.fyne = desk
		hs.reload()
		hs.open(id)
		path := h.u.lib.Path(id)

		test.Tap(hs.opened.showFile)
		if want := "file://" + filepath.ToSlash(filepath.Dir(path)); len(desk.opened) != 1 || desk.opened[0] != want {
			t.Errorf("opened %q, want %q", desk.opened, want)
		}
		if top := h.win.Canvas().Overlays().Top(); top != nil {
			t.Errorf("a dialog after the folder opened: %s", test.RenderObjectToMarkup(top))
		}

		desk.fail = true
		test.Tap(hs.opened.showFile)
		top := h.win.Canvas().Overlays().Top()
		if top == nil {
			t.Fatal("nothing said when the folder could not be opened")
		}
		const why = "The folder could not be opened: this desktop has no xdg-open to open folders with. The results file is here:"
		var said bool
		var shown *widget.Label
		for _, l := range tableLabels(t, top) {
			said = said || l.Text == why
			if l.Text == path {
				shown = l
			}
		}
		if !said {
			t.Errorf("the dialog does not say %q:\n%s", why, test.RenderObjectToMarkup(top))
		}
		if shown == nil || !shown.Selectable {
			t.Errorf("the path %s is not shown selectable (%v)", path, shown)
		}
		h.tapInOverlay("Copy path")
		if got := h.u.fyne.Clipboard().Content(); got != path {
			t.Errorf("clipboard %q, want %q", got, path)
		}
	})
}
