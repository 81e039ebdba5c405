package engine

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// What real servers do that a benchmark must handle (docs/servers.md),
// played by the simulator: llama-server closes the connection after every
// streamed answer and keeps a prompt cache across runs.

func llamaSim(t *testing.T) string {
	t.Helper()
	cfg := fastSim()
	cfg.Personality = sim.LlamaCpp
	_, url := startSim(t, cfg)
	return url
}

// TestEveryPlanSurvivesCloseAfterStream runs each plan against a server
// that closes the connection after every streamed answer: no request may
// fail for it.
func TestEveryPlanSurvivesCloseAfterStream(t *testing.T) {
	url := llamaSim(t)
	ep := setup.Endpoint{URL: url}

	f, err := Run(context.Background(), smallPlan(), ep, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range f.Runs {
		if m := r.Metrics; m.RequestsError+m.RequestsTimeout > 0 {
			t.Errorf("kovara level %d: %d errors %v", r.Concurrency, m.RequestsError, f.Local.Levels[i].Messages)
		}
	}
	if want := map[bool]string{true: results.ReceiveClockKernel, false: results.ReceiveClockRead}[runtime.GOOS == "linux"]; f.Local.ReceiveClock != want {
		t.Errorf("receive clock %q, want %q on %s", f.Local.ReceiveClock, want, runtime.GOOS)
	}
	if note := results.ConnectionNote(f); !strings.Contains(note, "after every answer") {
		t.Errorf("connection note %q", note)
	}
	if f.Local.Calibration == nil || !f.Local.Calibration.Converged {
		t.Errorf("calibration %+v", f.Local.Calibration)
	}

	sp := setup.DefaultStagesPlan()
	sp.Quick, sp.Users, sp.Timeout = true, 4, 30*time.Second
	st, err := RunStages(context.Background(), sp, ep, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Failed()) > 0 || (st.Users != nil && st.Users.Failed > 0) {
		t.Errorf("three stages: failed %v, users %+v, warnings %v", st.Failed(), st.Users, st.Warnings)
	}

	dp := setup.DefaultSpecDecPlan()
	dp.Levels, dp.MaxTokens, dp.Timeout = []int{1, 4}, 16, 30*time.Second
	sd, err := RunSpecDec(context.Background(), dp, ep, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range sd.Levels {
		if lv.Errors > 0 {
			t.Errorf("speculative decoding at %d: %d errors %v", lv.Concurrency, lv.Errors, lv.Failures)
		}
	}
}

// TestRepeatedRunMeetsNoCache: two runs in a row on a server with a prompt
// cache that, as llama.cpp's slot cache does, serves every prompt the
// chat template and the instruction it shares with the one before. With a
// fresh seed each (the default) the second is as cold as the first, and
// what every request shares by design, measured before warmup, is no
// problem; with the same fixed seed the second run's prompts come from the
// cache, and it says so, with llama-server's own flags.
func TestRepeatedRunMeetsNoCache(t *testing.T) {
	url := llamaSim(t)
	run := func(fixed bool) *results.File {
		t.Helper()
		p := smallPlan()
		p.Concurrency, p.Warmup = []int{2}, 0
		if fixed {
			p.Seed, p.FixedSeed = 7, true
		}
		f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	cached := func(f *results.File) float64 { return f.Local.Levels[0].PromptCache.Share() }
	// The template (11 tokens) and "Write a long story that uses the
	// following words. Request" (10 words) start every prompt.
	const shared = 11 + 10

	a, b := run(false), run(false)
	if a.Runs[0].Seed == b.Runs[0].Seed || !a.Local.FreshSeed {
		t.Errorf("fresh seeds %d and %d (fresh_seed %v)", a.Runs[0].Seed, b.Runs[0].Seed, a.Local.FreshSeed)
	}
	for _, f := range []*results.File{a, b} {
		pc := f.Local.Levels[0].PromptCache
		if pc == nil || pc.Source != results.CacheFromUsage {
			t.Fatalf("prompt cache %+v, want the server's per-request count", pc)
		}
		if pc.SharedTokens == nil || *pc.SharedTokens != shared {
			t.Errorf("shared tokens %v, want %d measured by the pair", pc.SharedTokens, shared)
		}
		// The shared start alone is above the old flat line: it is the
		// measured share that keeps it from being a problem.
		if got := cached(f); got <= results.CacheWarnShare || pc.CachedTokens < int64(shared*pc.Requests) {
			t.Errorf("fresh seed: %.1f%% from cache (%d of %d), want the shared start of every request", 100*got, pc.CachedTokens, pc.PromptTokens)
		}
		if ws := warningTexts(f); containsWord(ws, "prompt cache") {
			t.Errorf("fresh seed: a cache problem %v", ws)
		}
		mustValid(t, f)
	}

	run(true)
	c := run(true)
	if got := cached(c); got < 0.5 {
		t.Errorf("second run with --seed 7: %.0f%% from cache, want most of it", 100*got)
	}
	ws := warningTexts(c)
	for _, want := range []string{"from its prompt cache", "beyond the 21 tokens per request", "--seed 7", "--cache-reuse", "--cache-ram 0"} {
		if !containsWord(ws, want) {
			t.Errorf("warnings %v lack %q", ws, want)
		}
	}
	mustValid(t, c)
}

// TestPrefixCacheFromMetrics: a vLLM server says nothing per request, so
// the level's cached share comes from its /metrics counters.
func TestPrefixCacheFromMetrics(t *testing.T) {
	on := true
	cfg := fastSim()
	cfg.PromptCache = &on
	_, url := startSim(t, cfg)
	p := smallPlan()
	p.Concurrency, p.Warmup, p.Seed, p.FixedSeed = []int{2}, 0, 3, true
	for i, want := range []struct{ lo, hi float64 }{{0, results.CacheWarnShare}, {0.5, 1}} {
		f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		pc := f.Local.Levels[0].PromptCache
		if pc == nil || pc.Source != results.CacheFromMetrics || !strings.Contains(pc.Metrics, "vllm:prefix_cache_hits_total") {
			t.Fatalf("run %d: prompt cache %+v", i+1, pc)
		}
		if got := pc.Share(); got < want.lo || got > want.hi {
			t.Errorf("run %d: %.0f%% from cache (%d of %d), want %.0f–%.0f%%", i+1, 100*got, pc.CachedTokens, pc.PromptTokens, 100*want.lo, 100*want.hi)
		}
		if i == 1 && !containsWord(warningTexts(f), "server-wide counters") {
			t.Errorf("warnings %v", warningTexts(f))
		}
	}
}

// TestCalibrationSurvivesDroppedConnection: the server drops the first
// calibration request's connection without answering, twice. Calibration
// tries it again without using up an attempt, and converges.
func TestCalibrationSurvivesDroppedConnection(t *testing.T) {
	srv := sim.New(fastSim())
	t.Cleanup(func() { srv.Close() })
	var dropped atomic.Int32
	first := []byte("Request " + strconv.FormatInt(prompt.CalibrationRequest(0), 10) + ":")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, first) && dropped.Add(1) <= 2 {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p := smallPlan()
	p.Concurrency, p.Requests = []int{1}, 2
	f, err := Run(context.Background(), p, setup.Endpoint{URL: hs.URL}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	cal := f.Local.Calibration
	if dropped.Load() < 3 || !cal.Converged || containsWord(warningTexts(f), "calibration") {
		t.Errorf("dropped %d; calibration %+v; warnings %v", dropped.Load(), cal, warningTexts(f))
	}
}
