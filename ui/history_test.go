package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
	"github.com/kovara/desktop/storage"
)

// seedRun makes a real run against the simulator and saves it in the
// harness's library.
func (h *harness) seedRun(url string, levels []int, output int, mutate func(*results.File)) string {
	h.t.Helper()
	p := setup.DefaultPlan()
	p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 32, output, levels, 8, 0
	f, err := engine.Run(context.Background(), p, setup.Endpoint{URL: url, Name: "sim box"}, engine.Observer{})
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
		// Whether a difference is coloured depends on the noise of these
		// tiny runs: TestCompareColoursOnlyChangesBeyondNoise holds that.
		var gaps int
		for _, row := range cs.rows {
			for col := 2; col < 5; col++ {
				if text, _ := compareCell(row, col); text == "—" {
					gaps++
				}
			}
		}
		if gaps == 0 {
			t.Errorf("compare table: no gaps, want level 4 empty for two runs")
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
	})
	h.waitFor("the import", 30*time.Second, func() bool { return !hs.importing })
	h.locked(func() {
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

// seedEveryKind saves a run of each kind the library holds, with the long
// names a real llama-server gives (the model file, a build and commit as
// the version), and returns their ids by kind.
func (h *harness) seedEveryKind(url string) map[string]string {
	h.t.Helper()
	const model, family, version = "Qwen3-30B-A3B-Instruct-2507-Q4_K_M", "llama.cpp", "b9749-d32676d77"
	kovara := func(kind string) func(*results.File) {
		return func(f *results.File) {
			f.Local.EndpointName = "lab box"
			for i := range f.Runs {
				f.Runs[i].ModelID, f.Runs[i].RunKind = model, kind
				f.Runs[i].Engine, f.Runs[i].EngineVersion = ptrTo(family), ptrTo(version)
			}
		}
	}
	ids := map[string]string{
		results.RunKindProtocol: h.seedRun(url, []int{1, 2}, 8, kovara(results.RunKindProtocol)),
		results.RunKindHardware: h.seedRun(url, []int{1, 2, 4}, 8, kovara(results.RunKindHardware)),
	}
	created := time.Now().UTC().Format(time.RFC3339)
	engine := results.Detection{Family: family, Version: version}
	local := results.PlanLocal{EndpointName: "lab box", Endpoint: "http://10.0.0.7:8080"}
	save := func(kind string, id string, err error) {
		if err != nil {
			h.t.Fatal(err)
		}
		ids[kind] = id
	}
	id, err := h.u.lib.SaveDoc("", plans.NewStages(&results.StagesResult{Format: results.FormatStages, FormatVersion: 1, CreatedAt: created,
		Model: model, Engine: engine, Complete: true, Local: local, Users: &results.UsersStage{Users: 4}}))
	save(results.PlanStages, id, err)
	id, err = h.u.lib.SaveDoc("", plans.NewSpecDec(&results.SpecDecResult{PlanHeader: results.PlanHeader{Format: results.FormatSpecDec, FormatVersion: 1, CreatedAt: created, Model: model, Complete: true}, Engine: engine, Local: local, Levels: []results.SpecDecLevel{{Concurrency: 1}, {Concurrency: 4}}}))
	save(results.PlanSpecDec, id, err)
	c := planstest.LlamaCapacity(h.t)
	c.Local.EndpointName = "lab box"
	id, err = h.u.lib.SaveDoc("", plans.NewCapacity(c))
	save(results.PlanCapacity, id, err)
	cx := planstest.LlamaContext(h.t)
	cx.Local.EndpointName, cx.Model = "lab box", model
	id, err = h.u.lib.SaveDoc("", plans.NewContext(cx))
	save(results.PlanContext, id, err)
	id, err = h.u.lib.SaveDoc("", rateDoc(local, model))
	save(results.PlanRate, id, err)
	tr := planstest.Tune(false)
	tr.Local.PlanLocal, tr.Model = local, model
	id, err = h.u.lib.SaveDoc("", plans.NewTune(tr))
	save(results.PlanTune, id, err)
	ar := planstest.Answers(false)
	ar.Local.PlanLocal, ar.Model, ar.Baseline.Model = local, model, model
	id, err = h.u.lib.SaveDoc("", plans.NewAnswers(ar))
	save(results.PlanAnswers, id, err)
	return ids
}

func ptrTo[T any](v T) *T { return &v }

// rateDoc is planstest's clean rate result, of model on local's endpoint.
func rateDoc(local results.PlanLocal, model string) plans.Doc {
	for _, c := range planstest.Cases() {
		if c.Doc.Kind().ID == results.PlanRate && !c.Failed {
			r := plans.ResultOf[*results.RateResult](c.Doc)
			r.Local, r.Model = local, model
			return c.Doc
		}
	}
	panic("planstest has no clean rate result")
}

// TestHistoryFilterListsEveryKind: the kind filter offers every kind the
// library holds, each shows only its runs, and the Kind column names
// them as the filter does.
func TestHistoryFilterListsEveryKind(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ids := h.seedEveryKind(url)
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		want := []string{kindAll, "hardware", "protocol", "three stages", "spec decoding", "capacity", "context", "rate", "settings", "answers"}
		if got := hs.kindSelect.Options; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("kind filter offers %q, want %q", got, want)
		}
		for _, k := range storage.RunKinds {
			hs.kindSelect.SetSelected(k.Name)
			if len(hs.shown) != 1 || hs.shown[0].ID != ids[k.Kind] {
				t.Errorf("filter %q shows %d runs, want only %s", k.Name, len(hs.shown), ids[k.Kind])
				continue
			}
			if got := historyCell(hs.shown[0], 5, nil); !strings.HasPrefix(got, k.Name) {
				t.Errorf("filter %q: Kind column says %q", k.Name, got)
			}
		}
		hs.kindSelect.SetSelected(kindAll)
		if len(hs.shown) != len(storage.RunKinds) {
			t.Errorf("all kinds: %d shown, want %d", len(hs.shown), len(storage.RunKinds))
		}
	})
}

