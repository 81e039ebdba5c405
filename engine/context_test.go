package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stats"
)

func nearShare(got, want, share float64) bool { return math.Abs(got-want) <= share*math.Abs(want) }

// TestTruthContext holds the context plan's figures against what the
// simulator did, by its own record of each request, and that record
// against the simulator's depth model (docs/plans.md, "The context plan"),
// at every depth:
//
//   - the record never beats the model: each request waited its 10 ms of
//     overhead (as llama-server's parsing and tokenizing take) before it
//     was admitted, its first token came no sooner than the model's
//     prefill after that, its last no sooner than the decode after that;
//     a follow-up's cached tokens are exactly the cache model's;
//   - each conversation's figures are the record's: its decode within 2 %
//     of the rate its chunks were sent at; the short prompt's and the
//     follow-up's TTFT inside what the record allows, and at most 2 % and
//     5 ms over (a few milliseconds, next to the request's own way); its
//     cold prefill within 2 % of the same reckoning over those TTFTs
//     (above the short prompt's); each depth's published medians within
//     the same bars of the record's;
//   - the method against the model, by arithmetic alone: a prefill taken
//     above the short prompt is within 2 % of the model's, where one over
//     the whole TTFT would count the overhead 4 % against a 1k prompt; and
//     deeper is slower, both ways, and a cached follow-up far quicker.
//
// What the record allows a TTFT: the client counts from its request's
// last write (a follow-up at 4k sends a 25 KB body), the record from its
// first bytes' arrival, so the TTFT is no longer than the record's, and
// no shorter than from admission (which came after the whole request and
// its overhead) to the first token. How late a busy machine runs the
// simulator is in its record, so no bar here depends on it. The client's
// own way in and out of one process still can on a stalled machine: as in
// TestTruth, a run that misses a bar is logged and measured once more, on
// a fresh simulator.
func TestTruthContext(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short")
	}
	for misses := 0; ; misses++ {
		miss := contextAgainstTruth(t)
		if miss == "" {
			return
		}
		t.Logf("run %d missed: %s", misses+1, miss)
		if misses >= truthMisses {
			t.Fatalf("%d runs missed the bar (%d may); the last: %s", misses+1, truthMisses, miss)
		}
	}
}

// ttftWindow is what a request's record allows its client-side TTFT, ms:
// from admission (after the whole request and its overhead) to the first
// chunk, at least; from the request's first bytes to it, at most.
type ttftWindow struct{ lo, hi float64 }

func windowOf(tr sim.Truth, overhead time.Duration) ttftWindow {
	return ttftWindow{lo: ms(tr.Chunks[0].Sub(tr.Admitted) + overhead), hi: ms(tr.Chunks[0].Sub(tr.Arrived))}
}

// holds says whether a measured TTFT (ms) is inside the window: above
// its floor (half a millisecond for the clocks' reading) and at most
// 2 % and 5 ms over its ceiling.
func (w ttftWindow) holds(got float64) bool { return got >= w.lo-0.5 && got <= w.hi*1.02+5 }

func (w ttftWindow) String() string { return fmt.Sprintf("%.2f…%.2f ms", w.lo, w.hi) }

