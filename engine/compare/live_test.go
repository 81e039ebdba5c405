package compare_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/compare"
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
	f, err := engine.Run(context.Background(), plan, setup.Endpoint{URL: url + "/v1"}, engine.Observer{})
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
		sp, err := compare.SpreadOf(ls)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range compare.JudgedIDs {
			m, _ := compare.MetricByID(id)
			want, ok := m.Get(r)
			if got := sp.Value(id); ok && math.Abs(got/want-1) > 0.002 {
				t.Errorf("c%d %s: %.4f from the samples, %.4f in the record", r.Concurrency, id, got, want)
			}
		}
		// Replaying the level's requests in the order they were taken
		// takes its measured window (to a few µs where two users raced
		// for the last requests).
		lv, err := compare.NewLevelSample(ls)
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int32, lv.Blocks())
		for i := range order {
			order[i] = int32(i)
		}
		if got, want := lv.Replay(order), ls.EndUs-ls.StartUs; math.Abs(float64(got-want)) > 0.002*float64(want) {
			t.Errorf("c%d: the replay lasts %d µs, the level %d µs", r.Concurrency, got, want)
		}
	}
}