// TestHistoryTableFitsTheWindow: at the default window size every
// History column is on screen, none cut below its content up to the cap
// and none running into the next (the long engine version among them);
// at 1024×640 too every column is on screen, each heading whole and each
// value readable — whole, or at least lastWidth of it before its "…"
// (the Label column was past the window's edge); the screen fits a
// 1024×640 window.
func TestHistoryTableFitsTheWindow(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ids := h.seedEveryKind(url)
	h.u.lib.SetAnnotation(ids[results.RunKindProtocol], storage.Annotation{Label: "after the driver update"})
	h.u.lib.SetAnnotation(ids[results.RunKindHardware], storage.Annotation{Label: "4090 box, power limit 300 W, flash attention on"})
	hs := h.u.historyScreen
	for _, size := range []fyne.Size{{Width: 1180, Height: 800}, minWindowSize} {
		h.locked(func() {
			h.win.Resize(size)
			h.u.tabs.SelectIndex(1)
			hs.reload()
			tb := hs.table
			if got, room := tb.width(), tb.Size().Width; got > room {
				t.Errorf("at %v the columns take %.1f px, the table has %.1f: some are off screen", size, got, room)
			}
			keep := keepWidth
			if size == minWindowSize {
				keep = lastWidth - 2*tb.inset
			}
			for i, c := range historyColumns {
				var content float32
				for _, s := range hs.all {
					content = max(content, widget.NewLabel(historyCell(s, i, hs.selected)).MinSize().Width-2*tb.inset)
				}
				if want := min(content, keep); tb.widths[i]+0.5 < want {
					t.Errorf("at %v column %q is %.1f px, its content needs %.1f", size, c, tb.widths[i], want)
				}
			}
			if d := widget.NewLabel("2026-05-01 14:03").MinSize().Width - 2*tb.inset; tb.widths[1] < d {
				t.Errorf("at %v the date column is %.1f px, a date needs %.1f", size, tb.widths[1], d)
			}
			assertNothingOverflows(t, "History", tb)
			for _, l := range tableLabels(t, tb) {
				if l.TextStyle.Bold && strings.HasSuffix(l.Text, "…") {
					t.Errorf("at %v the heading %q is cut", size, l.Text)
				}
			}
			if got := cellText(t, tb, "llama.cpp b9749-d32676d77"); !strings.HasPrefix(got, "llama.cpp b") {
				t.Errorf("at %v the engine shows as %q", size, got)
			}
			if got := cellText(t, tb, "4090 box, power limit 300 W, flash attention on"); !strings.HasPrefix(got, "4090 box") {
				t.Errorf("at %v the label shows as %q", size, got)
			}
			assertFits(t, "History", hs.content)
		})
	}
}

