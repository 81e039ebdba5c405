package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

func nearShare(got, want, share float64) bool { return math.Abs(got-want) <= share*math.Abs(want) }

// TestContextTruth holds the context plan's figures against the
// simulator's depth model at every depth (docs/plans.md, "The context
// plan"): each conversation's cold prefill and decode within 2 % of the
// truth for the prompt the server counted, with 10 ms a request spends
// before its prompt is read (as llama-server's parsing and tokenizing do),
// which a prefill taken over the whole TTFT would count 4 % against a 1k
// prompt; its follow-up's cached tokens exactly the cache model's and its
// TTFT within 2 % of the overhead and reading the rest. The short prompt's
// TTFT and a follow-up's are a few milliseconds, next to the request's
// own way (a follow-up at 4k sends a 25 KB body the server parses before
// it reads a token) and two simulator waits, each late by up to a
// scheduler tick, so those are held within 2 % and 5 ms.
func TestContextTruth(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short")
	}
	cfg := sim.Config{
		Personality: sim.LlamaCpp, PrefillRate: 5000, PrefillDepthTokens: 4096,
		TokenInterval: 5 * time.Millisecond, DecodeDepthTokens: 8192, BatchCapacity: 1, ContextLength: 16384,
		RequestOverhead: 10 * time.Millisecond,
	}
	_, url := startSim(t, cfg)
	plan := DefaultContextPlan()
	plan.Depths, plan.OutputTokens, plan.Repeats = []int{1024, 4096}, 32, 2 // the short prompt comes first all the same
	res, err := RunContext(context.Background(), plan, Endpoint{URL: url}, Observer{Live: NewLive()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Depths) != 3 {
		t.Fatalf("complete %v with %d depths: %+v", res.Complete, len(res.Depths), res.Warnings)
	}
	const overhead = 11 // the simulator's template tokens
	for _, d := range res.Depths {
		if d.OK != 2 || len(d.Runs) != 2 {
			t.Fatalf("depth %d: %d of %d conversations ok: %v", d.Depth, d.OK, len(d.Runs), d.Failures)
		}
		if d.Depth > 0 && (d.Off == nil || math.Abs(*d.Off) > 0.02) {
			t.Errorf("depth %d: the prompts landed %v off", d.Depth, d.Off)
		}
		for _, c := range d.Runs {
			p, f := c.Cold.PromptTokens, c.FollowUp.PromptTokens
			truth, err := cfg.Depth(p, p-overhead, c.Cold.CompletionTokens, f)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("depth %d: prefill %v (truth %.0f), decode %.1f (truth %.1f), follow-up TTFT %.1f ms (truth %.1f, %d cached of %d)",
				d.Depth, fmtPtr(c.Cold.PrefillTPS), truth.PrefillTPS, *c.Cold.DecodeTPS, truth.DecodeTPS,
				*c.FollowUp.TTFTMs, ms(truth.FollowUpTTFT), *c.FollowUp.CachedTokens, f)
			if d.Depth == 0 && c.Cold.PrefillTPS != nil {
				t.Errorf("short prompt: prefill %v, want none (it is the baseline)", *c.Cold.PrefillTPS)
			}
			if d.Depth > 0 && (c.Cold.PrefillTPS == nil || !nearShare(*c.Cold.PrefillTPS, truth.PrefillTPS, 0.02)) {
				t.Errorf("depth %d: prefill %.1f tok/s, truth %.1f", d.Depth, *c.Cold.PrefillTPS, truth.PrefillTPS)
			}
			if d.Depth == 0 && math.Abs(*c.Cold.TTFTMs-ms(truth.ColdTTFT)) > 0.02*ms(truth.ColdTTFT)+5 {
				t.Errorf("short prompt: TTFT %.2f ms, truth %.2f", *c.Cold.TTFTMs, ms(truth.ColdTTFT))
			}
			if !nearShare(*c.Cold.DecodeTPS, truth.DecodeTPS, 0.02) {
				t.Errorf("depth %d: decode %.2f tok/s, truth %.2f", d.Depth, *c.Cold.DecodeTPS, truth.DecodeTPS)
			}
			if c.FollowUp.CachedTokens == nil || *c.FollowUp.CachedTokens != truth.FollowUpCached {
				t.Errorf("depth %d: follow-up cached %v tokens, the cache model %d", d.Depth, c.FollowUp.CachedTokens, truth.FollowUpCached)
			}
			if got, want := *c.FollowUp.TTFTMs, ms(truth.FollowUpTTFT); math.Abs(got-want) > 0.02*want+5 {
				t.Errorf("depth %d: follow-up TTFT %.2f ms, the cache model %.2f", d.Depth, got, want)
			}
			// The simulator's own timings are llama.cpp's: the plan keeps
			// them beside its figures.
			if s := c.Cold.Server; s == nil || s.CacheN != 0 || s.PromptN != p || !nearShare(s.PredictedTPS, truth.DecodeTPS, 0.02) {
				t.Errorf("depth %d: server timings %+v", d.Depth, s)
			}
		}
	}
	// Deeper is slower, both ways, as the model says.
	first, last := res.Depths[1], res.Depths[2]
	if !(last.DecodeTPS.P50 < first.DecodeTPS.P50 && last.PrefillTPS.P50 < first.PrefillTPS.P50) {
		t.Errorf("decode %v → %v, prefill %v → %v: no slowdown with depth", first.DecodeTPS.P50, last.DecodeTPS.P50, first.PrefillTPS.P50, last.PrefillTPS.P50)
	}
	if last.CachedTTFTMs.P50*5 > last.TTFTMs.P50 {
		t.Errorf("at 4k the cached follow-up took %.1f ms against %.1f cold", last.CachedTTFTMs.P50, last.TTFTMs.P50)
	}
}

