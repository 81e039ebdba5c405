package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
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
		// The labels' texts, not the markup: a wrapped label's markup
		// breaks its text into lines.
		text := strings.Join(labelTexts(t, view), "\n")
		for _, want := range []string{"Your server holds 12 people at ≥ 20 tok/s each with TTFT p95 ≤ 100 ms; at 12, the first probe met both limits",
			"at 13, on the first probe TTFT p95 passes 100 ms", "and on the repeat TTFT p95 passes 100 ms",
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

// labelTexts are the texts of every label in o's tree.
func labelTexts(t *testing.T, o fyne.CanvasObject) []string {
	switch x := o.(type) {
	case *widget.Label:
		return []string{x.Text}
	case *widget.Button:
		return []string{x.Text}
	case *fyne.Container:
		var out []string
		for _, c := range x.Objects {
			out = append(out, labelTexts(t, c)...)
		}
		return out
	case fyne.Widget:
		var out []string
		for _, c := range test.TempWidgetRenderer(t, x).Objects() {
			out = append(out, labelTexts(t, c)...)
		}
		return out
	}
	return nil
}

// disturbedCapacity is a capacity result whose search was disturbed
// (issue 23): the first probe at 3 users missed TTFT p95 at 26 tok/s per
// user while its repeat met the service level at 124, and total output
// fell 95 % from 2 to 4 users.
func disturbedCapacity() *results.CapacityResult {
	f := func(v float64) *float64 { return &v }
	knee := 2
	return &results.CapacityResult{
		Format: results.FormatCapacity, FormatVersion: 1, Complete: true, Model: "tiny-model",
		Settings: results.CapacitySettings{UserTPS: 20, TTFTP95Ms: 2000, InputTokens: 1024, OutputTokens: 256, MaxConcurrency: 256},
		Probes: []results.CapacityProbe{
			{Concurrency: 1, Requests: 20, Step: results.StepDouble, Met: true, UserTPSP50: f(300), UserTPSP5: f(280), TTFTP95Ms: f(150), OutputTPS: 290},
			{Concurrency: 2, Requests: 20, Step: results.StepDouble, Met: true, UserTPSP50: f(250), UserTPSP5: f(230), TTFTP95Ms: f(300), OutputTPS: 480},
			{Concurrency: 4, Requests: 20, Step: results.StepDouble, Missed: []string{results.LimitTTFT, results.LimitUserTPS}, UserTPSP50: f(6), UserTPSP5: f(3), TTFTP95Ms: f(9000), OutputTPS: 24},
			{Concurrency: 3, Requests: 20, Step: results.StepBisect, Missed: []string{results.LimitTTFT}, UserTPSP50: f(26), UserTPSP5: f(21), TTFTP95Ms: f(3200), OutputTPS: 70},
			{Concurrency: 2, Requests: 20, Step: results.StepRepeat, Met: true, UserTPSP50: f(248), UserTPSP5: f(228), TTFTP95Ms: f(310), OutputTPS: 470},
			{Concurrency: 3, Requests: 20, Step: results.StepRepeat, Met: true, UserTPSP50: f(124), UserTPSP5: f(110), TTFTP95Ms: f(491), OutputTPS: 350},
		},
		Answer: results.CapacityAnswer{Capacity: 2, Held: 2, Missed: 3, MissedAt: 3, MissedOn: []string{results.LimitTTFT}, Uncertain: true, RangeHigh: 3, Knee: &knee},
	}
}

// TestCapacityCharts: both charts draw every probe, each level's first
// probe on a line and its repeats as dots of their own colour, named so
// in the legend, with the limits and the answer.
func TestCapacityCharts(t *testing.T) {
	t.Parallel()
	r := disturbedCapacity()
	speed, ttft := capacitySpeedSpec(r, chart.Palette{}), capacityTTFTSpec(r, chart.Palette{})
	names := func(s chart.Spec) []string {
		var out []string
		for _, x := range s.Series {
			out = append(out, x.Name)
		}
		return out
	}
	if got, want := strings.Join(names(speed), "|"), "floor 20 tok/s|capacity: 2|p50, first probe|slowest 5 %, first probe|p50, repeat|slowest 5 %, repeat"; got != want {
		t.Errorf("speed series %q, want %q", got, want)
	}
	if got, want := strings.Join(names(ttft), "|"), "ceiling 2000 ms|capacity: 2|TTFT p95, first probe|TTFT p95, repeat"; got != want {
		t.Errorf("TTFT series %q, want %q", got, want)
	}
	// Every probe is a point: the first probes on the line, in order of
	// concurrency, the repeats as dots, none left out.
	points := func(ss ...chart.Series) []string {
		var out []string
		for _, s := range ss {
			for i := range s.X {
				out = append(out, fmt.Sprintf("%g:%g", s.X[i], s.Y[i]))
			}
		}
		slices.Sort(out)
		return out
	}
	probes := func(get func(results.CapacityProbe) *float64) []string {
		var out []string
		for _, p := range r.Probes {
			out = append(out, fmt.Sprintf("%d:%g", p.Concurrency, *get(p)))
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name  string
		first chart.Series
		again chart.Series
		get   func(results.CapacityProbe) *float64
	}{
		{"per-user p50", speed.Series[2], speed.Series[4], func(p results.CapacityProbe) *float64 { return p.UserTPSP50 }},
		{"per-user p5", speed.Series[3], speed.Series[5], func(p results.CapacityProbe) *float64 { return p.UserTPSP5 }},
		{"TTFT p95", ttft.Series[2], ttft.Series[3], func(p results.CapacityProbe) *float64 { return p.TTFTP95Ms }},
	} {
		if got, want := points(tc.first, tc.again), probes(tc.get); !slices.Equal(got, want) {
			t.Errorf("%s: points %v, want every probe %v", tc.name, got, want)
		}
		if !slices.Equal(tc.first.X, []float64{1, 2, 3, 4}) {
			t.Errorf("%s: line at %v, want each level's first probe, 1 to 4", tc.name, tc.first.X)
		}
		if tc.first.Kind != chart.Line || tc.again.Kind != chart.Scatter || tc.first.Color == tc.again.Color {
			t.Errorf("%s: first probes kind %v colour %d, repeats kind %v colour %d; want a line and dots of another colour",
				tc.name, tc.first.Kind, tc.first.Color, tc.again.Kind, tc.again.Color)
		}
	}
	// The repeat at 3 met the service level at 124 tok/s per user: drawn.
	if a := speed.Series[4]; !slices.Equal(a.X, []float64{2, 3}) || a.Y[1] != 124 {
		t.Errorf("per-user p50 repeats %v %v, want 248 at 2 and 124 at 3", a.X, a.Y)
	}
	if c := ttft.Series[1]; c.X[0] != 2 || c.Y[1] != 9000 {
		t.Errorf("capacity line %+v, want x=2 up to 9000", c)
	}
	for _, s := range []chart.Spec{speed, ttft} {
		s.Width, s.Height = 640, 360
		if _, err := chart.Render(s); err != nil {
			t.Errorf("%s: %v", s.Title, err)
		}
	}
}

// TestCapacityViewDisturbed: the view of a disturbed search says what the
// engine says of it: the headline quotes both probes at 3, the knee says
// throughput fell, the disagreement is a problem above the charts; and
// its content fits a 1024×640 window.
func TestCapacityViewDisturbed(t *testing.T) {
	h := newHarness(t)
	r := disturbedCapacity()
	h.locked(func() {
		v := newCapacityView(h.u, r, "", nil, func() {})
		if got := v.headline.Text; got != r.Headline() || !strings.Contains(got, "at 3, on the first probe TTFT p95 passes 2 s (3.2 s, 1.6× the ceiling), while the repeat met both limits") {
			t.Errorf("headline %q", got)
		}
		if got, want := v.state.Text, "Throughput knee: 2 concurrent users; total tokens/s fell 95 % from 2 to 4 users (480.0 to 24.0 tok/s)."; !strings.Contains(got, want) {
			t.Errorf("state %q, want it to hold %q", got, want)
		}
		if v.problems == nil || !strings.Contains(v.problems.Text, "The two probes at 3 users disagree (per-user p50 26.0 vs 124.0 tok/s") {
			t.Errorf("problems %v, want the disagreement at 3", v.problems)
		}
		if v.warnings.Text == "No warnings." {
			t.Error(`"No warnings." under probes that disagree`)
		}
		// The window is 1024×640; its tabs and padding take the rest.
		v.content.Resize(fyne.NewSize(1000, 590))
		if got := v.content.MinSize(); got.Width > 1000 || got.Height > 590 {
			t.Errorf("content's minimum size %v, want within 1000×590", got)
		}
	})
}
