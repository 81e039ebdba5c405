package ui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestStagesCopySaysCopied: the wiki block's Copy button puts the block
// on the clipboard and the page says it did.
func TestStagesCopySaysCopied(t *testing.T) {
	h := newHarness(t)
	tps := 88.2
	r := &results.StagesResult{Complete: true, Model: "m", TokenSource: "usage", Engine: results.Detection{Family: "llama.cpp", Version: "b9749"},
		Decode: []results.DecodeStage{{Prompt: "code", CompletionTokens: 256, DecodeTPS: &tps}}}
	var v *StagesView
	h.locked(func() {
		v = newStagesView(h.u, r, "", nil, func() {})
		h.win.SetContent(v.content)
		test.Tap(v.copyWiki)
		if got, want := h.u.fyne.Clipboard().Content(), r.WikiBlock(); got != want || !strings.Contains(got, "|decode_single=") {
			t.Errorf("clipboard %q, want the wiki block %q", got, want)
		}
		if got := v.copied.Text; got != copiedText || v.copyWiki.Text != copyWikiText {
			t.Errorf("after Copy the page says %q beside %q, want %q", got, v.copyWiki.Text, copiedText)
		}
	})
}

// TestSpecDecViewSaysHowAnswersEnded: a run whose answers all ran to the
// token limit says so instead of "natural stops", and its table's
// headings fit their columns without running into the next.
func TestSpecDecViewSaysHowAnswersEnded(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 1e6,
		SpecDecode:  &sim.SpecDecode{DraftTokens: 3, Acceptance: 0.7},
		NaturalStop: func(int64) int { return 1000 }}) // a model that never stops on its own
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.Requests, p.MaxTokens = []int{1, 2}, 4, 8
	r, err := engine.RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	h.locked(func() {
		v := newSpecDecView(h.u, r, "", nil, func() {})
		h.win.SetContent(v.content)
		h.win.Resize(fyne.NewSize(1180, 800))
		const want = "Every answer hit the 8-token limit: the model never stopped on its own."
		if !strings.Contains(v.state.Text, want) || strings.Contains(strings.ToLower(v.state.Text), "natural stop") {
			t.Errorf("the page says %q, want it to say %q and never \"natural stops\"", v.state.Text, want)
		}
		assertColumnsHoldContent(t, "speculative decoding", v.table, v.rows)
		assertNothingOverflows(t, "speculative decoding", v.table)
		if got, room := v.table.width(), v.table.Size().Width; got > room {
			t.Errorf("the columns take %.1f px of %.1f", got, room)
		}
	})
}

// TestResultViewsShowTheSharedTables: every plan's result view shows, in
// its table's cells as the widget draws them, exactly the cells its
// document's Table defines (engine/results), the ones the CLI prints; a
// three-stage result that read its GPUs shows them under the stages,
// with the caution when they may not be the server's.
func TestResultViewsShowTheSharedTables(t *testing.T) {
	h := newHarness(t)
	for _, c := range planstest.Cases() {
		h.locked(func() {
			v := h.u.resultView(c.Doc, "", nil, func() {})
			h.win.SetContent(v.content)
			h.win.Resize(fyne.NewSize(1180, 800))
			tb := findFitTable(t, v.content)
			if tb == nil {
				t.Fatalf("%s: the view shows no table", c.Name)
			}
			want := c.Doc.Table()
			if got := shownHeadings(tb); !slices.Equal(got, want.Columns) {
				t.Errorf("%s: headings %q, want the shared table's %q", c.Name, got, want.Columns)
			}
			if got := shownCells(tb); !slices.EqualFunc(got, want.Rows, slices.Equal) {
				t.Errorf("%s: cells %q, want the shared table's %q", c.Name, got, want.Rows)
			}
		})
	}
	gen, width, cap, peak := 4, 16, 350.0, 251.0
	st := planstest.Cases()[2].Doc.(plans.Stages).Result
	st.GPUs = &results.StagesGPUs{Source: results.GPUSourceLocal, Caution: "the endpoint is another machine: these may not be the server's cards",
		Cards: []results.GPUCard{{Index: 0, Name: "NVIDIA GeForce RTX 3090", PCIeGenLoad: &gen, PCIeWidthLoad: &width, PowerLimitW: &cap, PeakPowerW: &peak, Driver: "550.120"}}}
	h.locked(func() {
		sv := newStagesView(h.u, st, "", nil, func() {})
		if sv.cards == nil || !slices.Equal(shownHeadings(sv.cards), results.CardColumns) {
			t.Fatal("the cards table is missing")
		}
		if got, want := shownCells(sv.cards), st.GPUs.CardsTable().Rows; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("cards %q, want %q", got, want)
		}
		h.win.SetContent(sv.content)
		h.win.Resize(fyne.NewSize(1180, 800))
		text := test.RenderObjectToMarkup(sv.content)
		for _, want := range []string{"Gen4 x16", "may not be the server", "NVIDIA GeForce RTX 3090"} {
			if !strings.Contains(text, want) {
				t.Errorf("the stages view lacks %q", want)
			}
		}
	})
}

// shownCells are a table's cells as its widget fills them (UpdateCell),
// each in a cell wide enough for the whole text.
func shownCells(tb *fitTable) [][]string {
	rows, cols := tb.Length()
	out := make([][]string, rows)
	for r := range rows {
		for c := range cols {
			cell := tb.CreateCell()
			cell.Resize(fyne.NewSize(4000, 40))
			tb.UpdateCell(widget.TableCellID{Row: r, Col: c}, cell)
			l := tb.cellLabel(cell)
			out[r] = append(out[r], l.Text)
		}
	}
	return out
}

// shownHeadings are a table's headings as its widget fills them.
func shownHeadings(tb *fitTable) []string {
	_, cols := tb.Length()
	var out []string
	for c := range cols {
		cell := tb.CreateHeader()
		tb.UpdateHeader(widget.TableCellID{Row: -1, Col: c}, cell)
		l := tb.cellLabel(cell)
		out = append(out, l.Text)
	}
	return out
}