// TestContextRun runs the plan end to end on the demo's simulator, fast:
// the document's shape, the raw samples of every round, the live view and
// the words of its headline.
func TestContextRun(t *testing.T) {
	t.Parallel()
	cfg := sim.ContextDemo()
	cfg.PrefillRate, cfg.TokenInterval = 200000, time.Millisecond
	_, url := startSim(t, cfg)
	plan := DefaultContextPlan()
	plan.Depths, plan.OutputTokens, plan.Repeats, plan.Users = []int{0, 1024, 2048}, 8, 2, 2
	plan.Timeout = 20 * time.Second
	live := NewLive()
	res, err := RunContext(context.Background(), plan, Endpoint{URL: url, Name: "sim"}, Observer{Live: live})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != results.FormatContext || !res.Complete || res.Model != "kovara-sim-8b" || res.Local.EndpointName != "sim" {
		t.Fatalf("document head: %+v", res)
	}
	if res.Calibration == nil || res.Calibration.TargetTokens != 1024 || res.Calibration.TokensPerWord <= 0 {
		t.Errorf("calibration: %+v", res.Calibration)
	}
	if !slices.Equal(res.Settings.Depths, []int{0, 1024, 2048}) || res.Settings.Users != 2 || res.Settings.Repeats != 2 || !res.Settings.IgnoreEOS {
		t.Errorf("settings: %+v", res.Settings)
	}
	for _, d := range res.Depths {
		if d.Conversations != 4 || d.OK != 4 || len(d.Samples) != 2 {
			t.Fatalf("depth %d: %d of %d conversations, %d rounds of samples", d.Depth, d.OK, d.Conversations, len(d.Samples))
		}
		for _, s := range d.Samples {
			if s.Cold == nil || len(s.Cold.Requests) != 2 || s.FollowUp == nil || len(s.FollowUp.Requests) != 2 || s.Cold.Slots != 2 {
				t.Fatalf("depth %d, repeat %d: samples %+v", d.Depth, s.Repeat, s)
			}
			for _, r := range s.Cold.Requests {
				if !r.OK() || r.CompletionTokens != 8 || r.PromptTokens == 0 {
					t.Errorf("depth %d: cold sample %+v", d.Depth, r)
				}
			}
		}
		if (d.PrefillTPS == nil) != (d.Depth == 0) || d.DecodeTPS == nil || d.TTFTMs == nil || d.CachedTTFTMs == nil || d.CachedTokens == nil ||
			d.ServerPrefillTPS == nil || d.ServerDecodeTPS == nil || d.FollowUpTokens == nil {
			t.Errorf("depth %d: a figure is missing: %+v", d.Depth, d)
		}
	}
	// The demo's server has one slot: the second user of each round waits.
	if !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "the server serves 1 request at a time") && strings.Contains(w, "each round sends 2 at once")
	}) {
		t.Errorf("no queueing warning: %q", res.Warnings)
	}
	if s := live.Snapshot(); s.Phase != PhaseDone || s.OverallTotal != 3*2*2*2 || s.Context == nil || s.Context.Depth != 2048 {
		t.Errorf("live at the end: phase %q, total %d, context %+v", s.Phase, s.OverallTotal, s.Context)
	}
	if h := res.Headline(); !strings.Contains(h, "From a short prompt to 2048 tokens of context") || !strings.Contains(h, "as a cached follow-up") {
		t.Errorf("headline: %s", h)
	}
	data, err := results.MarshalContext(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.DecodeContext(data)
	if err != nil || len(back.Depths) != 3 || back.Depths[2].Samples[1].FollowUp.Requests[0].CachedTokens == 0 {
		t.Fatalf("round trip: %v", err)
	}
}

