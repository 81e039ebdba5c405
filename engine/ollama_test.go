package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// ollamaSim is the simulator as Ollama with every default: a 4096-token
// context it cuts longer prompts to, one request at a time, the model
// loaded on the first request.
func ollamaSim(t *testing.T, edit func(*sim.Config)) string {
	t.Helper()
	cfg := sim.Config{Personality: sim.Ollama, TokenInterval: time.Millisecond, PrefillRate: 400000, ModelLoad: 50 * time.Millisecond}
	if edit != nil {
		edit(&cfg)
	}
	_, url := startSim(t, cfg)
	return url
}

// A plan longer than Ollama's context is refused after the probe, the
// request that loads the model and so lets /api/ps say the context — not
// after four calibration requests and a run on prompts cut to 4096.
func TestOllamaContextRefusedAfterTheProbe(t *testing.T) {
	url := ollamaSim(t, nil)
	p := smallPlan()
	p.InputTokens, p.OutputTokens = 6000, 64
	var requests int
	obs := Observer{Log: func(string) {}, Requests: func(int, []RequestRecord) { requests++ }}
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, obs)
	var pe *PlanError
	if f != nil || !errors.As(err, &pe) || requests != 0 {
		t.Fatalf("got file %v, err %v, %d levels measured; want a *PlanError before any level", f != nil, err, requests)
	}
	for _, want := range []string{"the server's context holds 4096 (from /api/ps context_length)", "cut to 4096 tokens without an error", "OLLAMA_CONTEXT_LENGTH"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A server that truncates without saying its context (here Ollama with
// /api/ps closed) is caught in calibration: more words, no more tokens.
func TestTruncationFoundInCalibration(t *testing.T) {
	srv := sim.New(sim.Config{Personality: sim.Ollama, TokenInterval: time.Millisecond, PrefillRate: 400000})
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/ps" {
			http.NotFound(w, r)
			return
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p := smallPlan()
	p.InputTokens, p.OutputTokens = 6000, 64
	f, err := Run(context.Background(), p, setup.Endpoint{URL: hs.URL}, Observer{})
	var pe *PlanError
	var ce *ContextError
	if f != nil || !errors.As(err, &pe) || !errors.As(err, &ce) || !ce.Truncated || ce.Context != 4096 {
		t.Fatalf("got file %v, err %v; want a *PlanError for prompts cut to 4096", f != nil, err)
	}
	if !strings.Contains(err.Error(), "cut longer prompts to 4096 tokens without an error") || !strings.Contains(err.Error(), "OLLAMA_CONTEXT_LENGTH") {
		t.Errorf("error %q", err)
	}
}

// One request at a time: Ollama's defaults serve one request at a time,
// and a run at 1 and 4 users says so as a problem naming
// OLLAMA_NUM_PARALLEL; with four at once, nothing. The verdict is drawn
// from the run's timing, so it is held on runs of the real Ollama
// (engine/results/testdata/queueing, also TestQueueingOnRealRuns); the
// simulator's runs hold what any machine gives: every request answered,
// the simulator's own record never holding more requests at once than its
// slots (one by default), and the note of the model loaded by the first
// request.
func TestOllamaOneAtATime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capture  string
		parallel int // the simulator's slots; 0: Ollama's default, 1
		problem  bool
	}{{"default", "ollama-default-1-4.json", 0, true}, {"OLLAMA_NUM_PARALLEL=4", "ollama-par4-1-4.json", 4, false}} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("results", "testdata", "queueing", tc.capture))
			if err != nil {
				t.Fatal(err)
			}
			captured, err := results.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range results.Warnings(captured) {
				if w.Kind == results.WarnQueueing && w.Severity == results.SeverityProblem {
					got = append(got, w.Text)
				}
			}
			if tc.problem != (len(got) == 1) || (!tc.problem && len(got) != 0) {
				t.Fatalf("%s: queueing problems %q, want one: %v", tc.capture, got, tc.problem)
			}
			if tc.problem && (!strings.Contains(got[0], "about 1 request at a time") || !strings.Contains(got[0], "OLLAMA_NUM_PARALLEL=4")) {
				t.Errorf("%s: problem %q", tc.capture, got[0])
			}

			cfg := sim.Config{Personality: sim.Ollama, TokenInterval: 2 * time.Millisecond, PrefillRate: 400000, ModelLoad: 50 * time.Millisecond,
				BatchCapacity: tc.parallel, RecordTruth: true}
			srv, url := startSim(t, cfg)
			p := smallPlan()
			p.Concurrency, p.OutputTokens, p.Requests = []int{1, 4}, 48, 12
			f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			for _, run := range f.Runs {
				if run.Metrics.RequestsOK != p.Requests {
					t.Errorf("concurrency %d: %d of %d requests answered", run.Concurrency, run.Metrics.RequestsOK, p.Requests)
				}
			}
			slots := max(tc.parallel, 1)
			if most := mostHeld(srv.Truths()); most < 1 || most > slots {
				t.Errorf("the simulator's record holds %d requests at once, want 1 to %d (its slots)", most, slots)
			}
			// The model loaded on the probe, before anything measured,
			// and the run says so.
			if !containsWord(warningTexts(f), "the first request loaded it") {
				t.Errorf("warnings %q should say the model was loaded by the first request", warningTexts(f))
			}
		})
	}
}

// mostHeld is the most requests the simulator's record shows holding a
// slot at once: each from its admission to its last chunk (the slot is
// released after it).
func mostHeld(ts []sim.Truth) int {
	type event struct {
		at    time.Time
		delta int
	}
	var evs []event
	for _, tr := range ts {
		if tr.Admitted.IsZero() {
			continue
		}
		end := tr.Admitted
		if n := len(tr.Chunks); n > 0 {
			end = tr.Chunks[n-1]
		}
		evs = append(evs, event{tr.Admitted, 1}, event{end, -1})
	}
	// A release before an admission at the same instant.
	slices.SortFunc(evs, func(a, b event) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	most, now := 0, 0
	for _, e := range evs {
		now += e.delta
		most = max(most, now)
	}
	return most
}
