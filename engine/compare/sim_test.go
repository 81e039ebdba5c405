package compare

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// Through the real engine against the built-in simulator on loopback
// (the test imports engine; the package never does): two runs of the
// same settings differ on no metric beyond noise, and a server 10 %
// slower in decode and prefill is called slower on every throughput and
// on latency and TPOT, with 100 requests a level (and nothing is called
// faster). The three runs go at once, so whatever else loads this
// machine loads them alike. The gaps between chunks are left out of what
// must be called: on loopback, with the simulator's timers on this
// machine's two busy cores, their median sits where late timer wakeups
// pile up and moves by whole percents between runs.
//
// Not parallel: the package's other tests resample thousands of levels,
// and a client starved by them measures its own waits, not the server.
func TestNoiseOnTheSimulator(t *testing.T) {
	plan := setup.DefaultPlan()
	plan.InputTokens, plan.OutputTokens = 200, 8
	// Levels small and tokens slow enough that three runs at once leave
	// the client idle between chunks, under the race detector too: a
	// starved client measures its own waits, not the server.
	plan.Concurrency, plan.Requests, plan.Warmup = []int{2, 4}, 100, 4
	plan.Timeout = 30 * time.Second
	server := func(seed int64, slow float64) sim.Config {
		return sim.Config{TokenInterval: time.Duration(slow * float64(8*time.Millisecond)), PrefillRate: 50_000 / slow, Jitter: 0.2, Seed: seed}
	}
	configs := []sim.Config{server(1, 1), server(2, 1), server(3, 1.1)}
	files := make([]*results.File, len(configs))
	errs := make([]error, len(configs))
	var wg sync.WaitGroup
	for i, cfg := range configs {
		srv, url, err := sim.Start(cfg, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		wg.Go(func() {
			files[i], errs[i] = engine.Run(context.Background(), plan, engine.Endpoint{URL: url + "/v1"}, engine.Observer{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
	base, same, slow := files[0], files[1], files[2]

	// What the samples say is what the records say, and replaying a
	// level's requests in the order they were taken takes its measured
	// window (to a few µs where two users raced for the last requests).
	for _, r := range base.Runs {
		ls := base.SamplesAt(r.Concurrency)
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

	v, rows := Compared([]*results.File{base, same}, nil)
	if got := judged(rows, 1, BeyondNoise); len(got) > 0 {
		t.Errorf("the same settings: beyond noise %q\n%s", got, v.Changes)
	}
	for _, r := range rows {
		if c := r.Cells[1]; r.Metric.ID == "output_throughput" && c.Noise != WithinNoise {
			t.Errorf("the same settings: output tok/s at %d %v", r.Concurrency, c.Noise)
		}
	}

	v, rows = Compared([]*results.File{base, slow}, nil)
	slower := map[string]bool{}
	for _, r := range rows {
		if c := r.Cells[1]; c.Noise == BeyondNoise {
			if c.Better != -1 {
				t.Errorf("10 %% slower: %s at %d called better", r.Metric.ID, r.Concurrency)
			}
			slower[fmt.Sprintf("%s@%d", r.Metric.ID, r.Concurrency)] = true
		}
	}
	for _, c := range plan.Concurrency {
		for _, id := range []string{"output_throughput", "request_throughput", "per_user_throughput", "latency_p50", "tpot_p50"} {
			if !slower[fmt.Sprintf("%s@%d", id, c)] {
				t.Errorf("10 %% slower: %s at %d not called slower\n%s\n%q", id, c, v.Changes, judged(rows, 1, WithinNoise))
			}
		}
	}
}
