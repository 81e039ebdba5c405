package engine

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stats"
)

// truthErrors holds |measured − true| in ms for TTFT and ITL.
type truthErrors struct{ ttft, itl []float64 }

// compareTruth matches every measured request with the simulator's record
// of the same request number.
func compareTruth(t *testing.T, srv *sim.Server, recs []RequestRecord) truthErrors {
	t.Helper()
	var e truthErrors
	for _, r := range recs {
		if r.Class != "" {
			t.Errorf("request %d failed: %s", r.N, r.Class)
			continue
		}
		tr, ok := srv.Truth(r.N)
		if !ok {
			t.Fatalf("the simulator has no record of request %d", r.N)
		}
		ttft, _ := tr.TTFT()
		e.ttft = append(e.ttft, math.Abs(ms(r.TTFT)-ms(ttft)))
		itl := tr.ITL()
		if len(itl) != len(r.ITL) {
			t.Fatalf("request %d: %d measured gaps, %d true", r.N, len(r.ITL), len(itl))
		}
		for i, g := range itl {
			e.itl = append(e.itl, math.Abs(float64(r.ITL[i])-ms(g)))
		}
	}
	return e
}

func p99(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return stats.Quantile(s, 0.99)
}

// TestTruth holds every measured TTFT and inter-token gap against the
// simulator's own record of when it flushed each chunk: the p99 error must
// stay within 1 ms at 1 and at 32 concurrent streams. 20 ms intervals keep
// it honest on a loaded 2-core machine.
func TestTruth(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short (make test-truth)")
	}
	cfg := sim.Config{TokenInterval: 20 * time.Millisecond, PrefillRate: 100000, RecordTruth: true}
	srv, url := startSim(t, cfg)
	p := DefaultPlan()
	p.InputTokens, p.OutputTokens = 256, 24
	p.Concurrency = []int{1, 32}
	p.Requests, p.Warmup = 64, 4
	p.Timeout = 30 * time.Second
	// Level 1 runs 16 sequential requests (64 would take 30 s). Each run
	// is compared before the next, as both reuse the same request numbers.
	for _, c := range []int{1, 32} {
		plan := p
		plan.Concurrency = []int{c}
		if c == 1 {
			plan.Requests = 16
		}
		var recs []RequestRecord
		obs := Observer{Requests: func(_ int, r []RequestRecord) { recs = r }}
		if _, err := Run(context.Background(), plan, Endpoint{URL: url}, obs); err != nil {
			t.Fatal(err)
		}
		e := compareTruth(t, srv, recs)
		if len(e.ttft) != plan.Requests {
			t.Fatalf("compared %d requests, want %d", len(e.ttft), plan.Requests)
		}
		tt, it := p99(e.ttft), p99(e.itl)
		t.Logf("concurrency %d: %d requests, %d gaps; p99 |error| TTFT %.3f ms, ITL %.3f ms; max TTFT %.3f ITL %.3f",
			c, len(e.ttft), len(e.itl), tt, it, slices.Max(e.ttft), slices.Max(e.itl))
		if tt > 1 || it > 1 {
			t.Errorf("concurrency %d: p99 error TTFT %.3f ms, ITL %.3f ms; want ≤ 1 ms", c, tt, it)
		}
	}
}
