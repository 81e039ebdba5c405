package results

import (
	"strings"
	"testing"
)

func TestSpecDecStops(t *testing.T) {
	t.Parallel()
	level := func(lo, hi int) SpecDecLevel {
		return SpecDecLevel{OK: 4, OutputTokens: &LengthSpread{Min: lo, P50: float64(lo+hi) / 2, Max: hi}}
	}
	for _, c := range []struct {
		name   string
		limit  int
		levels []SpecDecLevel
		want   string
	}{
		{"every answer at the limit", 256, []SpecDecLevel{level(256, 256), level(256, 256)},
			"Every answer hit the 256-token limit: the model never stopped on its own."},
		{"every answer before it", 512, []SpecDecLevel{level(88, 301), level(120, 480)},
			"Every answer stopped on its own, before the 512-token limit (88 to 480 tokens)."},
		{"one level stops, the other runs to the limit", 256, []SpecDecLevel{level(256, 256), level(97, 200)},
			"Answers of 97 to 256 tokens: some stopped on their own, some hit the 256-token limit."},
		{"some answers of one level at the limit", 256, []SpecDecLevel{level(140, 256)},
			"Answers of 140 to 256 tokens: some stopped on their own, some hit the 256-token limit."},
		{"a level without answers says nothing", 256, []SpecDecLevel{{Requests: 4}, level(256, 256)},
			"Every answer hit the 256-token limit: the model never stopped on its own."},
		{"no answers at all", 256, []SpecDecLevel{{Requests: 4}}, ""},
		{"no limit recorded", 0, []SpecDecLevel{level(10, 20)}, ""},
	} {
		r := &SpecDecResult{Settings: SpecDecSettings{MaxTokens: c.limit, NaturalStop: true}, Levels: c.levels}
		if got := r.Stops(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// TestSpecDecHeadline (#47): the headline says why levels asked for were
// not run (the server drafted nothing at the first, so the plan stopped;
// or the run was stopped), how the answers ended, and whether drafting is
// worth it — from the acceptance and the tokens a step where the server
// reports them, else what is missing to say it. The level notes carry
// the stop too.
func TestSpecDecHeadline(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	ended := func(l SpecDecLevel) SpecDecLevel {
		l.Requests, l.OK = 4, 4
		l.OutputTokens = &LengthSpread{Min: 64, P50: 64, Max: 64}
		return l
	}
	none := ended(SpecDecLevel{Concurrency: 1, Spec: &SpecWindow{}, Note: "no drafts during the level: speculative decoding looks off"})
	counted := func(c int, rate, length float64) SpecDecLevel {
		return ended(SpecDecLevel{Concurrency: c, Spec: &SpecWindow{Drafts: 100, DraftTokens: 300, Accepted: 210, AcceptanceRate: f(rate), MeanAcceptanceLength: f(length)}})
	}
	const stops = "Every answer hit the 64-token limit: the model never stopped on its own."
	const compare = "compare this run's decode tok/s with the same server run without a draft model."
	tests := []struct {
		name     string
		asked    []int
		levels   []SpecDecLevel
		complete bool
		want     string
		note     string // the last level note, "" for none
	}{
		{"no drafts at level 1 of 1,4: the plan stopped", []int{1, 4}, []SpecDecLevel{none}, false,
			"Stopped after concurrency 1: the server drafted no tokens there (its counters and its answers say so), so speculative decoding is off and concurrency 4 was not run, as they would measure the same nothing (llama-server: start it with a draft model, -md DRAFT.gguf; vLLM: --speculative-config). " + stops,
			"concurrency 1: no drafts during the level: speculative decoding looks off, so the plan stopped after it: concurrency 4 was not run"},
		{"no drafts at level 1 of 1,4,16", []int{1, 4, 16}, []SpecDecLevel{none}, false,
			"Stopped after concurrency 1: the server drafted no tokens there (its counters and its answers say so), so speculative decoding is off and concurrency 4 and 16 were not run",
			"concurrency 1: no drafts during the level: speculative decoding looks off, so the plan stopped after it: concurrency 4 and 16 were not run"},
		{"stopped by hand after level 1", []int{1, 4}, []SpecDecLevel{counted(1, 0.7, 3.1)}, false,
			"Stopped before every level was measured: concurrency 4 was not run. " + stops, ""},
		{"a good draft", []int{1, 4}, []SpecDecLevel{counted(1, 0.7, 3.1), counted(4, 0.68, 3.04)}, true,
			stops + " Is it worth it? At concurrency 1, 70.0 % of the draft tokens were accepted and each step of the model gave 3.10 tokens on average (the mean acceptance length), so drafting can speed decoding 3.10× at most, less the draft model's own time: worth trying; to know the real speed-up, " + compare, ""},
		{"a poor draft", []int{1}, []SpecDecLevel{counted(1, 0.1, 1.3)}, true,
			stops + " Is it worth it? At concurrency 1, 10.0 % of the draft tokens were accepted and each step of the model gave 1.30 tokens on average (the mean acceptance length), so drafting can speed decoding 1.30× at most, less the draft model's own time: probably not worth it here; to be sure, " + compare, ""},
		{"the answers' own counts (llama.cpp timings)", []int{2}, []SpecDecLevel{ended(SpecDecLevel{Concurrency: 2,
			PerRequest: &RequestAcceptance{Requests: 4, AcceptanceRate: f(0.5), MeanAcceptanceLength: f(2.5)}})}, true,
			stops + " Is it worth it? At concurrency 2, 50.0 % of the draft tokens were accepted and each step of the model gave 2.50 tokens on average", ""},
		{"no drafts at every level", []int{1}, []SpecDecLevel{none}, true,
			stops + " Is it worth it? Not as the server runs now: it drafted no tokens, so speculative decoding is off.", "concurrency 1: no drafts during the level: speculative decoding looks off"},
		{"no counters, no counts (llama-server b4748)", []int{1, 2}, []SpecDecLevel{ended(SpecDecLevel{Concurrency: 1}), ended(SpecDecLevel{Concurrency: 2})}, true,
			stops + " Is it worth it? This run cannot say: the server reported no acceptance (no speculative-decoding counters, and no draft counts in its answers), so " + compare, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &SpecDecResult{Settings: SpecDecSettings{Levels: tt.asked, MaxTokens: 64}, Levels: tt.levels}
			r.Complete = tt.complete
			if got := r.Headline(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("headline %q\nwant it to begin %q", got, tt.want)
			}
			notes := r.LevelNotes()
			switch {
			case tt.note == "" && len(notes) > 0:
				t.Errorf("level notes %q, want none", notes)
			case tt.note != "" && (len(notes) == 0 || notes[len(notes)-1] != tt.note):
				t.Errorf("level notes %q\nwant the last %q", notes, tt.note)
			}
		})
	}
}