// assertFits fails when o needs more than a 1024×640 window leaves for a
// place (its tabs and the window's frame take the rest).
func assertFits(t *testing.T, what string, o fyne.CanvasObject) {
	t.Helper()
	if got := o.MinSize(); got.Width > 1000 || got.Height > 590 {
		t.Errorf("%s needs %.0f×%.0f px, more than a 1024×640 window leaves (1000×590)", what, got.Width, got.Height)
	}
}

// TestHistoryDeleteNamesTheRuns: the delete confirmation names each run
// it deletes (date, model, endpoint, kind), a few of them and how many
// more; Keep deletes nothing, and the status counts "1 run".
func TestHistoryDeleteNamesTheRuns(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ids := h.seedEveryKind(url)
	os.WriteFile(filepath.Join(h.u.lib.Dir(), "mangled.json"), []byte("{not json"), 0o644)
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		for _, s := range hs.all {
			hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
		}
		test.Tap(hs.deleteButton)
		text := test.RenderObjectToMarkup(h.win.Canvas().Overlays().Top())
		n := len(ids) + 1 // every kind's run and the unreadable file
		if !strings.Contains(text, fmt.Sprintf("Delete these %d runs from the history?", n)) {
			t.Errorf("the confirmation does not count %d runs:\n%s", n, text)
		}
		first := hs.all[0]
		if line := "• " + historyCell(first, 1, nil) + " · Qwen3-30B-A3B-Instruct-2507-Q4_K_M · lab box · " + storage.KindName(first.RunKind); !strings.Contains(text, line) {
			t.Errorf("the confirmation lacks %q", line)
		}
		if got := strings.Count(text, "• "); got != deleteNamed {
			t.Errorf("%d runs named, want %d", got, deleteNamed)
		}
		if !strings.Contains(text, fmt.Sprintf("and %d more", n-deleteNamed)) {
			t.Error("the confirmation does not say how many more")
		}
		h.tapInOverlay("Keep")
		if len(hs.all) != n {
			t.Fatalf("Keep deleted runs: %d left", len(hs.all))
		}

		// One run, then the unreadable file: each named.
		hs.selected = map[string]bool{}
		hs.table.Select(widget.TableCellID{Row: h.rowOf(ids[results.PlanStages]), Col: 0})
		test.Tap(hs.deleteButton)
		text = test.RenderObjectToMarkup(h.win.Canvas().Overlays().Top())
		if !strings.Contains(text, "Delete this run from the history?") || strings.Count(text, "• ") != 1 || !strings.Contains(text, "Qwen3-30B-A3B-Instruct-2507-Q4_K_M · lab box · three stages") {
			t.Errorf("one run's confirmation:\n%s", text)
		}
		h.tapInOverlay("Delete")
		hs.selected = map[string]bool{}
		hs.table.Select(widget.TableCellID{Row: h.rowOf("mangled"), Col: 0})
		test.Tap(hs.deleteButton)
		if text := test.RenderObjectToMarkup(h.win.Canvas().Overlays().Top()); !strings.Contains(text, "• mangled · unreadable file") {
			t.Errorf("the unreadable file's confirmation:\n%s", text)
		}
		h.tapInOverlay("Delete")
		if len(hs.all) != n-2 {
			t.Errorf("after two deletes %d runs, want %d", len(hs.all), n-2)
		}
	})
	// "1 run", not "1 runs".
	h.locked(func() {
		for _, s := range hs.all[1:] {
			h.u.lib.Delete(s.ID)
		}
		hs.selected = map[string]bool{}
		hs.reload()
		if want := "1 run, 1 shown. "; !strings.HasPrefix(hs.status.Text, want) {
			t.Errorf("status %q, want it to start %q", hs.status.Text, want)
		}
	})
}

