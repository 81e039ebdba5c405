package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// The mode against a simulator that drafts k = 4 tokens and accepts each
// with p = 0.6. Each level's counter deltas must equal exactly what the
// simulator counted during that level (read from it between levels, when
// nothing is in flight). The rates themselves are a sample: against the
// model's expectations, acceptance rate (p+…+p⁴)/4 ≈ 0.326 within 0.06
// and mean length 1+p+…+p⁴ ≈ 2.31 within 0.25 (about a thousand drafts
// per level; each answer's last step is cut short, which pulls both
// down a little).
func TestSpecDecAgainstSimulator(t *testing.T) {
	sd := sim.SpecDecode{DraftTokens: 4, Acceptance: 0.6}
	srv, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000, SpecDecode: &sd})
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.MaxTokens = []int{1, 4}, 256
	live := NewLive()
	type counts struct{ d, dt, a int64 }
	var marks []counts
	mark := func() {
		d, dt, a := srv.SpecCounters()
		marks = append(marks, counts{d, dt, a})
	}
	obs := Observer{Live: live, Log: func(s string) {
		if strings.HasPrefix(s, "level ") {
			mark()
		}
	}}
	res, err := RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, obs)
	if err != nil {
		t.Fatal(err)
	}
	mark()
	if !res.Complete || res.Publishable || res.Counters == "" || len(res.Levels) != 2 || res.Format != results.FormatSpecDec {
		t.Fatalf("%+v", res)
	}
	for i, lv := range res.Levels {
		if lv.OK != lv.Requests || lv.Requests != len(SpecDecPrompts) || lv.Spec == nil || lv.Spec.AcceptanceRate == nil {
			t.Fatalf("level %+v", lv)
		}
		want := counts{marks[i+1].d - marks[i].d, marks[i+1].dt - marks[i].dt, marks[i+1].a - marks[i].a}
		if got := (counts{lv.Spec.Drafts, lv.Spec.DraftTokens, lv.Spec.Accepted}); got != want || want.d == 0 {
			t.Errorf("concurrency %d: deltas %+v, the simulator counted %+v", lv.Concurrency, got, want)
		}
		rate, length := *lv.Spec.AcceptanceRate, *lv.Spec.MeanAcceptanceLength
		if !near(rate, float64(want.a)/float64(want.dt), 1e-4) || !near(length, 1+float64(want.a)/float64(want.d), 1e-3) {
			t.Errorf("concurrency %d: rate %v length %v from deltas %+v", lv.Concurrency, rate, length, want)
		}
		if !near(rate, sd.ExpectedRate(), 0.06) || !near(length, sd.ExpectedLength(), 0.25) {
			t.Errorf("concurrency %d: rate %.3f length %.3f, want about %.3f and %.3f", lv.Concurrency, rate, length, sd.ExpectedRate(), sd.ExpectedLength())
		}
		if len(lv.Spec.PerPosition) != 4 || lv.Spec.PerPosition[0] < lv.Spec.PerPosition[3] {
			t.Errorf("per position %v", lv.Spec.PerPosition)
		}
		// Natural stops: the lengths differ and stay under the cap.
		s := lv.OutputTokens
		if s == nil || s.Min >= s.Max || s.Max > 256 || s.P50 < float64(s.Min) || lv.TokenSource != results.TokensUsage {
			t.Errorf("length spread %+v", s)
		}
		if lv.MeanDecodeTPS == nil || lv.OutputTPS == nil || lv.TTFTMsP50 == nil {
			t.Errorf("concurrency %d: rates %v %v, TTFT %v", lv.Concurrency, fmtPtr(lv.MeanDecodeTPS), fmtPtr(lv.OutputTPS), fmtPtr(lv.TTFTMsP50))
		}
	}
	data, err := results.MarshalDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, reasons := results.PublishCheck(data); len(reasons) != 1 || !strings.Contains(reasons[0], "never be published") {
		t.Errorf("publish check: %v", reasons)
	}
	if back, err := results.SpecDecDoc.Decode(data); err != nil || back.Levels[1].Spec.Drafts != res.Levels[1].Spec.Drafts {
		t.Errorf("round trip: %v", err)
	}
	if _, err := results.StagesDoc.Decode(data); err == nil {
		t.Error("a specdec document decoded as a stages one")
	}
}

