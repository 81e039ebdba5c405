package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
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
	p := DefaultSpecDecPlan()
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
	res, err := RunSpecDec(context.Background(), p, Endpoint{URL: url}, obs)
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
	data, err := results.MarshalSpecDec(res)
	if err != nil {
		t.Fatal(err)
	}
	if _, reasons := results.PublishCheck(data); len(reasons) != 1 || !strings.Contains(reasons[0], "never be published") {
		t.Errorf("publish check: %v", reasons)
	}
	if back, err := results.DecodeSpecDec(data); err != nil || back.Levels[1].Spec.Drafts != res.Levels[1].Spec.Drafts {
		t.Errorf("round trip: %v", err)
	}
	if _, err := results.DecodeStages(data); err == nil {
		t.Error("a specdec document decoded as a stages one")
	}
}

// Without counters the mode still reports lengths and rates, and says why
// acceptance is missing; a server whose counters exist but see no drafts
// says speculative decoding looks off.
func TestSpecDecWithoutDrafts(t *testing.T) {
	_, plain := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000})
	p := DefaultSpecDecPlan()
	p.Levels, p.MaxTokens, p.Requests = []int{2}, 40, 4
	res, err := RunSpecDec(context.Background(), p, Endpoint{URL: plain}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counters != "" || res.Levels[0].Spec != nil || res.Levels[0].OutputTokens == nil || !hasWarning(res.Warnings, "no speculative-decoding counters") {
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
	res, err = RunSpecDec(context.Background(), p, Endpoint{URL: hs.URL}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	lv := res.Levels[0]
	if res.Counters == "" || lv.Spec == nil || lv.Spec.Drafts != 0 || lv.Spec.AcceptanceRate != nil || !strings.Contains(lv.Note, "no drafts") {
		t.Errorf("%+v", lv)
	}
}

func TestSpecDecPlanValidate(t *testing.T) {
	t.Parallel()
	for _, p := range []SpecDecPlan{{Levels: []int{0}}, {Requests: -1}, {MaxTokens: -5}} {
		if _, err := RunSpecDec(context.Background(), p, Endpoint{URL: "http://127.0.0.1:1"}, Observer{}); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

func fmtPtr(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
