package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// TestHistoryListsTraces: History's Recorded traces lists each trace in
// the data folder's traces folder with its figures — a cut one with its
// note, a file that is no trace with why — and a trace recorded since
// appears when History is shown again; one selected is exported as it
// is, and Replay… fills the rate form with it.
func TestHistoryListsTraces(t *testing.T) {
	h := newHarness(t)
	data := h.u.opts.Dirs.Data
	path := recordedTrace(t, data)
	dir := storage.TracesDir(data)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte("milk\neggs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "notes.jsonl"), old.Add(-time.Hour), old.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	hs := h.u.historyScreen
	p := hs.traces
	h.locked(func() {
		h.u.tabs.SelectIndex(1)
		test.Tap(hs.tracesButton)
	})
	h.waitFor("the traces", 10*time.Second, func() bool { return p.loaded })
	h.locked(func() {
		if len(p.list) != 2 {
			t.Fatalf("%d traces listed, want 2", len(p.list))
		}
		// Last request is the trace's own last arrival (09:32 that
		// morning), not the file's time.
		want := []string{"☐", filepath.Base(path), "2025-05-06 09:32", "3", "2 min", "9,700", "430", "qwen3-8b, llama-3.1-8b", "1", ""}
		for col, w := range want {
			if got := traceCell(p.list[0], col, ""); got != w {
				t.Errorf("the trace's %q column says %q, want %q", tracesColumns[col], got, w)
			}
		}
		if got := traceCell(p.list[1], 9, ""); !strings.HasPrefix(got, "cannot be read: line 1: not a trace") {
			t.Errorf("the file that is no trace: %q", got)
		}
		if got := traceCell(p.list[1], 3, ""); got != "" {
			t.Errorf("the file that is no trace counts %q requests", got)
		}
		if !p.replayButton.Disabled() || !p.exportButton.Disabled() {
			t.Error("Replay or Export on with nothing selected")
		}
		if !strings.HasPrefix(p.status.Text, "2 traces in "+dir) {
			t.Errorf("status %q", p.status.Text)
		}
		p.table.OnSelected(widget.TableCellID{Row: 1, Col: 1})
		if !p.replayButton.Disabled() || p.status.Importance != widget.WarningImportance || !strings.Contains(p.status.Text, "notes.jsonl cannot be read") {
			t.Errorf("the file that is no trace selected: Replay on %v, status %q", !p.replayButton.Disabled(), p.status.Text)
		}
		p.table.OnSelected(widget.TableCellID{Row: 0, Col: 3})
		if p.replayButton.Disabled() || p.exportButton.Disabled() {
			t.Fatal("Replay or Export off for a trace selected")
		}
		if want := filepath.Base(path) + ": 3 requests (1 failed) over 2 min, 9,700 tokens in and 430 out, qwen3-8b and llama-3.1-8b."; p.status.Text != want {
			t.Errorf("status %q\nwant   %q", p.status.Text, want)
		}
	})

	// Export… writes the trace as it is.
	out := t.TempDir()
	h.locked(func() {
		name, got := h.savedFile(p.exportButton, out)
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if name != filepath.Base(path) || string(got) != string(orig) {
			t.Errorf("exported %s (%d bytes), want %s as it is (%d bytes)", name, len(got), filepath.Base(path), len(orig))
		}
	})

	// A trace recorded meanwhile (cut by a recorder killed) appears when
	// History is shown again.
	cut := filepath.Join(dir, "trace-cut.jsonl")
	if err := os.WriteFile(cut, []byte(`{"timestamp":0,"input_length":10,"output_length":5}`+"\n"+`{"timestamp":900,"input_len`), 0o600); err != nil {
		t.Fatal(err)
	}
	h.locked(func() {
		h.u.tabs.SelectIndex(3)
		h.u.tabs.SelectIndex(1)
	})
	h.waitFor("the new trace", 10*time.Second, func() bool { return len(p.list) == 3 })
	h.locked(func() {
		if p.list[0].Name != "trace-cut.jsonl" || !strings.Contains(traceCell(p.list[0], 9, ""), "last line was cut") || traceCell(p.list[0], 3, "") != "1" {
			t.Errorf("the newest trace: %+v, note %q", p.list[0], traceCell(p.list[0], 9, ""))
		}
		if p.summary() == nil || p.summary().Path != path {
			t.Error("the selection was lost when the list was read again")
		}

		// Replay… goes to the rate form with the trace in it.
		test.Tap(p.replayButton)
		b := h.u.bench
		if h.u.tabs.SelectedIndex() != 0 || b.kind().ID != results.PlanRate {
			t.Fatalf("after Replay…: tab %d, plan %q", h.u.tabs.SelectedIndex(), b.kind().ID)
		}
		f := b.rateFormOf()
		if f.traceEntry.Text != path || !f.section.Items[0].Open {
			t.Errorf("the rate form's trace %q (unfolded %v), want %s", f.traceEntry.Text, f.section.Items[0].Open, path)
		}
		if !strings.HasPrefix(b.planNote.Text, "Replay: the 3 requests of "+filepath.Base(path)) || b.runButton.Disabled() {
			t.Errorf("under the plan: %q (Run off %v)", b.planNote.Text, b.runButton.Disabled())
		}

		// With Compare settings chosen, Replay… fills its trace instead:
		// each setting replays it.
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		h.u.tabs.SelectIndex(1)
		test.Tap(p.replayButton)
		if h.u.tabs.SelectedIndex() != 0 || b.kind().ID != results.PlanTune || b.tune.traceEntry.Text != path || !b.tune.section.Items[0].Open {
			t.Errorf("Replay… with Compare settings chosen: tab %d, plan %q, its trace %q", h.u.tabs.SelectedIndex(), b.kind().ID, b.tune.traceEntry.Text)
		}

		// Back in History, Back to runs shows the runs.
		h.u.tabs.SelectIndex(1)
		test.Tap(p.backButton)
		if hs.tracesShown || hs.content.Objects[0] != hs.list {
			t.Error("Back to runs left the traces shown")
		}
	})
}

// TestHistoryTracesNone: with nothing recorded, the traces say how to
// record.
func TestHistoryTracesNone(t *testing.T) {
	h := newHarness(t)
	p := h.u.historyScreen.traces
	h.locked(func() { test.Tap(h.u.historyScreen.tracesButton) })
	h.waitFor("the traces", 10*time.Second, func() bool { return p.loaded })
	h.locked(func() {
		if len(p.list) != 0 || !strings.HasPrefix(p.status.Text, "No traces yet. Record your own traffic under Endpoints") {
			t.Errorf("%d traces, status %q", len(p.list), p.status.Text)
		}
	})
}