// Without counters the mode still reports lengths and rates, and says why
// acceptance is missing; a server whose counters exist but see no drafts
// says speculative decoding looks off.
func TestSpecDecWithoutDrafts(t *testing.T) {
	_, plain := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000})
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.MaxTokens, p.Requests = []int{2}, 40, 4
	res, err := RunSpecDec(context.Background(), p, setup.Endpoint{URL: plain}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counters != "" || res.Levels[0].Spec != nil || res.Levels[0].OutputTokens == nil || !containsWord(res.Warnings, "speculative-decoding metrics") {
		t.Errorf("%+v %v", res.Levels[0], res.Warnings)
	}
	if res.Levels[0].Requests != 4 {
		t.Errorf("requests %d, want 4", res.Levels[0].Requests)
	}

	// Counters that never move.
	fixed, err := os.ReadFile("testdata/vllm_specdec_before.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000})
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			w.Write(fixed)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	res, err = RunSpecDec(context.Background(), p, setup.Endpoint{URL: hs.URL}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	lv := res.Levels[0]
	if res.Counters == "" || lv.Spec == nil || lv.Spec.Drafts != 0 || lv.Spec.AcceptanceRate != nil || !strings.Contains(lv.Note, "no drafts") {
		t.Errorf("%+v", lv)
	}
	// Said once for the run, with the fix, and each level's note kept.
	if !containsWord(res.Warnings, "drafted no tokens at any level") || containsWord(res.Warnings, "server-wide") {
		t.Errorf("warnings %q: want the run to say no level drafted anything", res.Warnings)
	}
	if notes := res.LevelNotes(); len(notes) != 1 || !strings.HasPrefix(notes[0], "concurrency 2: no drafts") {
		t.Errorf("level notes %q", notes)
	}

	// With more levels to go, the plan stops after the first, which
	// drafted nothing, instead of running every level to an empty result.
	p.Levels = []int{1, 2, 4}
	res, err = RunSpecDec(context.Background(), p, setup.Endpoint{URL: hs.URL}, Observer{})
	var pe *PlanError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "drafted no tokens in level 1") || !strings.Contains(err.Error(), "-md DRAFT.gguf") {
		t.Fatalf("err %v, want a plan error that says the server does not draft", err)
	}
	if res == nil || len(res.Levels) != 1 || res.Complete {
		t.Errorf("levels measured %d (complete %v), want the first alone", len(res.Levels), res.Complete)
	}
	// The result it keeps says why the other levels were not run (#47).
	if h := res.Headline(); !strings.HasPrefix(h, "Stopped after concurrency 1: the server drafted no tokens there") || !strings.Contains(h, "concurrency 2 and 4 were not run") {
		t.Errorf("headline %q does not say why concurrency 2 and 4 were not run", h)
	}
}

// TestSpecDecPlanValidate: a plan that cannot run is refused as a
// *PlanError naming each fault, before a single request. The simulator
// answers, so nothing but the plan's own check can refuse these (each
// plan is otherwise small enough to run to the end in a moment).
func TestSpecDecPlanValidate(t *testing.T) {
	srv, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000, RecordTruth: true})
	for _, c := range []struct {
		plan setup.SpecDecPlan
		want string
	}{
		{setup.SpecDecPlan{Levels: []int{1, 0}, Requests: 1, MaxTokens: 4}, "concurrency 0 is not allowed: each level needs at least 1 request in flight"},
		{setup.SpecDecPlan{Levels: []int{1}, Requests: -1, MaxTokens: 4}, "requests -1 is not allowed"},
		{setup.SpecDecPlan{Levels: []int{1}, Requests: 1, MaxTokens: -5}, "max tokens -5 is not allowed"},
		{setup.SpecDecPlan{Levels: []int{1}, Requests: 1, MaxTokens: 4, Timeout: -time.Second}, "timeout -1s is not allowed: it must be more than 0"},
		{setup.SpecDecPlan{Levels: []int{1}, Requests: -2, MaxTokens: -1}, "requests -2 is not allowed\nmax tokens -1 is not allowed"},
	} {
		// The deadline only bounds a run that should never have started.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := RunSpecDec(ctx, c.plan, setup.Endpoint{URL: url}, Observer{})
		cancel()
		var pe *PlanError
		if !errors.As(err, &pe) {
			t.Errorf("%+v: err %v, want a *PlanError", c.plan, err)
			continue
		}
		if got := err.Error(); got != c.want {
			t.Errorf("%+v: got %q, want %q", c.plan, got, c.want)
		}
		if res != nil {
			t.Errorf("%+v: a refused plan returned a result", c.plan)
		}
	}
	if n := len(srv.Truths()); n != 0 {
		t.Errorf("the simulator answered %d chat requests of plans that should have been refused", n)
	}
}

