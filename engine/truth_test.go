package engine

import (
	"context"
	"fmt"
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
func compareTruth(t *testing.T, truth map[int64]sim.Timing, recs []RequestRecord) truthErrors {
	t.Helper()
	var e truthErrors
	for _, r := range recs {
		if r.Class != "" {
			t.Errorf("request %d failed: %s", r.N, r.Class)
			continue
		}
		tr, ok := truth[r.N]
		if !ok {
			t.Fatalf("the simulator has no record of request %d", r.N)
		}
		e.ttft = append(e.ttft, math.Abs(ms(r.TTFT)-ms(time.Duration(tr.TTFTNs))))
		if len(tr.GapsNs) != len(r.ITL) {
			t.Fatalf("request %d: %d measured gaps, %d true", r.N, len(r.ITL), len(tr.GapsNs))
		}
		for i, g := range tr.GapsNs {
			e.itl = append(e.itl, math.Abs(float64(r.ITL[i])-ms(time.Duration(g))))
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
// simulator's own record (first request byte received → each chunk sent,
// both stamped at the socket): the p99 error must stay within 1 ms at 1 and
// at 32 concurrent streams. 20 ms intervals keep it honest on a loaded
// 2-core machine. A shared virtual machine now and then delays loopback
// delivery by about 3.5 ms for a stretch (seen on this project's VMs in
// about half the runs at concurrency 1 on a bad day), which skews a whole
// run, so a run that misses is repeated, up to truthRuns runs; every run's
// numbers are logged. The bar itself is the same for every run.
func TestTruth(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short (make test-truth)")
	}
	url := startSimProcess(t, simProcConfig{TokenInterval: 20 * time.Millisecond, PrefillRate: 100000})
	var last []string
	for attempt := 1; attempt <= truthRuns; attempt++ {
		last = truthRun(t, url)
		if len(last) == 0 {
			return
		}
		t.Logf("run %d missed: %v", attempt, last)
	}
	t.Errorf("%d runs missed the 1 ms bar; the last: %v", truthRuns, last)
}

// truthRuns is how many runs TestTruth gives the machine.
const truthRuns = 5

// truthRun measures 20 requests at concurrency 1 (about 10 s) and 256 at
// concurrency 32, compares each with the simulator's truth, and returns
// what missed the bar.
func truthRun(t *testing.T, url string) []string {
	t.Helper()
	p := DefaultPlan()
	p.InputTokens, p.OutputTokens = 256, 24
	p.Warmup = 4
	p.Timeout = 30 * time.Second
	var missed []string
	// Each level is compared before the next, as both reuse the same
	// request numbers.
	for _, c := range []int{1, 32} {
		plan := p
		plan.Concurrency = []int{c}
		plan.Requests = 256
		if c == 1 {
			plan.Requests = 20
		}
		var recs []RequestRecord
		obs := Observer{Requests: func(_ int, r []RequestRecord) { recs = r }}
		if _, err := Run(context.Background(), plan, Endpoint{URL: url}, obs); err != nil {
			t.Fatal(err)
		}
		e := compareTruth(t, fetchTimings(t, url), recs)
		if len(e.ttft) != plan.Requests {
			t.Fatalf("compared %d requests, want %d", len(e.ttft), plan.Requests)
		}
		tt, it := p99(e.ttft), p99(e.itl)
		t.Logf("concurrency %d: %d requests, %d gaps; p99 |error| TTFT %.3f ms, ITL %.3f ms; max TTFT %.3f ITL %.3f",
			c, len(e.ttft), len(e.itl), tt, it, slices.Max(e.ttft), slices.Max(e.itl))
		if tt > 1 || it > 1 {
			missed = append(missed, fmt.Sprintf("concurrency %d: p99 error TTFT %.3f ms, ITL %.3f ms (want ≤ 1 ms)", c, tt, it))
		}
	}
	return missed
}