// TestContextDepths: chosen from the server's context (the conversation
// with its answer and follow-up must fit), or as given.
func TestContextDepths(t *testing.T) {
	t.Parallel()
	ctx16k := &results.Detection{ContextLength: 16384, ContextSource: "/props n_ctx", Family: results.FamilyLlamaCpp}
	tests := []struct {
		name string
		plan ContextPlan
		det  *results.Detection
		want []int
	}{
		{"16k context", DefaultContextPlan(), ctx16k, []int{0, 1024, 2048, 4096, 8192}},
		{"4k context", DefaultContextPlan(), &results.Detection{ContextLength: 4096}, []int{0, 1024, 2048}},
		{"unknown context", DefaultContextPlan(), nil, []int{0, 1024, 2048, 4096, 8192, 16384, 32768}},
		{"tiny context", DefaultContextPlan(), &results.Detection{ContextLength: 512}, []int{0}},
		{"given, sorted", ContextPlan{Depths: []int{8192, 0, 1024, 1024}}, ctx16k, []int{0, 1024, 8192}},
		{"given without the short prompt", ContextPlan{Depths: []int{8192, 1024}}, ctx16k, []int{0, 1024, 8192}},
	}
	for _, tt := range tests {
		if got := ContextDepths(tt.plan, tt.det); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	p := DefaultContextPlan()
	p.Depths = []int{0, 16384}
	err := p.Fit(ctx16k, "")
	var ce *ContextError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "depth 16384 does not fit") || !strings.Contains(err.Error(), "llama-server: -c") ||
		!strings.Contains(err.Error(), "lower the depths (--depths) or the answer (--output-tokens)") {
		t.Errorf("Fit(16k on 16k) = %v", err)
	}
	if err := p.Fit(ctx16k, "the depths or the answer length"); err == nil || !strings.Contains(err.Error(), "lower the depths or the answer length, or start") {
		t.Errorf("Fit in the app's words = %v", err)
	}
	p.Depths = []int{0, 8192}
	if err := p.Fit(ctx16k, ""); err != nil {
		t.Errorf("Fit(8k on 16k) = %v", err)
	}
}

func TestParseDepths(t *testing.T) {
	t.Parallel()
	got, err := ParseDepths("0, 1k,8K,32768")
	if err != nil || !slices.Equal(got, []int{0, 1024, 8192, 32768}) {
		t.Errorf("ParseDepths = %v, %v", got, err)
	}
	if s := FormatDepths(got); s != "0,1k,8k,32k" {
		t.Errorf("FormatDepths = %q", s)
	}
	for _, bad := range []string{"", "x", "-1", "1.5k", "9999999k"} {
		if _, err := ParseDepths(bad); err == nil {
			t.Errorf("ParseDepths(%q) accepted", bad)
		}
	}
	p := DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats, p.Users = []int{}, 1, 101, -1
	err = p.Validate()
	for _, want := range []string{"at least one depth", "at least 2 tokens", "repeats 101", "users -1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}

// TestContextRefusedUpFront: a depth the server's reported context cannot
// hold is refused before any chat request.
func TestContextRefusedUpFront(t *testing.T) {
	t.Parallel()
	cfg := sim.ContextDemo()
	cfg.ContextLength, cfg.RecordTruth = 8192, true
	srv, url := startSim(t, cfg)
	p := DefaultContextPlan()
	p.Depths = []int{0, 8192}
	res, err := RunContext(context.Background(), p, Endpoint{URL: url}, Observer{})
	var pe *PlanError
	if res != nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "depth 8192 does not fit") || !strings.Contains(err.Error(), "8192 (from /props") {
		t.Fatalf("got %v, %v", res, err)
	}
	if n := len(srv.Truths()); n != 0 {
		t.Errorf("%d chat requests reached the server", n)
	}
}

// TestContextOllamaStopsAtItsContext: Ollama says its context only once
// the model is loaded; the plan then keeps the depths that fit and says
// why it went no deeper.
func TestContextOllamaStopsAtItsContext(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Personality: sim.Ollama, PrefillRate: 200000, TokenInterval: time.Millisecond, ModelLoad: 20 * time.Millisecond}
	_, url := startSim(t, cfg)
	p := DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{0, 1024, 2048, 4096, 8192}, 8, 1
	res, err := RunContext(context.Background(), p, Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, d := range res.Depths {
		got = append(got, d.Depth)
	}
	if !slices.Equal(got, []int{0, 1024, 2048}) || !res.Complete {
		t.Fatalf("measured %v (complete %v)", got, res.Complete)
	}
	for _, want := range []string{"context of 4096 tokens", "/api/ps", "2048 tokens"} {
		if !strings.Contains(res.Limit, want) {
			t.Errorf("limit %q does not say %q", res.Limit, want)
		}
	}
	if !strings.Contains(res.Headline(), "It went no deeper: ") {
		t.Errorf("headline: %s", res.Headline())
	}
}

// TestContextTruncationWithoutContext: a server that never says its
// context and cuts longer prompts without an error (Ollama with its /api/ps
// out of reach) ends the plan at the deepest depth it held, saying why.
func TestContextTruncationWithoutContext(t *testing.T) {
	t.Parallel()
	s := sim.New(sim.Config{Personality: sim.Ollama, PrefillRate: 200000, TokenInterval: time.Millisecond})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/ps" {
			http.NotFound(w, r)
			return
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { s.Close() })
	p := DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{0, 1024, 2048, 8192, 16384}, 8, 1
	res, err := RunContext(context.Background(), p, Endpoint{URL: hs.URL}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, d := range res.Depths {
		got = append(got, d.Depth)
	}
	if !slices.Equal(got, []int{0, 1024, 2048}) {
		t.Fatalf("measured %v", got)
	}
	for _, want := range []string{"cut the 8192-token prompts to 4096 tokens without an error", "OLLAMA_CONTEXT_LENGTH"} {
		if !strings.Contains(res.Limit, want) {
			t.Errorf("limit %q does not say %q", res.Limit, want)
		}
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "stops before depth 8k") }) {
		t.Errorf("warnings: %v", res.Warnings)
	}
}