// TestImportAFolder drops a folder of results files on the window: the
// import runs in the background with a bar that counts the files, and
// ends with how many were imported and which could not be read.
func TestImportAFolder(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := h.seedRun(url, []int{1}, 4, nil)
	src := t.TempDir()
	data, err := os.ReadFile(h.u.lib.Path(a))
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := 0; i < n; i++ {
		// Distinct bytes, the same run: whitespace at the end.
		os.WriteFile(filepath.Join(src, fmt.Sprintf("run-%02d.json", i)), append(data, strings.Repeat(" ", i+1)...), 0o644)
	}
	os.WriteFile(filepath.Join(src, "copy.json"), data, 0o644)
	os.WriteFile(filepath.Join(src, "broken.json"), []byte("{"), 0o644)
	hs := h.u.historyScreen
	h.locked(func() {
		h.u.tabs.SelectIndex(0)
		hs.onDropped(fyne.Position{}, []fyne.URI{fstorage.NewFileURI(src)})
		// The last step of the import waits for the UI: it cannot have
		// ended yet.
		if h.u.tabs.SelectedIndex() != 1 || !hs.importing || hs.importBar.Hidden || hs.importBar.Max != n+2 {
			t.Fatalf("import of a folder: tab %d, importing %v, bar hidden %v of %v", h.u.tabs.SelectedIndex(), hs.importing, hs.importBar.Hidden, hs.importBar.Max)
		}
		if got := hs.status.Text; got != "Importing 42 files…" {
			t.Errorf("status while importing: %q", got)
		}
		hs.importFiles([]string{src})
		if !strings.HasPrefix(hs.status.Text, "An import is running") {
			t.Errorf("a second import while one runs: %q", hs.status.Text)
		}
	})
	h.waitFor("the import", 30*time.Second, func() bool { return !hs.importing })
	h.locked(func() {
		want := "40 imported, 1 already in the library, 1 unreadable: broken.json cannot be imported"
		if !strings.HasPrefix(hs.status.Text, want) || !hs.importBar.Hidden || len(hs.all) != n+1 {
			t.Errorf("after the import: %q (want %q…), bar hidden %v, %d runs", hs.status.Text, want, hs.importBar.Hidden, len(hs.all))
		}
	})
}

// rowPoint is a point inside row's Date cell of a laid-out table, where a
// pointer would be.
func rowPoint(tb *fitTable, row int) fyne.Position {
	pad := theme.Padding()
	h := tb.CreateCell().MinSize().Height
	return fyne.NewPos(tb.widths[0]+pad+10, tb.headHeight+pad+float32(row)*(h+pad)+h/2)
}

