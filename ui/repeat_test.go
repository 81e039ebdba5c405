package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
)

// Repeat 2 runs the plan twice as one group, each run in the history
// with its place in it, and opens Compare on the two.
func TestRepeatRunsAGroupAndCompares(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		h.setPlan("1,2", "4", "8")
		b.kovara.repeatEntry.SetText("11")
		if !b.runButton.Disabled() || !strings.Contains(b.planNote.Text, "give 1 to 10 runs") {
			t.Errorf("repeat 11: run enabled %v, note %q", !b.runButton.Disabled(), b.planNote.Text)
		}
		b.kovara.repeatEntry.SetText("2")
		if b.runButton.Disabled() {
			t.Fatalf("run disabled: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("Compare on the group", 90*time.Second, func() bool {
		return h.u.tabs.Selected() == h.u.compareTab && len(h.u.compareScreen.ids) == 2
	})
	list, err := h.u.lib.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("library %d runs, %v", len(list), err)
	}
	var places []string
	for _, s := range list {
		places = append(places, s.Group)
		if s.GroupID == "" || s.GroupID != list[0].GroupID {
			t.Errorf("group ids %q and %q: one group", s.GroupID, list[0].GroupID)
		}
		if got := historyCell(s, 5, nil); !strings.HasSuffix(got, ", run "+s.Group) {
			t.Errorf("history kind %q does not say its place %q", got, s.Group)
		}
	}
	if !(places[0] == "1 of 2" && places[1] == "2 of 2") && !(places[0] == "2 of 2" && places[1] == "1 of 2") {
		t.Errorf("places %v, want 1 of 2 and 2 of 2", places)
	}
}

// Run again like this fills the form with the run's plan, a fresh seed,
// runs it, records which run it followed and opens Compare on both; a
// changed field makes it a plan of its own.
func TestRunAgainLikeThis(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		h.setPlan("2,1", "4", "8")
		b.kovara.seedEntry.SetText("42")
		test.Tap(b.runButton)
	})
	h.waitFor("the first result", 60*time.Second, func() bool { return b.result != nil })
	h.addEndpoint("elsewhere", "http://127.0.0.1:9", "")
	var first string
	h.locked(func() {
		b.selectEndpoint("elsewhere")
		first = b.result.id
		hs := h.u.historyScreen
		hs.reload()
		hs.preselect(first)
		if hs.likeButton.Disabled() {
			t.Fatal("Run again like this is disabled with one Kovara run selected")
		}
		// The form is changed first: the button must bring the run's plan back.
		h.setPlan("8", "16", "32")
		test.Tap(hs.likeButton)
		if h.u.tabs.SelectedIndex() != 0 || b.content.Objects[0] != b.setup {
			t.Fatal("the Benchmark form is not showing")
		}
		if b.endpointSelect.Selected != SimulatorName {
			t.Errorf("endpoint %q, want the run's own %q", b.endpointSelect.Selected, SimulatorName)
		}
		if b.kovara.levelsEntry.Text != "2,1" || b.kovara.requestsEntry.Text != "4" || b.kovara.outputEntry.Text != "8" || b.kovara.inputEntry.Text != "64" ||
			b.kovara.warmupEntry.Text != "1" || b.kovara.seedEntry.Text != "" {
			t.Errorf("form: levels %q requests %q output %q input %q warmup %q seed %q", b.kovara.levelsEntry.Text, b.kovara.requestsEntry.Text,
				b.kovara.outputEntry.Text, b.kovara.inputEntry.Text, b.kovara.warmupEntry.Text, b.kovara.seedEntry.Text)
		}
		if !strings.Contains(b.planNote.Text, "Runs again like") {
			t.Errorf("note %q does not say which run it follows", b.planNote.Text)
		}
		b.kovara.requestsEntry.SetText("5")
		if strings.Contains(b.planNote.Text, "Runs again like") {
			t.Errorf("a changed plan still claims to follow the run: %q", b.planNote.Text)
		}
		b.kovara.requestsEntry.SetText("4")
		test.Tap(b.runButton)
	})
	h.waitFor("Compare on both", 60*time.Second, func() bool {
		return h.u.tabs.Selected() == h.u.compareTab && len(h.u.compareScreen.ids) == 2
	})
	list, err := h.u.lib.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("library %d runs, %v", len(list), err)
	}
	again := list[0].ID
	if again == first {
		again = list[1].ID
	}
	f, err := h.u.lib.Load(again)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := h.u.lib.Load(first)
	if f.Local.Like == nil || f.Local.Like.ID != first || f.Local.Like.CreatedAt != orig.CreatedAt {
		t.Errorf("like %+v, want %s", f.Local.Like, first)
	}
	if f.Runs[0].Seed == orig.Runs[0].Seed || f.Runs[0].Concurrency != 2 {
		t.Errorf("seed %d (first %d), levels from %d: want a fresh seed and the first's levels", f.Runs[0].Seed, orig.Runs[0].Seed, f.Runs[0].Concurrency)
	}
	if ids := h.u.compareScreen.ids; !(ids[0] == first || ids[1] == first) {
		t.Errorf("Compare shows %v, not the run followed", ids)
	}
	h.locked(func() {
		cs := h.u.compareScreen
		// The two tiny runs may or may not agree; the verdict says which
		// (engine/compare's TestReproduction holds the words).
		if v := cs.verdict.Text; !strings.Contains(v, "Reproduced: ") && !strings.Contains(v, "Not reproduced: ") {
			t.Errorf("the verdict does not say whether it reproduced:\n%s", v)
		}
		if cs.timeline == nil || len(cs.views.Items) != 3 || cs.views.Items[2].Text != "Timeline" {
			t.Errorf("Compare has no Timeline tab")
		}
	})
}