func fmtPtr(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// TestSpecDecLlamaCpp: against the llamacpp personality drafting with
// every draft accepted, both sources say 100 % at every level — the
// server's llamacpp: counters and each answer's timings.draft_n — with
// the mean acceptance length of the counters, per position all accepted,
// and no warning that the two disagree.
func TestSpecDecLlamaCpp(t *testing.T) {
	sd := sim.SpecDecode{DraftTokens: 3, Acceptance: 1}
	_, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 200000, SpecDecode: &sd})
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.MaxTokens = []int{1, 4}, 128
	res, err := RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Counters, "llama.cpp /metrics counters (llamacpp:spec_decode_num_drafts_total") {
		t.Errorf("counters %q", res.Counters)
	}
	for _, lv := range res.Levels {
		per, win := lv.PerRequest, lv.Spec
		if per == nil || win == nil || per.AcceptanceRate == nil || win.AcceptanceRate == nil {
			t.Fatalf("concurrency %d: per request %+v, counters %+v", lv.Concurrency, per, win)
		}
		if *per.AcceptanceRate != 1 || *win.AcceptanceRate != 1 || per.Requests != lv.OK || per.RateSpread.Min != 1 {
			t.Errorf("concurrency %d: acceptance %v (answers) and %v (counters), want 100 %% both", lv.Concurrency, *per.AcceptanceRate, *win.AcceptanceRate)
		}
		// The answers' counts cannot tell a final step that drafted nothing
		// (no room left) from one that did, so their drafts can run one an
		// answer over the counters' and their mean length a little under.
		// So the answers' mean length lies between the counters' and
		// what one more step an answer makes of it (a loaded machine's
		// simulator ended every answer so: 3.91 against 4 over 7 answers).
		shortest := 1 + float64(win.Accepted)/float64(win.Drafts+int64(per.Requests))
		if per.Accepted != win.Accepted || per.DraftTokens != win.DraftTokens || per.Drafts < win.Drafts || per.Drafts > win.Drafts+int64(per.Requests) ||
			*per.MeanAcceptanceLength < shortest-0.001 || *per.MeanAcceptanceLength > *win.MeanAcceptanceLength+0.001 {
			t.Errorf("concurrency %d: answers %d drafts %d accepted length %v; counters %d, %d, %v",
				lv.Concurrency, per.Drafts, per.Accepted, *per.MeanAcceptanceLength, win.Drafts, win.Accepted, *win.MeanAcceptanceLength)
		}
		// The first position is drafted at every step; the last steps of an
		// answer draft fewer (no room), as llama-server's did (16/16/15).
		if len(win.PerPosition) != 3 || win.PerPosition[0] != 1 || win.PerPosition[2] < 0.9 {
			t.Errorf("concurrency %d: per position %v, want every drafted position accepted", lv.Concurrency, win.PerPosition)
		}
	}
	if containsWord(res.Warnings, "disagree") || containsWord(res.Warnings, "counts otherwise") {
		t.Errorf("warnings %v", res.Warnings)
	}
}

// TestSpecDecNothingAccepted: a drafter the target never agrees with gives
// acceptance 0 and a mean length of 1, without dividing by zero.
func TestSpecDecNothingAccepted(t *testing.T) {
	sd := sim.SpecDecode{DraftTokens: 3, Acceptance: -1}
	_, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 200000, SpecDecode: &sd})
	p := setup.DefaultSpecDecPlan()
	p.Levels, p.MaxTokens = []int{2}, 64
	res, err := RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	lv := res.Levels[0]
	if lv.PerRequest == nil || *lv.PerRequest.AcceptanceRate != 0 || *lv.PerRequest.MeanAcceptanceLength != 1 ||
		lv.Spec == nil || *lv.Spec.AcceptanceRate != 0 || *lv.Spec.MeanAcceptanceLength != 1 {
		t.Errorf("per request %+v, counters %+v", lv.PerRequest, lv.Spec)
	}
}

// TestNoSpecCountersNamesTheFamily: the warning names the counters the app
// looked for: the detected family's, or every family's when it is none of
// them.
func TestNoSpecCountersNamesTheFamily(t *testing.T) {
	t.Parallel()
	if got := noSpecCounters(&results.Detection{Family: results.FamilyLlamaCpp}); !strings.Contains(got, "none of llama.cpp's") || !strings.Contains(got, "llamacpp:spec_decode_num_drafts_total") || strings.Contains(got, "vllm:") {
		t.Errorf("llama.cpp: %q", got)
	}
	got := noSpecCounters(&results.Detection{Family: ""})
	for _, want := range []string{"vllm:spec_decode_num_drafts_total", "llamacpp:spec_decode_num_drafts_total", "sglang:spec_accept_length"} {
		if !strings.Contains(got, want) {
			t.Errorf("unknown family: %q lacks %q", got, want)
		}
	}
	// Ollama has none to look for: said plainly.
	if got := noSpecCounters(&results.Detection{Family: results.FamilyOllama}); !strings.HasPrefix(got, "Ollama reports no speculative-decoding counters") || strings.Contains(got, "vllm:") {
		t.Errorf("ollama: %q", got)
	}
}
