package ui

import (
	"context"
	"slices"
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

// TestResultViewsShowTheSharedTables: the three-stage, speculative-
// decoding and capacity views show exactly the cells their kind's Table
// defines (engine/results), the ones the CLI prints; a three-stage result
// that read its GPUs shows them under the stages, with the caution when
// they may not be the server's.
func TestResultViewsShowTheSharedTables(t *testing.T) {
	h := newHarness(t)
	tps, ttft, gen, width, cap, peak := 88.2, 41.3, 4, 16, 350.0, 251.0
	st := &results.StagesResult{Complete: true, Model: "m", TokenSource: "usage",
		Decode: []results.DecodeStage{{Prompt: "code", CompletionTokens: 1024, MaxTokens: 1024, DecodeTPS: &tps, TTFTMs: &ttft}},
		Users:  &results.UsersStage{Users: 4, Error: "2 of 4 requests failed (first: HTTP 503), so there is no aggregate"},
		GPUs: &results.StagesGPUs{Source: results.GPUSourceLocal, Caution: "the endpoint is another machine: these may not be the server's cards",
			Cards: []results.GPUCard{{Index: 0, Name: "NVIDIA GeForce RTX 3090", PCIeGenLoad: &gen, PCIeWidthLoad: &width, PowerLimitW: &cap, PeakPowerW: &peak, Driver: "550.120"}}}}
	rate, length := 0.7, 2.4
	sd := &results.SpecDecResult{Complete: true, Model: "m", Levels: []results.SpecDecLevel{{Concurrency: 2, OK: 8, Requests: 8,
		Spec: &results.SpecWindow{AcceptanceRate: &rate, MeanAcceptanceLength: &length}}}}
	p50, p5, p95 := 31.0, 22.5, 812.0
	cp := &results.CapacityResult{Complete: true, Model: "m", Probes: []results.CapacityProbe{{Concurrency: 4, Requests: 20, Step: results.StepDouble, Met: true,
		UserTPSP50: &p50, UserTPSP5: &p5, TTFTP95Ms: &p95, OutputTPS: 120}}}
	h.locked(func() {
		sv := newStagesView(h.u, st, "", nil, func() {})
		if got, want := sv.rows, st.Table().Rows; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("stages view rows %q, want the shared table %q", got, want)
		}
		if !strings.Contains(strings.Join(sv.rows[1], "|"), "failed: 2 of 4 requests failed") {
			t.Errorf("a failed users stage should say its error: %q", sv.rows[1])
		}
		if sv.cards == nil || !slices.Equal(sv.cards.columns, results.CardColumns) {
			t.Fatal("the cards table is missing")
		}
		h.win.SetContent(sv.content)
		h.win.Resize(fyne.NewSize(1180, 800))
		text := test.RenderObjectToMarkup(sv.content)
		for _, want := range []string{"Gen4 x16", "may not be the server", "NVIDIA GeForce RTX 3090"} {
			if !strings.Contains(text, want) {
				t.Errorf("the stages view lacks %q", want)
			}
		}
		if v := newSpecDecView(h.u, sd, "", nil, func() {}); !slices.EqualFunc(v.rows, sd.Table().Rows, slices.Equal) || v.rows[0][5] != "70.0 %" {
			t.Errorf("speculative-decoding rows %q", v.rows)
		}
		if v := newCapacityView(h.u, cp, "", nil, func() {}); !slices.EqualFunc(v.rows, cp.Table().Rows, slices.Equal) || v.rows[0][6] != "812.0" {
			t.Errorf("capacity rows %q", v.rows)
		}
	})
}
