package ui

import (
	"bytes"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestResultTableFitsTheWindow: the default plan's three levels show in
// a table whose columns hold their content and fit a 1180-wide window
// (no sideways scrolling), every row shown; the page fits 1024×640. With
// the GPU's power (three more columns) the table still fits 1024×640,
// every heading and figure whole: Power, Peak and Tokens per J were past
// the window's edge in History.
func TestResultTableFitsTheWindow(t *testing.T) {
	h := newHarness(t)
	// A file of the default plan's three levels, the same on any machine:
	// a live run's notes depend on how busy the machine was (under a CPU
	// hog a queueing note made the page 68 px taller, where it scrolls),
	// and what fits is the page of a typical result.
	levels := setup.DefaultPlan().Concurrency
	if got := len(levels); got != 3 {
		t.Fatalf("the default plan has %d levels; this test is about three", got)
	}
	f := comparetest.Session(levels)
	f.Local.EndpointName = "sim box"
	id, err := h.u.lib.Save("", f)
	if err != nil {
		t.Fatal(err)
	}
	g := comparetest.Session(levels)
	g.Local.EndpointName = "sim box"
	power, peak, perJ := 231.4, 287.0, 3.91
	g.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{}}
	for _, c := range levels {
		g.Local.Telemetry.Levels[c] = results.LevelTelemetry{LevelEnergy: results.LevelEnergy{MeanPowerW: &power, PeakPowerW: &peak}, TokensPerJoule: &perJ}
	}
	withPower, err := h.u.lib.Save("", g)
	if err != nil {
		t.Fatal(err)
	}
	hs := h.u.historyScreen
	for _, size := range []fyne.Size{{Width: 1180, Height: 800}, {Width: 1024, Height: 640}} {
		h.locked(func() {
			h.win.Resize(size)
			h.u.tabs.SelectIndex(1)
			hs.reload()
			hs.open(withPower)
			v := hs.opened
			if got, room := v.table.width(), v.table.Size().Width; got > room {
				t.Errorf("with the GPU's power at %v the columns take %.1f px, the table has %.1f: %q are off screen", size, got, room, v.columns[len(v.columns)-3:])
			}
			assertColumnsHoldContent(t, "result with power", v.table, v.rows)
			assertNothingOverflows(t, "result with power", v.table)
			for _, l := range tableLabels(t, v.table) {
				if strings.HasSuffix(l.Text, "…") {
					t.Errorf("with the GPU's power at %v %q is cut", size, l.Text)
				}
			}
			hs.closeRun()
		})
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
		// The button says it copied (it said nothing).
		if b := findButton(t, h.win.Canvas().Overlays().Top(), copiedMarkdown); b == nil {
			t.Errorf("after Copy path the dialog has no %q button", copiedMarkdown)
		}
	})
}

