package ui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stats"
	"github.com/kovara/desktop/storage"
)

// TestTruthWithLiveView runs 32 streams with the live view attached
// (snapshots, series and chart rendering four times a second) and holds
// every measured TTFT and gap against the simulator's record: the live view
// must not change what is measured. As in the engine's TestTruth, a shared
// VM now and then stalls loopback delivery for a stretch and skews a whole
// run, so a run that misses is measured once more, logged; a second miss
// fails (the engine's truthMisses rule), and the 1 ms bar is the same for
// every run.
func TestTruthWithLiveView(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short")
	}
	// The simulator runs in its own process, as a real server does.
	url := startSimProcess(t, "--token-interval", "20ms", "--prefill-rate", "100000", "--jitter", "0", "--record-truth")
	for misses := 1; ; misses++ {
		pt, pi := liveTruthRun(t, url, 32, 128)
		if pt <= 1 && pi <= 1 {
			return
		}
		t.Logf("run %d missed the 1 ms bar: p99 error TTFT %.3f ms, ITL %.3f ms", misses, pt, pi)
		if misses > 1 {
			t.Errorf("%d runs with the live view attached missed (1 may); the last p99 error is TTFT %.3f ms, ITL %.3f ms; want ≤ 1 ms",
				misses, pt, pi)
			return
		}
	}
}

// liveTruthRun drives one run of the given streams and requests (256 input
// and 24 output tokens) through the Benchmark screen of a fresh app and
// returns the p99 |error| of TTFT and of the gaps, in ms.
func liveTruthRun(t testing.TB, url string, streams, requests int) (pt, pi float64) {
	t.Helper()
	var mu sync.Mutex
	var recs []engine.RequestRecord
	h := newHarness(t)
	h.u.opts.Observe = func(o *engine.Observer) {
		o.Requests = func(_ int, r []engine.RequestRecord) { mu.Lock(); recs = append(recs, r...); mu.Unlock() }
	}
	if err := h.u.endpoints.Put(storage.SavedEndpoint{Name: "sim", URL: url, VerifyTLS: true}, ""); err != nil {
		t.Fatal(err)
	}
	b := h.u.bench
	h.locked(func() {
		b.refreshEndpoints()
		b.selectEndpoint("sim")
		h.setPlan(fmt.Sprint(streams), fmt.Sprint(requests), "24")
		b.kovara.inputEntry.SetText("256")
		test.Tap(b.runButton)
	})
	h.waitFor("the result", 90*time.Second, func() bool { return b.result != nil })
	var redraws int
	h.locked(func() { redraws = b.live.redraws })
	if redraws < 4 {
		t.Fatalf("only %d live redraws: the live view was not attached", redraws)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(recs) != requests {
		t.Fatalf("%d requests measured, want %d", len(recs), requests)
	}
	pt, pi = truthErrors(t, url, recs)
	t.Logf("live view on, %d streams, %d redraws: p99 |error| TTFT %.3f ms, ITL %.3f ms (%d requests, GOMAXPROCS %d)",
		streams, redraws, pt, pi, len(recs), runtime.GOMAXPROCS(0))
	return pt, pi
}

// truthErrors holds every measured TTFT and gap against the simulator's
// record and returns the p99 |error| of each, in ms.
func truthErrors(t testing.TB, url string, recs []engine.RequestRecord) (pt, pi float64) {
	t.Helper()
	var ttft, itl []float64
	// Fetched after the run: a repeated run reuses the request numbers and
	// the simulator keeps the latest record of each.
	truth := fetchTruth(t, url)
	for _, r := range recs {
		tr, ok := truth[r.N]
		if !ok || r.Class != "" || len(tr.GapsNs) != len(r.ITL) {
			t.Fatalf("request %d: truth %v class %q", r.N, ok, r.Class)
		}
		ttft = append(ttft, float64(tr.TTFTErr(r.TTFT))/1e6)
		for i := range tr.GapsNs {
			itl = append(itl, tr.GapErr(i, float64(r.ITL[i])))
		}
	}
	slices.Sort(ttft)
	slices.Sort(itl)
	return stats.Quantile(ttft, 0.99), stats.Quantile(itl, 0.99)
}

// BenchmarkLiveViewTruth256 measures what the live view does to accuracy at
// 256 streams: the same run with the app's live view attached and with the
// engine alone, each reporting the p99 |error| of TTFT and of the gaps
// against the simulator's record. Run it on an idle machine:
//
//	go test -run '^$' -bench LiveViewTruth256 -benchtime 1x ./ui/
func BenchmarkLiveViewTruth256(b *testing.B) {
	url := startSimProcess(b, "--token-interval", "20ms", "--prefill-rate", "100000", "--jitter", "0",
		"--batch-slowdown", "0", "--batch-capacity", "256", "--record-truth")
	report := func(b *testing.B, pt, pi float64) {
		b.ReportMetric(pt, "ttft-p99-err-ms")
		b.ReportMetric(pi, "itl-p99-err-ms")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("live-view", func(b *testing.B) {
		for range b.N {
			pt, pi := liveTruthRun(b, url, 256, 512)
			report(b, pt, pi)
		}
	})
	b.Run("engine-alone", func(b *testing.B) {
		for range b.N {
			p := setup.DefaultPlan()
			p.Concurrency = []int{256}
			p.Requests, p.Warmup = 512, 1
			p.InputTokens, p.OutputTokens = 256, 24
			var recs []engine.RequestRecord
			obs := engine.Observer{Requests: func(_ int, r []engine.RequestRecord) { recs = r }}
			if _, err := engine.Run(context.Background(), p, setup.Endpoint{URL: url}, obs); err != nil {
				b.Fatal(err)
			}
			pt, pi := truthErrors(b, url, recs)
			report(b, pt, pi)
		}
	})
}

// startSimProcess builds kovara-bench and serves its simulator with args.
func startSimProcess(t testing.TB, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kovara-bench")
	build := exec.Command("go", "build", "-o", bin, "github.com/kovara/desktop/cmd/kovara-bench")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"simulate", "--listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	url, err := sim.ReadServingURL(out)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func fetchTruth(t testing.TB, url string) map[int64]sim.Timing {
	t.Helper()
	m, err := sim.FetchTimings(url)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