// TestHistoryDoubleTapOpens: a double click on a row, or Enter on the
// highlighted one, opens it as Open does — an ordinary run its result, a
// settings comparison its verdict page — with no row selected first and
// the selection left as it was; the heading row opens nothing.
func TestHistoryDoubleTapOpens(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	run := h.seedRun(url, []int{1}, 4, nil)
	tr := planstest.Tune(false)
	tr.CreatedAt = time.Now().Add(time.Hour).UTC().Format(time.RFC3339) // newest: the first row
	tune, err := h.u.lib.SaveDoc("", plans.NewTune(tr))
	if err != nil {
		t.Fatal(err)
	}
	hs := h.u.historyScreen
	h.locked(func() {
		h.win.Resize(fyne.NewSize(1180, 800))
		h.u.tabs.SelectIndex(1)
		hs.reload()
		if h.rowOf(tune) != 0 || h.rowOf(run) != 1 {
			t.Fatalf("rows: comparison %d, run %d", h.rowOf(tune), h.rowOf(run))
		}
		test.DoubleTap(hs.table) // on the headings
		if hs.opened != nil || hs.openedOther {
			t.Fatal("a double tap on the headings opened a run")
		}

		hs.table.DoubleTapped(&fyne.PointEvent{Position: rowPoint(hs.table, h.rowOf(run))})
		if hs.opened == nil || hs.opened.id != run || len(hs.content.Objects) != 1 || hs.content.Objects[0] == hs.list {
			t.Fatalf("a double tap on the run's row did not open it: %+v", hs.opened)
		}
		if len(hs.selected) != 0 {
			t.Errorf("opening selected %v", hs.selected)
		}
		hs.closeRun()

		h.u.tuneView = nil
		hs.table.DoubleTapped(&fyne.PointEvent{Position: rowPoint(hs.table, h.rowOf(tune))})
		if !hs.openedOther || h.u.tuneView == nil || hs.content.Objects[0] == hs.list {
			t.Fatal("a double tap on the comparison's row did not open its verdict page")
		}
		hs.closeRun()

		// The keyboard: Down from the first row's highlight, then Enter.
		hs.table.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown})
		hs.table.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
		if hs.opened == nil || hs.opened.id != run {
			t.Fatalf("Enter on the run's row did not open it: %+v", hs.opened)
		}
		hs.closeRun()

		// A single tap still only ticks the row's box.
		test.TapAt(hs.table, rowPoint(hs.table, h.rowOf(run)))
		if hs.opened != nil || !hs.selected[run] {
			t.Errorf("a single tap: opened %v, selected %v", hs.opened != nil, hs.selected)
		}
	})
}

// TestOpenedRunsNameTheModelFile: every plan a real llama-server ran
// without --alias, whose model id is its model file's whole path, opens
// from History under the file's base name (as History, Compare and every
// published file name it): no screen of it shows the folder.
func TestOpenedRunsNameTheModelFile(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name string
		doc  plans.Doc
		// file is the model's base name as the run's screen shows it;
		// "" where the screen names the settings, not the model.
		file, path string
	}{
		{"kovara", plans.Kovara{File: planstest.LlamaKovara(t)}, "tiny.gguf", "/work/servers/models/tiny.gguf"},
		{"stages", plans.NewStages(planstest.LlamaStages(t)), "tiny.gguf", "/work/servers/models/tiny.gguf"},
		{"specdec", plans.NewSpecDec(planstest.LlamaSpecDec(t)), "tiny.gguf", "/work/servers/models/tiny.gguf"},
		{"capacity", plans.NewCapacity(planstest.LlamaCapacity(t)), "tiny.gguf", "models/tiny.gguf"},
		{"context", plans.NewContext(planstest.LlamaContext(t)), "tiny2.gguf", "/work/srv/model/tiny2.gguf"},
		{"rate", plans.NewRate(planstest.LlamaRate(t)), "tiny.gguf", "/work/servers/models/tiny.gguf"},
		{"tune", plans.NewTune(planstest.LlamaTune(t)), "", "/work/servers/models/tiny.gguf"},
	}
	for _, tt := range tests {
		id, err := h.u.lib.SaveDoc("", tt.doc)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		h.locked(func() {
			h.u.historyScreen.open(id)
			windowTexts(t, h.u.historyScreen.content, nil, &texts)
		})
		all := strings.Join(texts, "\n")
		if strings.Contains(all, tt.path) {
			t.Errorf("%s: the opened run shows the model file's path %q", tt.name, tt.path)
		}
		if !strings.Contains(all, tt.file) {
			t.Errorf("%s: the opened run never names the model %s", tt.name, tt.file)
		}
	}
}
