package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestTuneViewShowsTheAnswersBesideTheSpeed: a comparison whose answers
// were read token by token says, at the top of its page, each setting's
// speed and answers together, and its table shows the answers' columns
// (the first setting's floor, the other's figures) whole at 1024×640 —
// on the real llama-server's fourteen rows as on planstest's four — with
// the page inside the window.
func TestTuneViewShowsTheAnswersBesideTheSpeed(t *testing.T) {
	h := newHarness(t)
	drift := &results.TuneDrift{Prompts: "kovara-answers-v1", Positions: 160, SameTop: 0.99375, FloorSameTop: 1, KLMean: 1.6e-6, FloorKL: 0, KLP99: 2e-5,
		KLBeyond: true, Ruler: "less than BF16 against FP16 costs Llama 3 8B (2.5e-05)"}
	tests := []struct {
		name string
		r    *results.TuneResult
	}{
		{"planstest", planstest.Tune(false)},
		{"llama-server", planstest.LlamaTune(t)},
	}
	for _, tt := range tests {
		tt.r.Answers[0].Drift = drift
		h.locked(func() {
			v := h.u.resultView(plans.NewTune(tt.r), "", nil, func() {})
			h.win.SetContent(v.content)
			h.win.Resize(minWindowSize)
			if m := h.win.Content().MinSize(); m.Width > minWindowSize.Width || m.Height > minWindowSize.Height {
				t.Errorf("%s: the page needs %v×%v, more than %v", tt.name, m.Width, m.Height, minWindowSize)
			}
			tv := h.u.tuneView
			name, base := tt.r.Settings[1].Name, tt.r.Settings[0].Name
			if got, want := tv.headline.Text, "; answers: same top token 99.4 %, KL divergence 1.6e-06 — beyond the floor on KL divergence, the top token as often the same; less than BF16 against FP16 costs Llama 3 8B (2.5e-05)."; !strings.HasPrefix(got, name+" ") || !strings.Contains(got, base) || !strings.HasSuffix(got, want) {
				t.Errorf("%s: verdict %q\nwant it to end %q", tt.name, got, want)
			}
			tb := findFitTable(t, v.content)
			if tb == nil {
				t.Fatalf("%s: no table", tt.name)
			}
			want := tt.r.Table()
			if got := shownHeadings(tb); !slices.Equal(got, want.Columns) {
				t.Errorf("%s: headings %q, want %q", tt.name, got, want.Columns)
			}
			rows := shownCells(tb)
			for i, row := range rows {
				got := row[len(row)-2:]
				want := []string{"99.4 %", "1.6e-06"}
				if i%2 == 0 { // the first setting: its floor
					want = []string{"floor 100.0 %", "floor 0"}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s row %d (%s): answers' cells %q, want %q", tt.name, i, row[2], got, want)
				}
			}
			if got, room := tb.width(), tb.Size().Width; got > room {
				t.Errorf("%s: the columns take %.1f px, the table has %.1f: it scrolls sideways", tt.name, got, room)
			}
			assertColumnsHoldContent(t, tt.name, tb, rows)
			assertNothingOverflows(t, tt.name, tb)
			for _, l := range tableLabels(t, tb) {
				if strings.HasSuffix(l.Text, "…") {
					t.Errorf("%s: %q is cut", tt.name, l.Text)
				}
			}
		})
	}
}
