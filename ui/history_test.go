package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// seedRun makes a real run against the simulator and saves it in the
// harness's library.
func (h *harness) seedRun(url string, levels []int, output int, mutate func(*results.File)) string {
	h.t.Helper()
	p := setup.DefaultPlan()
	p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 32, output, levels, 8, 0
	f, err := engine.Run(context.Background(), p, engine.Endpoint{URL: url, Name: "sim box"}, engine.Observer{})
	if err != nil {
		h.t.Fatal(err)
	}
	if mutate != nil {
		mutate(f)
	}
	id, err := h.u.lib.Save("", f)
	if err != nil {
		h.t.Fatal(err)
	}
	return id
}

func (h *harness) rowOf(id string) int {
	for i, s := range h.u.historyScreen.shown {
		if s.ID == id {
			return i
		}
	}
	h.t.Fatalf("%s is not in the history table", id)
	return -1
}

func TestHistorySelectThreeAndCompare(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedRun(url, []int{1, 2}, 8, nil)
	b := h.seedRun(url, []int{1, 2, 4}, 8, nil)
	c := h.seedRun(url, []int{1, 2}, 6, nil) // other output length: not comparable
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		if len(hs.shown) != 3 || !hs.compareButton.Disabled() {
			t.Fatalf("history shows %d runs", len(hs.shown))
		}
		for _, id := range []string{a, b, c} {
			hs.table.Select(widget.TableCellID{Row: h.rowOf(id), Col: 0})
		}
		if hs.compareButton.Disabled() || historyCell(hs.shown[0], 0, hs.selected) != "☑" {
			t.Fatalf("three selected, compare should be enabled: %q", hs.status.Text)
		}
		test.Tap(hs.compareButton)
		cs := h.u.compareScreen
		if h.u.tabs.Selected() != h.u.compareTab || len(cs.files) != 3 {
			t.Fatalf("compare not showing: %d files", len(cs.files))
		}
		if !strings.HasPrefix(cs.verdict.Text, "Not comparable: output tokens differs") {
			t.Errorf("verdict %q", cs.verdict.Text)
		}
		if !strings.Contains(cs.details.Text, "concurrency 4 is only in run") {
			t.Errorf("notes: %q", cs.details.Text)
		}
		// Rows: levels 1, 2 and 4 × every metric; level 4 is a gap for two runs.
		var gaps, colored int
		for _, row := range cs.rows {
			for col := 2; col < 5; col++ {
				text, imp := compareCell(row, col)
				if text == "—" {
					gaps++
				}
				if imp == widget.SuccessImportance || imp == widget.DangerImportance {
					colored++
				}
			}
		}
		if gaps == 0 || colored == 0 {
			t.Errorf("compare table: %d gaps, %d coloured cells", gaps, colored)
		}
		if !cs.charts[0].ShowingChart() {
			t.Errorf("throughput chart: %q", cs.charts[0].Text())
		}
	})
}

func TestHistoryLabelDeleteImportUnreadable(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedRun(url, []int{1}, 4, nil)
	os.WriteFile(filepath.Join(h.u.lib.Dir(), "mangled.json"), []byte("{not json"), 0o644)
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		row := h.rowOf("mangled")
		if historyCell(hs.shown[row], 8, nil) != "unreadable" || historyCell(hs.shown[row], 9, nil) == "" {
			t.Errorf("unreadable row: %q %q", historyCell(hs.shown[row], 8, nil), historyCell(hs.shown[row], 9, nil))
		}
		// Label the run.
		hs.table.Select(widget.TableCellID{Row: h.rowOf(a), Col: 3})
		test.Tap(hs.labelButton)
	})
	h.locked(func() {
		top := h.win.Canvas().Overlays().Top()
		form := findEntries(t, top)
		if len(form) < 2 {
			t.Fatalf("label dialog has %d entries", len(form))
		}
		form[0].SetText("fp8 kv cache")
		h.tapInOverlay("Save")
		if hs.all[h.rowOf(a)].Label != "fp8 kv cache" {
			t.Errorf("label not saved: %+v", hs.all)
		}
		// Search finds it by label.
		hs.search.SetText("fp8")
		if len(hs.shown) != 1 || hs.shown[0].ID != a {
			t.Errorf("search shows %d", len(hs.shown))
		}
		hs.search.SetText("")
		// Import: a file from elsewhere.
		f, _ := h.u.lib.Load(a)
		data, _ := results.Marshal(f)
		src := filepath.Join(t.TempDir(), "theirs.json")
		os.WriteFile(src, append(data[:len(data)-2], []byte("\n}\n")...), 0o644) // same run, different bytes
		hs.importFiles([]string{src})
		if !strings.HasPrefix(hs.status.Text, "Imported") || len(hs.all) != 3 {
			t.Errorf("import: %q, %d runs", hs.status.Text, len(hs.all))
		}
		// Delete the unreadable file, with confirmation.
		hs.selected = map[string]bool{}
		hs.table.Select(widget.TableCellID{Row: h.rowOf("mangled"), Col: 0})
		test.Tap(hs.deleteButton)
		h.tapInOverlay("Delete")
		if len(hs.all) != 2 {
			t.Errorf("after delete %d runs", len(hs.all))
		}
	})
}

func findEntries(t *testing.T, o any) []*widget.Entry {
	var out []*widget.Entry
	collectEntries(t, o, &out)
	return out
}
