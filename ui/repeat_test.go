package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/sim"
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
// and says so on the form; a changed field disarms it for good (fields
// that come back do not arm it again). Armed again, it runs once: the
// form is disarmed, the new run's own result shows first (not Compare),
// with a button that compares it with the run it repeated.
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
		if !armed(b) || !strings.Contains(b.kovara.likeLabel.Text, "The next run repeats") {
			t.Errorf("the form does not say which run it repeats: shown %v, %q", b.kovara.likeBar.Visible(), b.kovara.likeLabel.Text)
		}
		b.kovara.requestsEntry.SetText("5")
		if armed(b) {
			t.Errorf("a changed plan still claims to repeat the run")
		}
		b.kovara.requestsEntry.SetText("4")
		if armed(b) {
			t.Errorf("fields that match the run again armed it again")
		}
		test.Tap(hs.likeButton)
		if !armed(b) {
			t.Fatal("Run again like this did not arm the form again")
		}
		test.Tap(b.runButton)
		if armed(b) {
			t.Errorf("the form still repeats the run after Run: it arms one run only")
		}
	})
	h.waitFor("the new run's own result", 60*time.Second, func() bool {
		return b.kovara.compareLike != nil || h.u.tabs.Selected() == h.u.compareTab
	})
	h.locked(func() {
		if b.kovara.compareLike == nil || h.u.tabs.Selected() == h.u.compareTab || b.content.Objects[0] != b.result.content || b.result.id == first {
			t.Fatalf("the new run's own result is not what shows (Compare open %v)", h.u.tabs.Selected() == h.u.compareTab)
		}
		if got := b.kovara.compareLike.Text; !strings.HasPrefix(got, "Compare with ") || b.result.buttons.Objects[0] != b.kovara.compareLike {
			t.Errorf("the result's first button is %q, want Compare with the run repeated", got)
		}
		test.Tap(b.kovara.compareLike)
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
		// The two tiny runs may or may not agree, or be too noisy to tell
		// on a busy machine; the verdict says which (engine/compare's
		// TestReproduction holds the words).
		if v := cs.verdict.Text; !strings.Contains(v, "Reproduced: ") && !strings.Contains(v, "Not reproduced: ") && !strings.Contains(v, "Whether it reproduced cannot be told") {
			t.Errorf("the verdict does not say whether it reproduced:\n%s", v)
		}
		if cs.timeline == nil || len(cs.views.Items) != 3 || cs.views.Items[2].Text != "Timeline" {
			t.Errorf("Compare has no Timeline tab")
		}
	})
}

// armed says whether the form repeats a run, and says so on the form.
func armed(b *BenchmarkScreen) bool {
	return b.kovara.likeFollowed() != nil && b.kovara.likeBar.Visible()
}

// TestRunAgainLikeDisarms: a form that repeats a run stops repeating it
// when the endpoint or the model changes or Cancel is tapped, and is not
// armed again by going back.
func TestRunAgainLikeDisarms(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	id := h.seedRun(url, []int{1, 2}, 8, nil)
	f, err := h.u.lib.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	h.addEndpoint("elsewhere", "http://127.0.0.1:9", "")
	arm := func() {
		t.Helper()
		b.selectEndpoint(SimulatorName)
		if err := b.fillLike(id, "the seeded run", f); err != nil {
			t.Fatal(err)
		}
		if !armed(b) {
			t.Fatalf("not armed after Run again like this (model %q, run's %q)", b.chosenModel(), f.Local.RequestedModel)
		}
	}
	h.locked(func() {
		arm()
		test.Tap(b.kovara.likeCancel)
		if armed(b) || b.kovara.likeBar.Visible() {
			t.Errorf("Cancel left the form repeating the run")
		}

		arm()
		b.selectEndpoint("elsewhere")
		if armed(b) {
			t.Errorf("another endpoint still repeats the run")
		}
		b.selectEndpoint(SimulatorName)
		if armed(b) {
			t.Errorf("going back to the endpoint armed the run again")
		}
	})
	// A saved endpoint serving two models: the run's own is chosen when
	// the listing arrives; choosing the other disarms the form.
	two := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"model-a", "model-b"}})
	h.addEndpoint("two models", two, "")
	for i := range f.Runs {
		f.Runs[i].ModelID = "model-a"
	}
	f.Local.EndpointName = "two models"
	h.locked(func() {
		if err := b.fillLike(id, "the seeded run", f); err != nil {
			t.Fatal(err)
		}
	})
	h.waitFor("the run's model chosen from the listing", 20*time.Second, func() bool { return b.chosenModel() == "model-a" })
	h.locked(func() {
		if b.endpointSelect.Selected != "two models" || !armed(b) {
			t.Fatalf("endpoint %q, armed %v: want the run's endpoint, armed", b.endpointSelect.Selected, armed(b))
		}
		b.modelSelect.SetSelected("model-b")
		if armed(b) {
			t.Errorf("another model still repeats the run")
		}
		b.modelSelect.SetSelected("model-a")
		if armed(b) {
			t.Errorf("going back to the run's model armed it again")
		}
	})
}
