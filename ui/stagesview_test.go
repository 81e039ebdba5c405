package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
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
	p := engine.DefaultSpecDecPlan()
	p.Levels, p.Requests, p.MaxTokens = []int{1, 2}, 4, 8
	r, err := engine.RunSpecDec(context.Background(), p, engine.Endpoint{URL: url}, engine.Observer{})
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
