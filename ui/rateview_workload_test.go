package ui

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/kovara/desktop/engine/results"
)

// rateWithLoad is planstest's clean rate result as if it had run with a
// shared prefix in two groups and 3-turn conversations: the prefix check
// and, at each rate, the figures by turn.
func rateWithLoad(t *testing.T) *results.RateResult {
	t.Helper()
	r := rateCase(t, false)
	r.Settings.Workload = &results.Workload{SharedPrefix: 2000, SharedPrefixWords: 1540, PrefixGroups: 2, Turns: 3}
	r.Prefix = &results.PrefixCheck{Pairs: 5, WarmTTFTMs: 92, ColdTTFTMs: 610, WarmPromptTokens: 2301, ColdPromptTokens: 2299,
		Cache: &results.PromptCache{CachedTokens: 1994, PromptTokens: 2301, Requests: 5, Source: results.CacheFromUsage}}
	for i := range r.Levels {
		l := &r.Levels[i]
		l.PromptTokens = &results.Dist{N: 32, P50: 2650}
		l.CompletionTokens = &results.Dist{N: 32, P50: 256}
		l.Cache = &results.PromptCache{CachedTokens: 60000, PromptTokens: 84800, Requests: 32, Source: results.CacheFromUsage}
		for turn := 1; turn <= 3; turn++ {
			l.ByTurn = append(l.ByTurn, results.TurnFigures{Turn: turn, Requests: 11, OK: 11,
				TTFTMs:       &results.Dist{N: 11, P50: float64(300 / turn)},
				PromptTokens: &results.Dist{N: 11, P50: float64(2300 + 400*turn)},
				Cache:        &results.PromptCache{CachedTokens: int64(2000 + 300*turn), PromptTokens: int64(2300 + 400*turn), Requests: 11, Source: results.CacheFromUsage}})
		}
	}
	return r
}

// TestRateViewShowsYourOwnLoad: a rate result with its own load says on
// its page what the requests were, the shared prefix's check (in the
// headline and the notes) and each rate's turns, in words and as a
// chart by turn, and its table's three
// more columns each hold their content: the table scrolls sideways
// where the window is too narrow rather than cutting a column.
func TestRateViewShowsYourOwnLoad(t *testing.T) {
	h := newHarness(t)
	r := rateWithLoad(t)
	h.locked(func() {
		v := newRateView(h.u, r, "", nil, func() {})
		h.win.SetContent(v.content)
		h.win.Resize(fyne.NewSize(1024, 640))
		wants := []string{
			"The requests: a shared 2,000-token system prompt in 2 groups, 3-turn conversations.",
			"The shared prefix alone, one request at a time: " + r.Prefix.Words() + ".",
			"At 2 req/s, by turn (time to first token p50, prompt tokens p50, share the server took from its cache): 1: 300 ms, 2700, 85 %; 2: 150 ms, 3100",
			"At 4 req/s, by turn",
		}
		for _, want := range wants {
			if !strings.Contains(v.method.Text, want) {
				t.Errorf("the notes do not say %q:\n%s", want, v.method.Text)
			}
		}
		if strings.Contains(v.method.Text, "..") {
			t.Errorf("a note ends in two full stops:\n%s", v.method.Text)
		}
		if want := "at most 64 in flight, 256-token questions and 128-token answers."; !strings.Contains(v.state.Text, want) {
			t.Errorf("what ran %q does not say %q", v.state.Text, want)
		}
		if want := r.Prefix.Headline(); want == "" || !strings.Contains(v.headline.Text, want) {
			t.Errorf("the headline %q does not say the prefix check %q", v.headline.Text, want)
		}
		if v.turns == nil || !v.turns.ShowingChart() || len(v.saveAll) != 3 {
			t.Errorf("no chart by turn beside the other two (%d charts)", len(v.saveAll))
		}
		tb := findFitTable(t, v.content)
		if tb == nil {
			t.Fatal("no table on the rate view")
		}
		if got := tb.columns[len(tb.columns)-len(results.WorkloadColumns):]; !slices.Equal(got, results.WorkloadColumns) {
			t.Errorf("the table's last columns are %q, want %q", got, results.WorkloadColumns)
		}
		if got, want := len(v.rows[0]), len(tb.columns); got != want {
			t.Errorf("a row has %d cells for %d columns", got, want)
		}
		assertColumnsHoldContent(t, "the rate table", tb, v.rows)
		assertNothingOverflows(t, "the rate table", tb)
		assertFits(t, "the rate view", v.content)
	})
}

// TestRateViewShowsYourPrompts: a run of a prompts file says so in what
// ran (not the synthetic prompt's length), names the file by its counts
// and hash, and the lines it skipped; without turns no chart by turn.
func TestRateViewShowsYourPrompts(t *testing.T) {
	h := newHarness(t)
	r := rateCase(t, false)
	r.Settings.Workload = &results.Workload{Prompts: &results.PromptsSource{Shape: "jsonl", SHA256: "1a2b3c4d5e6f7a8b9c0d", Bytes: 9000,
		Lines: 120, Records: 117, Skipped: 3, SkippedLines: []int{4, 17, 90}}}
	h.locked(func() {
		v := newRateView(h.u, r, "", nil, func() {})
		h.win.SetContent(v.content)
		h.win.Resize(fyne.NewSize(1024, 640))
		for _, want := range []string{"The requests: your prompts (jsonl, 117 records in 120 lines, sha256 1a2b3c4d5e6f…, 3 malformed skipped).",
			"3 malformed lines of the prompts file were skipped (lines 4, 17, 90)."} {
			if !strings.Contains(v.method.Text, want) {
				t.Errorf("the notes do not say %q:\n%s", want, v.method.Text)
			}
		}
		if want := "your prompts, with 128-token answers where a prompt sets none."; !strings.Contains(v.state.Text, want) || strings.Contains(v.state.Text, "256-token") {
			t.Errorf("what ran %q does not say %q", v.state.Text, want)
		}
		if v.turns != nil || len(v.saveAll) != 2 {
			t.Errorf("a chart by turn for a run without turns (%d charts)", len(v.saveAll))
		}
	})
}