// TestFollowUpBody: the follow-up is the same conversation, the answer as
// it streamed, and the new turn.
func TestFollowUpBody(t *testing.T) {
	t.Parallel()
	c := newConn(Endpoint{}, Base{}, time.Now())
	o := requestOpts{model: "m", maxTokens: 16, words: 5, seed: 7, answer: []byte(`He said \"hi\"\n`), followUp: ContextFollowUp}
	var body struct {
		Messages  []struct{ Role, Content string }
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(c.buildBody(o, 42), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 3 || body.Messages[0].Role != "user" || !strings.Contains(body.Messages[0].Content, "Request 42:") ||
		body.Messages[1] != (struct{ Role, Content string }{"assistant", "He said \"hi\"\n"}) ||
		body.Messages[2] != (struct{ Role, Content string }{"user", ContextFollowUp}) || body.MaxTokens != 16 {
		t.Errorf("body: %+v", body)
	}
	o.followUp = ""
	if err := json.Unmarshal(c.buildBody(o, 42), &body); err != nil || len(body.Messages) != 1 {
		t.Errorf("one turn: %+v, %v", body, err)
	}
}

// TestContextStop: Stop during a depth keeps the depths measured so far,
// marks the result incomplete and the depth it cut partial, and says
// where it stopped.
func TestContextStop(t *testing.T) {
	t.Parallel()
	cfg := sim.ContextDemo()
	cfg.PrefillRate, cfg.TokenInterval = 200000, 2*time.Millisecond
	_, url := startSim(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{0, 1024, 2048}, 64, 2
	log := func(line string) {
		if strings.HasPrefix(line, "depth 1k:") {
			// Stop while the first 1k answer streams.
			time.AfterFunc(30*time.Millisecond, cancel)
		}
	}
	res, err := RunContext(ctx, p, Endpoint{URL: url}, Observer{Log: log})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "depth 1k (2 of 3)") {
		t.Fatalf("err %v", err)
	}
	if res == nil || res.Complete || len(res.Depths) != 2 || res.Depths[0].OK != 2 || !res.Depths[1].Partial {
		t.Fatalf("result %+v", res)
	}
	if h := res.Headline(); !strings.HasPrefix(h, "Stopped before every depth was measured; so far: ") {
		t.Errorf("headline %s", h)
	}
}

// TestContextWithoutPromptCounts: a server that counts no prompt tokens
// gives the short prompt no baseline, so no depth has a prefill, and the
// result says so rather than leave the column empty without a word.
func TestContextWithoutPromptCounts(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{NoUsage: true, PrefillRate: 200000, TokenInterval: time.Millisecond})
	p := DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{1024}, 8, 1
	res, err := RunContext(context.Background(), p, Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Depths) != 2 || res.PrefillBaseline != nil || res.Depths[1].PrefillTPS != nil || res.PrefillMethod != results.PrefillAboveShortPrompt {
		t.Fatalf("depths %d, baseline %+v, prefill at 1k %v, method %q", len(res.Depths), res.PrefillBaseline, res.Depths[len(res.Depths)-1].PrefillTPS, res.PrefillMethod)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, "no depth has a prefill figure") }) {
		t.Errorf("warnings %q", res.Warnings)
	}
}