// TestResultTimeline: a run that kept its requests shows its timeline in
// the result's Timeline tab, its highest level first, one row per user;
// the level chooser switches to another level; Save PNG… writes the
// timeline on screen through the file dialog.
func TestResultTimeline(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	id := h.seedRun(url, []int{1, 4}, 8, nil)
	dir := t.TempDir()
	hs := h.u.historyScreen
	h.locked(func() {
		h.win.Resize(fyne.NewSize(1180, 800))
		h.u.tabs.SelectIndex(1)
		hs.reload()
		hs.open(id)
		v := hs.opened
		v.views.SelectIndex(1)
		if got := v.views.Selected().Text; got != "Timeline" {
			t.Fatalf("tab %q, want Timeline", got)
		}
		tl := v.timeline
		if tl.level == nil || !slices.Equal(tl.level.Options, []string{"1 user", "4 users"}) {
			t.Fatalf("level chooser %v, want 1 user and 4 users", tl.level)
		}
		view := tl.views[0]
		if tl.level.Selected != "4 users" || tl.shown != 4 || !view.ShowingChart() || view.Title() != "Every request at 4 users" {
			t.Fatalf("shown first: %q (%d users), drawn %v, title %q; want the 4-user level drawn",
				tl.level.Selected, tl.shown, view.ShowingChart(), view.Title())
		}
		if got, want := len(tl.specs[0].Requests), 8; tl.specs[0].Slots != 4 || got != want {
			t.Errorf("the 4-user timeline has %d users and %d requests, want 4 and %d", tl.specs[0].Slots, got, want)
		}
		if b := view.Image().Bounds(); b.Dx() < 600 || b.Dy() < chartViewMinHeight {
			t.Errorf("drawn at %v, not at the tab's size", b)
		}

		tl.level.SetSelected("1 user")
		if tl.shown != 1 || view.Title() != "Every request at 1 user" || tl.specs[0].Slots != 1 || len(tl.specs[0].Requests) != 8 {
			t.Errorf("after choosing 1 user: %d users shown, title %q, %d users, %d requests",
				tl.shown, view.Title(), tl.specs[0].Slots, len(tl.specs[0].Requests))
		}

		// Save PNG… through Fyne's own file dialog, opened on dir.
		h.u.fyne.Preferences().SetString("fyne:fileDialogLastFolder", storage.NewFileURI(dir).String())
		test.Tap(tl.saves[0])
		h.tapInOverlay("Save")
		path := filepath.Join(dir, chart.FileName("Every request at 1 user"))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("Save PNG… wrote nothing where asked: %v", err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s is not a PNG: %v", path, err)
		}
		// What is saved is the chart as it stands alone (PostImage): the
		// post size, whatever the window's, the run named under the title.
		shown, err := view.PostImage()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := img.Bounds().Size(), image.Pt(chart.PostWidth, chart.PostHeight); got != want || img.Bounds() != shown.Bounds() {
			t.Fatalf("saved %v, want %v as PostImage draws it (%v)", got, want, shown.Bounds())
		}
		for y := 0; y < img.Bounds().Dy(); y += 7 {
			for x := 0; x < img.Bounds().Dx(); x += 7 {
				if !sameRGB(img.At(x, y), shown.At(x, y)) {
					t.Fatalf("saved pixel (%d,%d) %v, shown %v", x, y, img.At(x, y), shown.At(x, y))
				}
			}
		}
	})
}

// TestResultTimelineOfAnOldRun: a run saved before requests were kept
// says so in the Timeline tab, and offers nothing to choose or save.
func TestResultTimelineOfAnOldRun(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	id := h.seedRun(url, []int{1, 2}, 8, func(f *results.File) {
		for i := range f.Local.Levels {
			f.Local.Levels[i].Samples = nil
		}
	})
	hs := h.u.historyScreen
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		hs.reload()
		hs.open(id)
		v := hs.opened
		v.views.SelectIndex(1)
		tl := v.timeline
		if tl.note == nil || tl.note.Text != chart.NoTimeline {
			t.Fatalf("the old run's timeline tab says %v, want %q", tl.note, chart.NoTimeline)
		}
		if tl.level != nil || len(tl.views) != 0 || len(tl.saves) != 0 {
			t.Errorf("the old run offers a chooser (%v), %d timelines, %d Save buttons", tl.level, len(tl.views), len(tl.saves))
		}
		if !tl.note.Visible() || findButton(t, v.page, "Save PNG…") != nil {
			t.Error("the sentence is hidden, or a Save PNG… button shows")
		}
	})
}

// TestResultOfOneLevelOpensOnItsTimeline: one level draws no curve, so
// its result opens on the Timeline tab; several open on the charts.
func TestResultOfOneLevelOpensOnItsTimeline(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	one, two := h.seedRun(url, []int{4}, 8, nil), h.seedRun(url, []int{1, 4}, 8, nil)
	hs := h.u.historyScreen
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		for id, want := range map[string]string{one: "Timeline", two: "Charts"} {
			hs.reload()
			hs.open(id)
			if got := hs.opened.views.Selected().Text; got != want {
				t.Errorf("a run of %d levels opens on %q, want %q", len(hs.opened.file.Runs), got, want)
			}
			hs.closeRun()
		}
	})
}
