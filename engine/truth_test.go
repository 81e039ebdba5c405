package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
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
		e.ttft = append(e.ttft, ms(tr.TTFTErr(r.TTFT)))
		if len(tr.GapsNs) != len(r.ITL) {
			t.Fatalf("request %d: %d measured gaps, %d true", r.N, len(r.ITL), len(tr.GapsNs))
		}
		for i := range tr.GapsNs {
			e.itl = append(e.itl, tr.GapErr(i, float64(r.ITL[i])))
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
// both stamped at the socket): the p99 error must stay within 1 ms at 1, 32
// and 256 concurrent streams. 20 ms intervals keep it honest on a loaded
// 2-core machine. A shared virtual machine now and then slows both vCPUs
// for seconds and delivers loopback data about 3.5 ms late (seen at
// concurrency 1 on this project's VMs), and a 256-stream level's opening
// burst on 2 cores now and then still leaves a few first chunks unread for
// a token interval; either skews a whole level. So a level that misses is
// measured once more (truthMisses); every run's numbers are logged and the
// bar is the same for every run.
func TestTruth(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short (make test-truth)")
	}
	url := startSimProcess(t, simProcConfig{TokenInterval: 20 * time.Millisecond, PrefillRate: 100000})
	for _, c := range []int{1, 32, 256} {
		truthWithRetries(t, url, c)
	}
}

// TestTruthLlamaCpp is TestTruth against the llamacpp personality, which
// closes the connection after every streamed answer as llama-server does:
// no request may fail for it, every slot reconnects between requests
// (outside the measured time), and the measurement keeps the 1 ms bar.
func TestTruthLlamaCpp(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short (make test-truth)")
	}
	url := startSimProcess(t, simProcConfig{Personality: sim.LlamaCpp, TokenInterval: 20 * time.Millisecond, PrefillRate: 100000})
	for _, c := range []int{1, 8, 32, 256} {
		f := truthWithRetries(t, url, c)
		if f == nil {
			continue
		}
		run, lv := f.Runs[0], f.Local.Levels[0]
		if m := run.Metrics; m.RequestsError+m.RequestsTimeout != 0 {
			t.Errorf("concurrency %d: %d errors, %d timeouts (%v); want none", c, m.RequestsError, m.RequestsTimeout, lv.Messages)
		}
		// Warmup and calibration taught the run that the server closes
		// after every answer: each slot reconnects after each of its
		// answers but the last.
		if cs := lv.Connections; cs == nil || cs.Reconnects < run.Requests-c {
			t.Errorf("concurrency %d: connections %+v, want at least %d reconnects", c, cs, run.Requests-c)
		}
	}
}

// TestTruthNagle is TestTruth against a server that sends its headers
// as soon as it takes a request and leaves Nagle's algorithm on, as
// llama-server does: each chunk waits in the server's kernel until the
// previous one is acknowledged. A client that lets Linux delay its ACKs
// (the default once it has sent a request) read llama-server's first
// token 30 ms late and its whole answer at once; the client acknowledges
// every read at once (netstamp's quickAck), and the measurement keeps the
// 1 ms bar. Without it, TTFT here is late by the 40 ms delayed-ACK timer
// (24.7 ms p99 with this prefill). At one stream only: the acknowledgement still waits for
// the client's read, so a client short of CPU delays the server's next
// chunk by its own lateness — at 8 streams beside stress-ng --cpu 2 on
// two cores, 1.3–1.8 ms p99 (docs/servers.md says so).
func TestTruthNagle(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short (make test-truth)")
	}
	// A 20 ms prefill (256 tokens at 12,800 tok/s) gives the client that
	// long to read the headers before the first chunk is written: the
	// test is about the ACK the kernel would delay by 40 ms, not about a
	// busy machine's scheduling.
	url := startSimProcess(t, simProcConfig{Personality: sim.LlamaCpp, TokenInterval: 20 * time.Millisecond, PrefillRate: 12800, Nagle: true, HeadersFirst: true})
	truthWithRetries(t, url, 1)
}

// truthMisses is how many runs of a level may miss the bar before the
// test fails: one in five runs, at most. A shared VM now and then stalls
// loopback delivery for a stretch and skews a whole run; such a run is
// logged and measured again, and a second one fails the test.
const truthMisses = 1

// truthWithRetries measures a level until a run keeps the 1 ms bar,
// allowing truthMisses runs that do not, and returns the last run's file.
func truthWithRetries(t *testing.T, url string, c int) *results.File {
	t.Helper()
	for misses := 0; ; {
		miss, f := truthLevel(t, url, c)
		if miss == "" {
			return f
		}
		misses++
		t.Logf("run %d missed: %s", misses, miss)
		if misses > truthMisses {
			t.Errorf("%d runs missed the 1 ms bar (%d may); the last: %s", misses, truthMisses, miss)
			return f
		}
	}
}

// truthLevel measures one level — 20 requests at concurrency 1 (about
// 10 s), else sixteen per stream and at least 256 — compares each request with
// the simulator's truth (fetched right after, as every run reuses the same
// request numbers), and says how it missed the bar, if it did.
func truthLevel(t *testing.T, url string, c int) (string, *results.File) {
	t.Helper()
	p := setup.DefaultPlan()
	p.InputTokens, p.OutputTokens = 256, 24
	p.Warmup = 4
	p.Timeout = 30 * time.Second
	p.Concurrency = []int{c}
	// Sixteen answers per stream, not two: a client stalled for a token
	// interval (a busy VM, the 256-stream opening burst) reads two chunks
	// of a stream in one go, with one receive stamp, so the gaps either
	// side of the first are a token interval off — up to 512 gaps at 256
	// streams. At two per stream that was 4.3 % of the level's gaps, and
	// one such stall failed its p99 (CI, twice in one test: ITL p99
	// 19.6 ms, then TTFT 2.6 ms); at sixteen it is 0.5 %, and the p99
	// holds what the level measures in steady state.
	p.Requests = max(256, 16*c)
	if c == 1 {
		p.Requests = 20
	}
	var recs []RequestRecord
	obs := Observer{Requests: func(_ int, r []RequestRecord) { recs = r }}
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, obs)
	if err != nil {
		t.Fatal(err)
	}
	e := compareTruth(t, fetchTimings(t, url), recs)
	if len(e.ttft) != p.Requests {
		t.Fatalf("compared %d requests, want %d", len(e.ttft), p.Requests)
	}
	tt, it := p99(e.ttft), p99(e.itl)
	t.Logf("concurrency %d: %d requests, %d gaps; p99 |error| TTFT %.3f ms, ITL %.3f ms; max TTFT %.3f ITL %.3f",
		c, len(e.ttft), len(e.itl), tt, it, slices.Max(e.ttft), slices.Max(e.itl))
	if tt > 1 || it > 1 {
		return fmt.Sprintf("concurrency %d: p99 error TTFT %.3f ms, ITL %.3f ms (want ≤ 1 ms)", c, tt, it), f
	}
	return "", f
}
