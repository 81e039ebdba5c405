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
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
	"github.com/kovara/desktop/storage"
)

// TestCapacityPlanRunViewHistoryCompare runs the capacity plan on the
// built-in simulator (twelve slots, the rest queued) from the Benchmark
// form and follows it through: the live view says what it probes, the
// result shows the saved document's headline, History lists it with the
// mark the library gives that document, and two capacity results compare
// and open. What the search concluded rests on live timing, so the words
// of an answer are TestCapacityViewHistoryCompareDocuments', on documents.
func TestCapacityPlanRunViewHistoryCompare(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		b.planSelect.SetSelected(planCapacity)
		if b.formBox.Objects[0] != b.capacity.content() {
			t.Error("the capacity plan's own form (its service level and the lengths) is not shown")
		}
		// Short answers: a thirteenth user waits about 275 ms for a
		// slot, over the 100 ms ceiling.
		b.capacity.inputEntry.SetText("128")
		b.capacity.outputEntry.SetText("32")
		b.capacity.sloTTFTEntry.SetText("100")
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
	hs := h.u.historyScreen
	h.locked(func() {
		list, err := h.u.lib.List()
		if err != nil || len(list) != 1 || list[0].Plan != results.PlanCapacity {
			t.Fatalf("library %+v %v, want the one capacity result", list, err)
		}
		id := list[0].ID
		rDoc, err := storage.LoadAs[plans.Capacity](h.u.lib, id)
		r := rDoc.Result
		if err != nil || len(r.Probes) == 0 || len(r.Runs) != len(r.Probes) {
			t.Fatalf("the saved result: %v %+v", err, r)
		}
		// The labels' texts, not the markup: a wrapped label's markup
		// breaks its text into lines.
		view := b.content.Objects[0]
		texts := labelTexts(t, view)
		if !slices.Contains(texts, r.Headline()) {
			t.Errorf("the result shows %q, want the saved document's headline %q", texts, r.Headline())
		}
		text := strings.Join(texts, "\n")
		for _, want := range []string{"Service level: per-user ≥ 20 tok/s, TTFT p95 ≤ 100 ms", "Save PNG…"} {
			if !strings.Contains(text, want) {
				t.Errorf("capacity view lacks %q", want)
			}
		}
		test.Tap(findButton(t, view, "New benchmark"))

		// The mark is what a library makes of this document.
		other, err := storage.OpenLibrary(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.SaveDoc("", plans.NewCapacity(r)); err != nil {
			t.Fatal(err)
		}
		marks, err := other.List()
		if err != nil || len(marks) != 1 || marks[0].Capacity == "" {
			t.Fatalf("the document's summary %+v %v", marks, err)
		}
		// A second capacity result to compare with: the same document
		// kept again.
		if _, err := h.u.lib.SaveDoc("", plans.NewCapacity(r)); err != nil {
			t.Fatal(err)
		}
		hs.reload()
		n := 0
		for _, s := range hs.all {
			if s.Plan != results.PlanCapacity {
				continue
			}
			n++
			if s.ID == id {
				if got := historyCell(s, 8, nil); !strings.HasPrefix(got, marks[0].Capacity+" · ") {
					t.Errorf("history status %q, want the capacity %q shown first", got, marks[0].Capacity)
				}
			}
			hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
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

// TestCapacityViewHistoryCompareDocuments: what the app says of capacity
// results, from documents: the real llama-server's search and a disturbed
// one. The view shows the headline, the service level, the knee and the
// missed limits; History marks each with its answer; the two compare as
// the same question and open.
func TestCapacityViewHistoryCompareDocuments(t *testing.T) {
	h := newHarness(t)
	llama, disturbed := planstest.LlamaCapacity(t), planstest.DisturbedCapacity()
	h.locked(func() {
		v := newCapacityView(h.u, llama, "", nil, func() {})
		want := "Your server holds 8 people at ≥ 20 tok/s each with TTFT p95 ≤ 2 s; " +
			"at 8, the first probe met both limits (TTFT p95 1.06 s, the slowest 5 % at 84.6 tok/s), " +
			"and the repeat met both limits (TTFT p95 725 ms, the slowest 5 % at 95.7 tok/s); " +
			"at 9, on the first probe TTFT p95 passes 2 s (2.45 s, 1.2× the ceiling), " +
			"and on the repeat TTFT p95 passes 2 s (2.32 s, 1.2× the ceiling)."
		if got := v.headline.Text; got != want || got != llama.Headline() {
			t.Errorf("headline\n%q\nwant\n%q", got, want)
		}
		text := strings.Join(labelTexts(t, v.content), "\n")
		for _, want := range []string{"Service level: per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms; 1024-token prompts, 256-token answers.",
			"Throughput knee: 8 concurrent users; doubling to 16 users added 1 % to total tokens/s", "Save PNG…"} {
			if !strings.Contains(text, want) {
				t.Errorf("capacity view lacks %q:\n%s", want, text)
			}
		}
		// The table: a row per probe, the misses named.
		missed := 0
		for _, row := range v.rows {
			if slices.Contains(row, "missed: TTFT p95") {
				missed++
			}
		}
		if len(v.rows) != len(llama.Probes) || missed != 5 {
			t.Errorf("table %q: want %d rows, 5 of them missed on TTFT p95", v.rows, len(llama.Probes))
		}
	})
	marks := map[string]string{}
	for r, mark := range map[*results.CapacityResult]string{llama: "8 users", disturbed: "2–3 users?"} {
		id, err := h.u.lib.SaveDoc("", plans.NewCapacity(r))
		if err != nil {
			t.Fatal(err)
		}
		marks[id] = mark
	}
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		if len(hs.all) != 2 {
			t.Fatalf("history holds %d results, want 2", len(hs.all))
		}
		// The answer is the Status cell's start, so a column narrowed to
		// fit a 1024-px window cuts the state after it, never the answer
		// (#35 item 8: "complete · cap…"); selecting the run says it whole.
		h.u.tabs.SelectIndex(1)
		h.win.Resize(fyne.NewSize(1024, 640))
		for _, s := range hs.all {
			got := historyCell(s, 8, nil)
			if !strings.HasPrefix(got, marks[s.ID]+" · ") {
				t.Errorf("history status %q, want it to start with the capacity %q", got, marks[s.ID])
			}
			if shown := cellText(t, hs.table, got); !strings.HasPrefix(shown, marks[s.ID]) {
				t.Errorf("the status cell shows %q at 1024 px, want the capacity %q whole", shown, marks[s.ID])
			}
			hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
			if want := "1 selected. " + capitalize(s.Answer) + "."; s.Answer == "" || hs.status.Text != want {
				t.Errorf("selected, the status line says %q, want %q", hs.status.Text, want)
			}
			hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
		}
		for _, s := range hs.all {
			hs.table.Select(widget.TableCellID{Row: h.rowOf(s.ID), Col: 0})
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

// TestCapacityCharts: both charts draw every probe, each level's first
// probe on a line and its repeats as dots of their own colour, named so
// in the legend, with the limits and the answer.
func TestCapacityCharts(t *testing.T) {
	t.Parallel()
	r := planstest.DisturbedCapacity()
	speed, ttft := chart.CapacitySpeedSpec(r, chart.Palette{}), chart.CapacityTTFTSpec(r, chart.Palette{})
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
	r := planstest.DisturbedCapacity()
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
