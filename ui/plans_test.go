package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

func TestStagesPlanRunViewCopyHistoryCompare(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	run := func() {
		h.locked(func() {
			b.selectEndpoint(SimulatorName)
			b.planSelect.SetSelected(planStages)
			b.stages.quickCheck.SetChecked(true)
			b.stages.usersEntry.SetText("4")
			if b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "Three stages (quick") {
				t.Fatalf("stages plan: %q", b.planNote.Text)
			}
			if b.formBox.Objects[0] != b.stages.content() {
				t.Error("the three-stage plan's own form is not shown")
			}
			test.Tap(b.runButton)
		})
		h.waitFor("the three-stage result", 120*time.Second, func() bool { return b.running == nil && b.shownResult })
	}
	run()
	var view fyne.CanvasObject
	h.locked(func() {
		view = b.content.Objects[0]
		text := test.RenderObjectToMarkup(view)
		for _, want := range []string{"1 user, code prompt (decode_single)", "cold prefill", "4 users at once", "|decode_single="} {
			if !strings.Contains(text, want) {
				t.Errorf("stages view lacks %q", want)
			}
		}
		copyButton := findButton(t, view, "Copy wiki block")
		if copyButton == nil {
			t.Fatal("no Copy button")
		}
		test.Tap(copyButton)
		if clip := h.u.fyne.Clipboard().Content(); !strings.Contains(clip, "|decode_agg=") || !strings.Contains(clip, "QUICK RUN") {
			t.Errorf("clipboard: %q", clip)
		}
		test.Tap(findButton(t, view, "New benchmark"))
	})
	run()
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		stages := 0
		for _, s := range hs.all {
			if s.Plan == results.PlanStages {
				stages++
				hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
			}
		}
		if stages != 2 {
			t.Fatalf("history holds %d three-stage results", stages)
		}
		test.Tap(hs.compareButton)
		cs := h.u.compareScreen
		if h.u.tabs.Selected() != h.u.compareTab || len(cs.rows) == 0 || !strings.Contains(cs.verdict.Text, "same thing") {
			t.Errorf("stages compare: %d rows, verdict %q", len(cs.rows), cs.verdict.Text)
		}
		// Open one from History.
		hs.open(hs.selectedIDs()[0])
		if !hs.openedOther {
			t.Error("opening a three-stage result should show its view")
		}
	})
}

// TestSpecDecPlanRun runs the speculative-decoding plan from the Benchmark
// screen against a server that drafts 3 tokens and accepts every one, and
// reads the Acceptance cell of each level in the result's table: the
// server's counters said 100 %, so each cell must say so.
func TestSpecDecPlanRun(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, SpecDecode: &sim.SpecDecode{DraftTokens: 3, Acceptance: 1}})
	if err := h.u.endpoints.Put(storage.SavedEndpoint{Name: "drafting", URL: url, VerifyTLS: true}, ""); err != nil {
		t.Fatal(err)
	}
	b := h.u.bench
	h.locked(func() {
		b.refreshEndpoints()
		b.selectEndpoint("drafting")
		b.planSelect.SetSelected(planSpecDec)
		b.specDec.levelsEntry.SetText("1,2")
		b.specDec.requestsEntry.SetText("4")
		b.specDec.outputEntry.SetText("32")
		if b.runButton.Disabled() {
			t.Fatalf("specdec: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the speculative-decoding result", 60*time.Second, func() bool { return b.running == nil && b.shownResult })
	h.locked(func() {
		view := b.content.Objects[0]
		if text := test.RenderObjectToMarkup(view); !strings.Contains(text, "never be published") {
			t.Errorf("the speculative-decoding view does not say it can never be published")
		}
		tb := findFitTable(t, view)
		if tb == nil {
			t.Fatal("the speculative-decoding view shows no table")
		}
		col := slices.Index(tb.columns, "Acceptance")
		rows, _ := tb.Length()
		if col < 0 || rows != 2 {
			t.Fatalf("table of %d rows, columns %q: want 2 levels and an Acceptance column", rows, tb.columns)
		}
		for r := range rows {
			if got, want := tb.text(r, col), "100.0 %"; got != want {
				t.Errorf("level %s: acceptance %q, want %q", tb.text(r, 0), got, want)
			}
		}
	})
	list, _ := h.u.lib.List()
	if len(list) != 1 || list[0].Plan != results.PlanSpecDec || len(list[0].Levels) != 2 {
		t.Errorf("library: %+v", list)
	}
}

// findFitTable returns the first result table in o's tree.
func findFitTable(t *testing.T, o fyne.CanvasObject) *fitTable {
	switch x := o.(type) {
	case *fitTable:
		return x
	case *fyne.Container:
		for _, c := range x.Objects {
			if tb := findFitTable(t, c); tb != nil {
				return tb
			}
		}
	case fyne.Widget:
		for _, c := range test.TempWidgetRenderer(t, x).Objects() {
			if tb := findFitTable(t, c); tb != nil {
				return tb
			}
		}
	}
	return nil
}

// Each plan keeps its own lengths, levels and requests in its own form:
// switching plans shows the new plan's (its defaults at first), never the
// previous one's, and switching back gives back what was typed.
func TestPlanFormKeepsEachPlansFields(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.planSelect.SetSelected(planKovara)
		b.kovara.levelsEntry.SetText("1,2")
		b.kovara.outputEntry.SetText("64")
		b.planSelect.SetSelected(planSpecDec)
		if b.formBox.Objects[0] != b.specDec.content() || b.specDec.levelsEntry.Text != "1,4,16" || b.specDec.outputEntry.Text != "512" || b.specDec.requestsEntry.Text != "" {
			t.Errorf("speculative decoding shows levels %q, output %q, requests %q; want its own defaults",
				b.specDec.levelsEntry.Text, b.specDec.outputEntry.Text, b.specDec.requestsEntry.Text)
		}
		if b.runButton.Disabled() || !strings.Contains(b.planNote.Text, "3 levels") {
			t.Errorf("speculative decoding with its defaults: %q", b.planNote.Text)
		}
		b.planSelect.SetSelected(planCapacity)
		if b.capacity.outputEntry.Text != "256" || b.capacity.inputEntry.Text != "1024" {
			t.Errorf("capacity shows output %q input %q", b.capacity.outputEntry.Text, b.capacity.inputEntry.Text)
		}
		b.planSelect.SetSelected(planKovara)
		if b.formBox.Objects[0] != b.kovara.content() || b.kovara.levelsEntry.Text != "1,2" || b.kovara.outputEntry.Text != "64" || b.kovara.requestsEntry.Text != "100" {
			t.Errorf("back to Kovara: levels %q output %q requests %q", b.kovara.levelsEntry.Text, b.kovara.outputEntry.Text, b.kovara.requestsEntry.Text)
		}
	})
}

