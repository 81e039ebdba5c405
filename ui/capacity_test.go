package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// TestCapacityPlanRunViewHistoryCompare runs the capacity plan on the
// built-in simulator (twelve slots, the rest queued) from the Benchmark
// form, looks at the live view and the result, and finds the result in
// History, where two of them compare.
func TestCapacityPlanRunViewHistoryCompare(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	run := func() {
		h.locked(func() {
			b.selectEndpoint(SimulatorName)
			b.planSelect.SetSelected(planCapacity)
			if b.capacityForm.Hidden || !b.concForm.Hidden || b.levelsForm.Hidden || !b.requestsEntry.Disabled() || !b.manifestSelect.Disabled() {
				t.Error("the capacity plan shows its service level and the lengths, and takes no levels, requests or manifest")
			}
			// Short answers: a thirteenth user waits about 275 ms for a
			// slot, over the 100 ms ceiling.
			b.inputEntry.SetText("128")
			b.outputEntry.SetText("32")
			b.sloTTFTEntry.SetText("100")
			if b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "Capacity: concurrency doubling from 1 up to 256 until a level misses per-user ≥ 20 tok/s or TTFT p95 ≤ 100 ms") {
				t.Fatalf("capacity plan: %q", b.planNote.Text)
			}
			test.Tap(b.runButton)
		})
		sawSearch := false
		h.waitFor("the capacity result", 180*time.Second, func() bool {
			if b.live != nil && strings.HasPrefix(b.live.phase.Text, "Capacity search: probing") {
				sawSearch = true
			}
			return b.running == nil && b.shownResult
		})
		if !sawSearch {
			t.Error("the live view never said which concurrency it was probing")
		}
	}
	run()
	var view fyne.CanvasObject
	h.locked(func() {
		view = b.content.Objects[0]
		text := test.RenderObjectToMarkup(view)
		for _, want := range []string{"Your server holds 12 people at ≥ 20 tok/s each with TTFT p95 ≤ 100 ms; at 13, TTFT p95 passes 100 ms",
			"Service level: per-user ≥ 20 tok/s, TTFT p95 ≤ 100 ms", "missed: TTFT p95", "Save PNG…"} {
			if !strings.Contains(text, want) {
				t.Errorf("capacity view lacks %q", want)
			}
		}
		test.Tap(findButton(t, view, "New benchmark"))
	})
	run()
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		n := 0
		for _, s := range hs.all {
			if s.Plan == storage.PlanCapacity {
				n++
				if got := historyCell(s, 8, nil); !strings.HasSuffix(got, "capacity 12 users") {
					t.Errorf("history status %q, want the capacity shown", got)
				}
				hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
			}
		}
		if n != 2 {
			t.Fatalf("history holds %d capacity results", n)
		}
		test.Tap(hs.compareButton)
		cs := h.u.compareScreen
		if h.u.tabs.Selected() != h.u.compareTab || len(cs.rows) == 0 || !strings.Contains(cs.verdict.Text, "These capacity results measured the same thing") {
			t.Errorf("capacity compare: %d rows, verdict %q", len(cs.rows), cs.verdict.Text)
		}
		hs.open(hs.selectedIDs()[0])
		if !hs.openedOther {
			t.Error("opening a capacity result should show its view")
		}
	})
}

// TestCapacityCharts draws both charts with the limits and the answer.
func TestCapacityCharts(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	r := &results.CapacityResult{
		Complete: true,
		Settings: results.CapacitySettings{UserTPS: 20, TTFTP95Ms: 2000, MaxConcurrency: 256},
		Probes: []results.CapacityProbe{
			{Concurrency: 1, Met: true, UserTPSP50: f(90), UserTPSP5: f(88), TTFTP95Ms: f(150)},
			{Concurrency: 2, Met: true, UserTPSP50: f(80), UserTPSP5: f(76), TTFTP95Ms: f(300)},
			{Concurrency: 4, Met: false, Missed: []string{results.LimitTTFT}, UserTPSP50: f(60), UserTPSP5: f(55), TTFTP95Ms: f(4000)},
			{Concurrency: 3, Met: false, Missed: []string{results.LimitTTFT}, UserTPSP50: f(70), UserTPSP5: f(66), TTFTP95Ms: f(2500)},
			{Concurrency: 2, Step: results.StepRepeat, Met: true, UserTPSP50: f(81), UserTPSP5: f(75), TTFTP95Ms: f(310)},
		},
		Answer: results.CapacityAnswer{Capacity: 2, MissedAt: 3},
	}
	speed, ttft := capacitySpeedSpec(r, Palette{}), capacityTTFTSpec(r, Palette{})
	names := func(s ChartSpec) []string {
		var out []string
		for _, x := range s.Series {
			out = append(out, x.Name)
		}
		return out
	}
	if got := strings.Join(names(speed), "|"); got != "per user, p50|per user, slowest 5 %|floor 20 tok/s|capacity: 2" {
		t.Errorf("speed series %q", got)
	}
	if got := strings.Join(names(ttft), "|"); got != "TTFT p95|ceiling 2000 ms|capacity: 2" {
		t.Errorf("TTFT series %q", got)
	}
	// One point per level, the first probe's, in order; the answer's
	// line reaches the top of the data.
	if x := ttft.Series[0].X; len(x) != 4 || x[0] != 1 || x[3] != 4 {
		t.Errorf("TTFT x %v, want 1,2,3,4", x)
	}
	if y := speed.Series[0].Y; y[1] != 80 {
		t.Errorf("per-user p50 at 2: %v, want the first probe's 80", y[1])
	}
	if c := ttft.Series[2]; c.X[0] != 2 || c.Y[1] != 4000 {
		t.Errorf("capacity line %+v, want x=2 up to 4000", c)
	}
	for _, s := range []ChartSpec{speed, ttft} {
		s.Width, s.Height = 640, 360
		if _, err := RenderChart(s); err != nil {
			t.Errorf("%s: %v", s.Title, err)
		}
	}
}
