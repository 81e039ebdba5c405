package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

// TestPromptCacheAndReconnectsShown: two runs with the same fixed seed on a
// server that keeps a prompt cache and closes the connection after every
// answer (the simulator's llamacpp personality, as llama-server does).
// History marks the second run's cached prompts, Compare names them, and
// its result says what the slots did about the closed connections and
// warns about the cache.
func TestPromptCacheAndReconnectsShown(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 1e6})
	var ids []string
	for range 2 {
		p := setup.DefaultPlan()
		p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 64, 4, []int{1, 2}, 6, 0
		p.Seed, p.FixedSeed = 7, true
		f, err := engine.Run(context.Background(), p, setup.Endpoint{URL: url, Name: "llama box"}, engine.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		id, err := h.u.lib.Save("", f)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		first, second := hs.shown[h.rowOf(ids[0])], hs.shown[h.rowOf(ids[1])]
		if got := historyCell(first, 8, nil); got != "complete" {
			t.Errorf("first run's state %q, want plain complete", got)
		}
		if got := historyCell(second, 8, nil); !strings.HasPrefix(got, "finished, 1 problem · ") || !strings.HasSuffix(got, "% cached") {
			t.Errorf("second run's state %q, want its problem counted and the cached share", got)
		}

		for _, id := range ids {
			hs.table.Select(widget.TableCellID{Row: h.rowOf(id), Col: 0})
		}
		test.Tap(hs.compareButton)
		cs := h.u.compareScreen
		// One of the two runs (whichever the compare put second) met the cache.
		if strings.Count(cs.details.Text, "from its prompt cache") != 1 {
			t.Errorf("compare notes %q", cs.details.Text)
		}

		hs.open(ids[1])
		v := hs.opened
		if v == nil || v.connections == nil || !strings.Contains(v.connections.Text, "closed the connection after every answer") {
			t.Fatalf("result view: connections label %v", v.connections)
		}
		// A cache hit is a problem: above the table, not among the notes.
		if v.problems == nil || !strings.Contains(v.problems.Text, "from its prompt cache") || !strings.Contains(v.problems.Text, "--seed 7") ||
			strings.Contains(v.warnings.Text, "prompt cache") || v.state.Text != "Finished, with a problem: read it before trusting the figures." {
			t.Errorf("state %q, problems %v, notes %q", v.state.Text, v.problems, v.warnings.Text)
		}
	})
}

// TestCompareSpecDecFromHistory: two speculative-decoding results chosen in
// History compare side by side, per level, with their acceptance.
func TestCompareSpecDecFromHistory(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, SpecDecode: &sim.SpecDecode{DraftTokens: 2, Acceptance: 0.5}})
	var ids []string
	for range 2 {
		p := setup.DefaultSpecDecPlan()
		p.Levels, p.Requests, p.MaxTokens = []int{1, 2}, 4, 32
		r, err := engine.RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, engine.Observer{})
		if err != nil {
			t.Fatal(err)
		}
		id, err := h.u.lib.SaveDoc("", plans.NewSpecDec(r))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	hs := h.u.historyScreen
	h.locked(func() {
		hs.reload()
		for _, id := range ids {
			hs.table.Select(widget.TableCellID{Row: h.rowOf(id), Col: 0})
		}
		test.Tap(hs.compareButton)
		cs := h.u.compareScreen
		if h.u.tabs.Selected() != h.u.compareTab || cs.verdict == nil || cs.verdict.Text != "These speculative-decoding results measured the same thing." {
			t.Fatalf("compare not showing the speculative-decoding verdict (status %q)", hs.status.Text)
		}
		var acceptance int
		for _, row := range cs.rows {
			if row.Metric.ID == "acceptance_rate" && row.Cells[0].Present && row.Cells[1].Present {
				acceptance++
			}
		}
		if acceptance != 2 {
			t.Errorf("acceptance rows with both runs: %d, want one per level", acceptance)
		}
	})
}

// TestSpecDecViewShowsPositions: a speculative-decoding result from a
// llama.cpp-like server shows each answer's own acceptance beside the
// counters' and charts acceptance by draft position.
func TestSpecDecViewShowsPositions(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 1e6,
		SpecDecode: &sim.SpecDecode{DraftTokens: 3, Acceptance: 0.7}})
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.Requests, p.MaxTokens = []int{1, 2}, 4, 64
	r, err := engine.RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	h.locked(func() {
		v := newSpecDecView(h.u, r, "", nil, func() {})
		if !v.positions.ShowingChart() {
			t.Errorf("position chart: %q", v.positions.Text())
		}
		for _, row := range v.rows {
			if got := row[7]; got == "—" || !strings.Contains(got, "%") {
				t.Errorf("per-answer acceptance %q in row %v", got, row)
			}
		}
	})
}