// contextAgainstTruth runs the context plan once against a fresh
// simulator and says how its figures missed the record's bars, if they
// did; what no machine's speed can change fails the test at once.
func contextAgainstTruth(t *testing.T) string {
	cfg := sim.Config{
		Personality: sim.LlamaCpp, PrefillRate: 5000, PrefillDepthTokens: 4096,
		TokenInterval: 5 * time.Millisecond, DecodeDepthTokens: 8192, BatchCapacity: 1, ContextLength: 16384,
		RequestOverhead: 10 * time.Millisecond, RecordTruth: true,
		// The depth model's cold prompts are cold: no slot serves their
		// shared start from cache.
		SlotCache: new(bool),
	}
	srv, url := startSim(t, cfg)
	plan := setup.DefaultContextPlan()
	plan.Depths, plan.OutputTokens, plan.Repeats = []int{1024, 4096}, 32, 2 // the short prompt comes first all the same
	res, err := RunContext(context.Background(), plan, setup.Endpoint{URL: url}, Observer{Live: NewLive()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Depths) != 3 || res.PrefillBaseline == nil {
		t.Fatalf("complete %v with %d depths, baseline %v: %+v", res.Complete, len(res.Depths), res.PrefillBaseline, res.Warnings)
	}
	// The simulator's record of each conversation: its cold request
	// carries the round's request number (the last ones with a whole
	// answer: the warmup's comes first), its follow-up none (its last turn
	// is not a numbered prompt); each in the order sent.
	var colds, follows []sim.Truth
	for _, tr := range srv.Truths() {
		switch {
		case !tr.Stream:
		case tr.N < 0:
			follows = append(follows, tr)
		case len(tr.Chunks) == plan.OutputTokens:
			colds = append(colds, tr)
		}
	}
	want := len(res.Depths) * plan.Repeats
	if len(colds) < want || len(follows) != want {
		t.Fatalf("the simulator recorded %d whole answers and %d follow-ups, want %d conversations", len(colds), len(follows), want)
	}
	colds = colds[len(colds)-want:]
	var miss []string
	missf := func(format string, args ...any) { miss = append(miss, fmt.Sprintf(format, args...)) }
	median := func(xs []float64) float64 {
		s := slices.Clone(xs)
		slices.Sort(s)
		return stats.Quantile(s, 0.5)
	}
	// Per depth, one a conversation: the record's TTFT windows and decode
	// rates, and the model's rates and TTFTs (ms).
	type record struct {
		cold, follow []ttftWindow
		decode       []float64
	}
	type figures struct{ ttft, follow, decode, prefill []float64 }
	rec, model := make([]record, len(res.Depths)), make([]figures, len(res.Depths))
	const overhead = 11 // the simulator's template tokens
	for i, d := range res.Depths {
		if d.OK != 2 || len(d.Runs) != 2 {
			t.Fatalf("depth %d: %d of %d conversations ok: %v", d.Depth, d.OK, len(d.Runs), d.Failures)
		}
		if d.Depth > 0 && (d.Off == nil || math.Abs(*d.Off) > 0.02) {
			t.Errorf("depth %d: the prompts landed %v off", d.Depth, d.Off)
		}
		for r, c := range d.Runs {
			rc, rf := colds[i*plan.Repeats+r], follows[i*plan.Repeats+r]
			p, f, n := c.Cold.PromptTokens, c.FollowUp.PromptTokens, len(rc.Chunks)
			if rc.PromptTokens != p || rf.PromptTokens != f || n != c.Cold.CompletionTokens || n < 2 || len(rf.Chunks) == 0 {
				t.Fatalf("depth %d, repeat %d: the record (%d and %d prompt tokens, %d chunks) is not the conversation (%d and %d, %d tokens)",
					d.Depth, r+1, rc.PromptTokens, rf.PromptTokens, n, p, f, c.Cold.CompletionTokens)
			}
			truth, err := cfg.Depth(p, p-overhead, n, f)
			if err != nil {
				t.Fatal(err)
			}
			// The record never beats the model.
			prefill, decode := cfg.PrefillTime(p, 0), cfg.DecodeTime(p, n)
			for _, tr := range []sim.Truth{rc, rf} {
				if w := tr.Admitted.Sub(tr.Arrived); w < cfg.RequestOverhead {
					t.Errorf("depth %d: a request admitted %v after it arrived, before its %v of overhead", d.Depth, w, cfg.RequestOverhead)
				}
			}
			if got := rc.Chunks[0].Sub(rc.Admitted); got < prefill {
				t.Errorf("depth %d: cold first token %v after admission, sooner than the model's %v", d.Depth, got, prefill)
			}
			if got := rc.Chunks[n-1].Sub(rc.Admitted); got < prefill+decode {
				t.Errorf("depth %d: cold last token %v after admission, sooner than the model's %v + %v", d.Depth, got, prefill, decode)
			}
			if got, want := rf.Chunks[0].Sub(rf.Admitted), cfg.PrefillTime(f, truth.FollowUpCached); got < want {
				t.Errorf("depth %d: follow-up first token %v after admission, sooner than the model's %v", d.Depth, got, want)
			}
			if c.FollowUp.CachedTokens == nil || *c.FollowUp.CachedTokens != truth.FollowUpCached {
				t.Errorf("depth %d: follow-up cached %v tokens, the cache model %d", d.Depth, c.FollowUp.CachedTokens, truth.FollowUpCached)
			}
			// What the record says the simulator did.
			cold, follow := windowOf(rc, cfg.RequestOverhead), windowOf(rf, cfg.RequestOverhead)
			rate := float64(n) / rc.Chunks[n-1].Sub(rc.Chunks[0]).Seconds()
			rec[i].cold, rec[i].follow, rec[i].decode = append(rec[i].cold, cold), append(rec[i].follow, follow), append(rec[i].decode, rate)
			model[i].ttft, model[i].prefill = append(model[i].ttft, ms(truth.ColdTTFT)), append(model[i].prefill, truth.PrefillTPS)
			model[i].decode, model[i].follow = append(model[i].decode, truth.DecodeTPS), append(model[i].follow, ms(truth.FollowUpTTFT))
			t.Logf("depth %d: TTFT %.1f ms (record %v, model %.1f), prefill %v (model %.0f), decode %.1f (record %.1f, model %.1f), follow-up TTFT %.1f ms (record %v, model %.1f, %d cached of %d)",
				d.Depth, *c.Cold.TTFTMs, cold, ms(truth.ColdTTFT), fmtPtr(c.Cold.PrefillTPS), truth.PrefillTPS, *c.Cold.DecodeTPS, rate, truth.DecodeTPS,
				*c.FollowUp.TTFTMs, follow, ms(truth.FollowUpTTFT), *c.FollowUp.CachedTokens, f)
			if d.Depth == 0 && c.Cold.PrefillTPS != nil {
				t.Errorf("short prompt: prefill %v, want none (it is the baseline)", *c.Cold.PrefillTPS)
			}
			if d.Depth > 0 && c.Cold.PrefillTPS == nil {
				t.Errorf("depth %d: no prefill rate", d.Depth)
			}
			if d.Depth == 0 && !cold.holds(*c.Cold.TTFTMs) {
				missf("short prompt: TTFT %.2f ms, the record's %v", *c.Cold.TTFTMs, cold)
			}
			if !nearShare(*c.Cold.DecodeTPS, rate, 0.02) {
				missf("depth %d: decode %.2f tok/s, the record's %.2f", d.Depth, *c.Cold.DecodeTPS, rate)
			}
			if !follow.holds(*c.FollowUp.TTFTMs) {
				missf("depth %d: follow-up TTFT %.2f ms, the record's %v", d.Depth, *c.FollowUp.TTFTMs, follow)
			}
			// The simulator's own timings are llama.cpp's: the plan keeps
			// them beside its figures.
			if s := c.Cold.Server; s == nil || s.CacheN != 0 || s.PromptN != p || !nearShare(s.PredictedTPS, rate, 0.02) {
				t.Errorf("depth %d: server timings %+v, want its decode the record's %.2f", d.Depth, s, rate)
			}
		}
	}
	// A prefill above the short prompt: its read tokens beyond the short
	// prompt's over its TTFT beyond theirs. Over the record's windows it
	// lies in a range the figure must be within 2 % of; over the model's
	// TTFTs it must be within 2 % of the model's rate.
	base := res.PrefillBaseline.ReadTokens
	above := func(read int, ttft, baseTTFT float64) float64 {
		return (float64(read) - base) / ((ttft - baseTTFT) / 1000)
	}
	var baseLo, baseHi []float64
	for _, w := range rec[0].cold {
		baseLo, baseHi = append(baseLo, w.lo), append(baseHi, w.hi)
	}
	for i, d := range res.Depths {
		if d.Depth == 0 {
			continue
		}
		var los, his []float64
		for r, c := range d.Runs {
			if c.Cold.PrefillTPS == nil {
				continue
			}
			read, w := c.Cold.ReadTokens(), rec[i].cold[r]
			lo, hi := above(read, w.hi, median(baseLo))*0.98, above(read, w.lo, median(baseHi))*1.02
			los, his = append(los, lo), append(his, hi)
			if got := *c.Cold.PrefillTPS; got < lo || got > hi {
				missf("depth %d: prefill %.1f tok/s, the record's %.1f…%.1f", d.Depth, got, lo, hi)
			}
			if got, want := above(read, model[i].ttft[r], median(model[0].ttft)), model[i].prefill[r]; !nearShare(got, want, 0.02) {
				t.Errorf("depth %d: the method gives the model's TTFTs a prefill of %.1f tok/s, the model's is %.1f", d.Depth, got, want)
			}
		}
		if got, lo, hi := d.PrefillTPS.P50, median(los), median(his); got < lo || got > hi {
			missf("depth %d: prefill p50 %.1f tok/s, the record's %.1f…%.1f", d.Depth, got, lo, hi)
		}
	}
	// Each depth's published medians: those of its conversations, each
	// within its bar of the record, so within the bar of the record's.
	for i, d := range res.Depths {
		if got, want := d.DecodeTPS.P50, median(rec[i].decode); !nearShare(got, want, 0.02) {
			missf("depth %d: decode p50 %.2f tok/s, the record's %.2f", d.Depth, got, want)
		}
		var lo, hi []float64
		for _, w := range rec[i].follow {
			lo, hi = append(lo, w.lo), append(hi, w.hi)
		}
		if w := (ttftWindow{median(lo), median(hi)}); !w.holds(d.CachedTTFTMs.P50) {
			missf("depth %d: follow-up TTFT p50 %.2f ms, the record's %v", d.Depth, d.CachedTTFTMs.P50, w)
		}
	}
	// Deeper is slower, both ways, and at 4k a cached follow-up is far
	// quicker than its cold prompt: in the model, by far more than any bar
	// above.
	first, last := model[1], model[2]
	if !(median(last.decode) < median(first.decode)*0.9 && median(last.prefill) < median(first.prefill)*0.9) {
		t.Errorf("the model's decode %.1f → %.1f, prefill %.0f → %.0f tok/s: no slowdown with depth",
			median(first.decode), median(last.decode), median(first.prefill), median(last.prefill))
	}
	if cached, cold := median(last.follow), median(last.ttft); cached*5 > cold {
		t.Errorf("at 4k the model's cached follow-up takes %.1f ms, against %.1f ms cold", cached, cold)
	}
	return strings.Join(miss, "; ")
}

// TestContextRun runs the plan end to end on the demo's simulator, fast:
// the document's shape, the raw samples of every round, the live view and
// the words of its headline.
func TestContextRun(t *testing.T) {
	t.Parallel()
	cfg := sim.ContextDemo()
	cfg.PrefillRate, cfg.TokenInterval = 200000, time.Millisecond
	_, url := startSim(t, cfg)
	plan := setup.DefaultContextPlan()
	plan.Depths, plan.OutputTokens, plan.Repeats, plan.Users = []int{0, 1024, 2048}, 8, 2, 2
	plan.Timeout = 20 * time.Second
	live := NewLive()
	res, err := RunContext(context.Background(), plan, setup.Endpoint{URL: url, Name: "sim"}, Observer{Live: live})
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
	if s := live.Snapshot(); s.Phase != PhaseDone || s.OverallTotal != 3*2*2*2 || s.StageName != "depth 2k" {
		t.Errorf("live at the end: phase %q, total %d, stage %q", s.Phase, s.OverallTotal, s.StageName)
	}
	if h := res.Headline(); !strings.Contains(h, "From a short prompt to 2048 tokens of context") || !strings.Contains(h, "as a cached follow-up") {
		t.Errorf("headline: %s", h)
	}
	data, err := results.MarshalDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.ContextDoc.Decode(data)
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
		plan setup.ContextPlan
		det  *results.Detection
		want []int
	}{
		{"16k context", setup.DefaultContextPlan(), ctx16k, []int{0, 1024, 2048, 4096, 8192}},
		{"4k context", setup.DefaultContextPlan(), &results.Detection{ContextLength: 4096}, []int{0, 1024, 2048}},
		{"unknown context", setup.DefaultContextPlan(), nil, []int{0, 1024, 2048, 4096, 8192, 16384, 32768}},
		{"tiny context", setup.DefaultContextPlan(), &results.Detection{ContextLength: 512}, []int{0}},
		{"given, sorted", setup.ContextPlan{Depths: []int{8192, 0, 1024, 1024}}, ctx16k, []int{0, 1024, 8192}},
		{"given without the short prompt", setup.ContextPlan{Depths: []int{8192, 1024}}, ctx16k, []int{0, 1024, 8192}},
	}
	for _, tt := range tests {
		if got := ContextDepths(tt.plan, tt.det); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	p := setup.DefaultContextPlan()
	p.Depths = []int{0, 16384}
	err := ContextFit(p, ctx16k, "")
	var ce *ContextError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "depth 16384 does not fit") || !strings.Contains(err.Error(), "llama-server: -c") ||
		!strings.Contains(err.Error(), "lower the depths (--depths) or the answer (--output-tokens)") {
		t.Errorf("Fit(16k on 16k) = %v", err)
	}
	if err := ContextFit(p, ctx16k, "the depths or the answer length"); err == nil || !strings.Contains(err.Error(), "lower the depths or the answer length, or start") {
		t.Errorf("Fit in the app's words = %v", err)
	}
	p.Depths = []int{0, 8192}
	if err := ContextFit(p, ctx16k, ""); err != nil {
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
	p := setup.DefaultContextPlan()
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
	p := setup.DefaultContextPlan()
	p.Depths = []int{0, 8192}
	res, err := RunContext(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
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
	p := setup.DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{0, 1024, 2048, 4096, 8192}, 8, 1
	res, err := RunContext(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
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
	p := setup.DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{0, 1024, 2048, 8192, 16384}, 8, 1
	res, err := RunContext(context.Background(), p, setup.Endpoint{URL: hs.URL}, Observer{})
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
	c := newConn(setup.Endpoint{}, setup.Base{}, time.Now())
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
	p := setup.DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{0, 1024, 2048}, 64, 2
	log := func(line string) {
		if strings.HasPrefix(line, "depth 1k:") {
			// Stop while the first 1k answer streams.
			time.AfterFunc(30*time.Millisecond, cancel)
		}
	}
	res, err := RunContext(ctx, p, setup.Endpoint{URL: url}, Observer{Log: log})
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
	p := setup.DefaultContextPlan()
	p.Depths, p.OutputTokens, p.Repeats = []int{1024}, 8, 1
	res, err := RunContext(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
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