// The built-in simulator's speculative-decoding demo drafts, as the CLI's
// demo does (plans.Kind.Demo): its result shows an acceptance rate.
func TestSpecDecDemoShowsAcceptance(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		b.planSelect.SetSelected(planSpecDec)
		b.specDec.levelsEntry.SetText("1,2")
		b.specDec.requestsEntry.SetText("4")
		b.specDec.outputEntry.SetText("48")
		test.Tap(b.runButton)
	})
	h.waitFor("the speculative-decoding result", 60*time.Second, func() bool { return b.running == nil && b.shownResult })
	list, _ := h.u.lib.List()
	if len(list) != 1 {
		t.Fatalf("library %+v", list)
	}
	r, err := storage.LoadAs[plans.SpecDec](h.u.lib, list[0].ID)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for _, row := range r.Result.Table().Rows {
		if acc := row[5]; acc == results.Missing || !strings.HasSuffix(acc, " %") {
			t.Errorf("level %s: acceptance %q, want a rate", row[0], acc)
		}
	}
}

// TestPlansTimeOutAsTheirKindSays: each plan's form starts from its own
// per-request timeout (plans.Kind.Timeout), kept per plan like its
// lengths. The form sent its 120 s to the three-stage plan, where a
// CPU-only server at 6 tok/s needs 170 s for one 1,024-token answer: in
// the app every decode request timed out while the CLI ran it.
func TestPlansTimeOutAsTheirKindSays(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	slowAnswer := 1024 * 160 * time.Millisecond // 6 tok/s, --token-interval 160ms
	h.locked(func() {
		timeouts := map[string]*formEntry{
			results.PlanKovara: b.kovara.timeoutEntry, results.PlanStages: b.stages.timeoutEntry,
			results.PlanSpecDec: b.specDec.timeoutEntry, results.PlanCapacity: b.capacity.timeoutEntry,
			results.PlanContext: b.context.timeoutEntry, results.PlanTune: b.tune.timeoutEntry,
			results.PlanRate: b.forms[results.PlanRate].(*rateForm).timeoutEntry, results.PlanAnswers: b.answers().timeoutEntry,
		}
		for _, k := range plans.All {
			e := timeouts[k.ID]
			if e == nil {
				t.Errorf("%s: no timeout field known to this test", k.ID)
				continue
			}
			got, err := engine.ParseTimeout(e.Text)
			if err != nil || got != k.Timeout {
				t.Errorf("%s: the form's timeout %q, want %v", k.ID, e.Text, k.Timeout)
			}
		}
		b.planSelect.SetSelected(planStages)
		p, err := b.stages.plan()
		if err != nil || p.Timeout < slowAnswer {
			t.Errorf("three stages: timeout %v (%v), less than a 1,024-token answer at 6 tok/s (%v)", p.Timeout, err, slowAnswer)
		}
		// A timeout typed for one plan stays with it.
		b.stages.timeoutEntry.SetText("1200")
		b.planSelect.SetSelected(planKovara)
		b.planSelect.SetSelected(planStages)
		if b.kovara.timeoutEntry.Text != "120" || b.stages.timeoutEntry.Text != "1200" {
			t.Errorf("timeouts %q and %q after the three-stage plan's was changed, want 120 and 1200", b.kovara.timeoutEntry.Text, b.stages.timeoutEntry.Text)
		}
		// What the engine ran with, as its result says: a quick
		// three-stage run from the form, its timeout as the plan's.
		b.stages.timeoutEntry.SetText(trimFloat(plans.ByID(results.PlanStages).Timeout.Seconds()))
		b.stages.quickCheck.SetChecked(true)
		b.stages.usersEntry.SetText("2")
		b.selectEndpoint(SimulatorName)
		if b.runButton.Disabled() {
			t.Fatalf("three stages: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the three-stage result", 120*time.Second, func() bool { return b.running == nil && b.shownResult })
	list, err := h.u.lib.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("library: %+v %v", list, err)
	}
	got, err := storage.LoadAs[plans.Stages](h.u.lib, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if ran := time.Duration(got.Result.Settings.TimeoutS * float64(time.Second)); ran != plans.ByID(results.PlanStages).Timeout || ran < slowAnswer {
		t.Errorf("the three-stage run's requests timed out after %v, want the plan's %v (a 1,024-token answer at 6 tok/s takes %v)",
			ran, plans.ByID(results.PlanStages).Timeout, slowAnswer)
	}
}
