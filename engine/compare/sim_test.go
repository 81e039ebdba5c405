package compare

import (
	"fmt"
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
)

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
