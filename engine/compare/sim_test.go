package compare

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// Through the real engine against the built-in simulator on loopback
// (the test imports engine; the package never does): what the noise
// judgement reads from a real run's raw samples is what its records say,
// and replaying a level's requests in the order they were taken takes
// its measured window. Only what holds on any machine is asserted here:
// how much a live run's timing wanders depends on what else loads the
// machine, so whether a change is beyond noise is held on seeded samples
// of the same shape (TestNoiseAtTheSimulatorsShape).
//
// Not parallel: the package's other tests resample thousands of levels,
// and a client starved by them measures its own waits, not the server.
func TestNoiseOnTheSimulator(t *testing.T) {
	plan := setup.DefaultPlan()
	plan.InputTokens, plan.OutputTokens = 200, 8
	plan.Concurrency, plan.Requests, plan.Warmup = []int{2, 4}, 100, 4
	plan.Timeout = 30 * time.Second
	srv, url, err := sim.Start(sim.Config{TokenInterval: 8 * time.Millisecond, PrefillRate: 50_000, Jitter: 0.2, Seed: 1}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	f, err := engine.Run(context.Background(), plan, engine.Endpoint{URL: url + "/v1"}, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}

	if len(f.Runs) != len(plan.Concurrency) {
		t.Fatalf("%d records, want %d", len(f.Runs), len(plan.Concurrency))
	}
	for _, r := range f.Runs {
		ls := f.SamplesAt(r.Concurrency)
		if ls == nil {
			t.Fatalf("c%d: no raw samples", r.Concurrency)
		}
		// Every request of the level is in its samples, each a whole
		// answer, on one of the level's users.
		if len(ls.Requests) != plan.Requests || r.Metrics.RequestsOK != plan.Requests || r.Metrics.RequestsError != 0 || ls.Slots != r.Concurrency {
			t.Errorf("c%d: %d samples on %d slots, %d ok and %d failed in the record; want %d ok on %d", r.Concurrency,
				len(ls.Requests), ls.Slots, r.Metrics.RequestsOK, r.Metrics.RequestsError, plan.Requests, r.Concurrency)
		}
		for i, q := range ls.Requests {
			if !q.OK() || q.OutputTokens(ls.AllUsage()) != plan.OutputTokens || q.Slot < 0 || q.Slot >= ls.Slots {
				t.Errorf("c%d request %d: %+v, want %d tokens on a slot below %d", r.Concurrency, i, q, plan.OutputTokens, ls.Slots)
				break
			}
		}

		// What the samples say is what the records say.
		sp, err := spreadOf(ls)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range judgedIDs {
			m, _ := MetricByID(id)
			want, ok := m.Get(r)
			if got := sp.value[statOf[id]]; ok && math.Abs(got/want-1) > 0.002 {
				t.Errorf("c%d %s: %.4f from the samples, %.4f in the record", r.Concurrency, id, got, want)
			}
		}
		// Replaying the level's requests in the order they were taken
		// takes its measured window (to a few µs where two users raced
		// for the last requests).
		lv, err := newLevelSample(ls)
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int32, len(lv.blocks))
		for i := range order {
			order[i] = int32(i)
		}
		if got, want := lv.replay(order), ls.EndUs-ls.StartUs; math.Abs(float64(got-want)) > 0.002*float64(want) {
			t.Errorf("c%d: the replay lasts %d µs, the level %d µs", r.Concurrency, got, want)
		}
	}
}

// simShape is TestNoiseOnTheSimulator's run drawn from a seeded
// generator: levels of 2 and 4 users, 100 requests of 8 tokens, 4 ms to
// the first token (200 prompt tokens at 50,000 tok/s) and 8 ms a token,
// each gap varying by about 12 % (the simulator's ±20 % jitter) and each
// request's pace by 3 % (the client's own wander on loopback).
func simShape() comparetest.Synth {
	s := comparetest.Typical(0, 100, 8)
	s.TTFTUs, s.GapUs, s.PaceSD, s.GapSD = 4_000, 8_000, 0.03, 0.12
	return s
}

// Two runs of the simulator's shape with the same settings differ on no
// metric beyond noise, and a server 10 % slower in decode and prefill is
// called slower on every throughput and on latency and TPOT at both
// levels (and nothing is called faster). The seeds are fixed: the
// nearest of these intervals to zero keeps it out by about 90 % of its
// half width, so the calls stand with intervals near twice as wide. The
// gaps between chunks are left out of what must be called, as a live
// run's medians of them sit where late timer wakeups pile up.
func TestNoiseAtTheSimulatorsShape(t *testing.T) {
	t.Parallel()
	levels := []int{2, 4}
	for seed := uint64(1); seed <= 5; seed++ {
		s := simShape()
		base, same := comparetest.SynthFile(seed, levels, s), comparetest.SynthFile(seed+1000, levels, s)
		s.Slow = 1.1
		slow := comparetest.SynthFile(seed+2000, levels, s)

		v, rows := Compared([]*results.File{base, same}, nil)
		if got := judged(rows, 1, BeyondNoise); len(got) > 0 {
			t.Errorf("seed %d, the same settings: beyond noise %q\n%s", seed, got, v.Changes)
		}
		for _, r := range rows {
			if c := r.Cells[1]; r.Metric.ID == "output_throughput" && c.Noise != WithinNoise {
				t.Errorf("seed %d, the same settings: output tok/s at %d %v", seed, r.Concurrency, c.Noise)
			}
		}

		v, rows = Compared([]*results.File{base, slow}, nil)
		slower := map[string]bool{}
		for _, r := range rows {
			if c := r.Cells[1]; c.Noise == BeyondNoise {
				if c.Better != -1 {
					t.Errorf("seed %d, 10 %% slower: %s at %d called better", seed, r.Metric.ID, r.Concurrency)
				}
				slower[fmt.Sprintf("%s@%d", r.Metric.ID, r.Concurrency)] = true
			}
		}
		for _, c := range levels {
			for _, id := range []string{"output_throughput", "request_throughput", "per_user_throughput", "latency_p50", "tpot_p50"} {
				if !slower[fmt.Sprintf("%s@%d", id, c)] {
					t.Errorf("seed %d, 10 %% slower: %s at %d not called slower\n%s\n%q", seed, id, c, v.Changes, judged(rows, 1, WithinNoise))
				}
			}
		}
	}
}
