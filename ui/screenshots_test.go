package ui

import (
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
	"github.com/kovara/desktop/storage"
)

// TestScreenshots renders History, Compare and Export with the app's dark
// theme to PNG files for the docs:
//
//	KOVARA_SCREENSHOTS=docs/screenshots go test ./ui -run Screenshots
//
// (paths are relative to ui/). Without the variable it only checks that
// each screen renders.
func TestScreenshots(t *testing.T) {
	h := newHarness(t)
	h.u.fyne.Settings().SetTheme(darkTheme{theme.DefaultTheme()})
	h.win.Resize(fyne.NewSize(1180, 820))
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, BatchSlowdown: 0.05})
	a := h.seedRun(url, []int{1, 2, 4, 8}, 32, nil)
	b := h.seedRun(url, []int{1, 2, 4, 8}, 32, nil)
	c := h.seedRun(url, []int{1, 4, 8}, 24, nil)
	h.u.lib.SetAnnotation(a, storage.Annotation{Label: "baseline"})
	h.u.lib.SetAnnotation(b, storage.Annotation{Label: "after driver update"})
	dir := os.Getenv("KOVARA_SCREENSHOTS")
	shot := func(name string) {
		img := h.win.Canvas().Capture()
		if img == nil || img.Bounds().Dx() < 1000 {
			t.Fatalf("%s: no capture", name)
		}
		if dir == "" {
			return
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := chart.EncodePNG(img, f); err != nil {
			t.Fatal(err)
		}
	}
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		hs := h.u.historyScreen
		hs.reload()
		for _, id := range []string{a, b, c} {
			hs.table.Select(widget.TableCellID{Row: h.rowOf(id), Col: 0})
		}
		shot("history.png")
		hs.onCompare()
		shot("compare-table.png")
		h.u.compareScreen.views.SelectIndex(1)
		shot("compare-charts.png")
		h.u.tabs.SelectIndex(0)
		ex := h.u.showExport(a)
		shot("export.png")
		ex.dialog.Hide()
	})
	// The capacity result is a real llama-server's (-np 8), replayed from
	// the engine's captures.
	r := planstest.LlamaCapacity(t)
	id, err := h.u.lib.SaveDoc("", plans.NewCapacity(r))
	if err != nil {
		t.Fatal(err)
	}
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		hs := h.u.historyScreen
		hs.reload()
		hs.open(id)
		shot("capacity.png")
	})
	// A run where a fifth of the requests failed (the simulator's 503
	// fault): the problem is the first thing the result says.
	faulty := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, BatchSlowdown: 0.05,
		Faults: func(n int64) sim.Fault {
			if n%5 == 4 {
				return sim.Fault503
			}
			return sim.FaultNone
		}})
	bad := h.seedRun(faulty, []int{1, 4, 8}, 32, nil)
	h.locked(func() {
		hs := h.u.historyScreen
		hs.closeRun()
		hs.open(bad)
		shot("result-problems.png")
	})
}

// darkTheme is Fyne's theme in its dark variant whatever the desktop asks
// for, so the screenshots look the same on every machine.
type darkTheme struct{ fyne.Theme }

func (d darkTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return d.Theme.Color(n, theme.VariantDark)
}
