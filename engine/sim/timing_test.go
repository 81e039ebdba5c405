package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// These tests hold wall-clock behaviour against generous bounds and are not
// parallel. The machine may be loaded, so each check gets a few attempts:
// the timing model is exact, only the scheduler of a busy box is not.
func attempts(t *testing.T, n int, f func() error) {
	t.Helper()
	var err error
	for i := 0; i < n; i++ {
		if err = f(); err == nil {
			return
		}
		t.Logf("attempt %d: %v", i+1, err)
	}
	t.Fatal(err)
}

func TestChunkTimingMatchesTruth(t *testing.T) {
	s, url := startSim(t, Config{RecordTruth: true, TokenInterval: 20 * time.Millisecond})
	n := int64(0)
	attempts(t, 3, func() error {
		n++
		res := mustStream(t, url, chatBody("kovara-sim-8b", n, 20, streamOpts(5, true)))
		sum := summarize(t, res.lines)
		tr, ok := s.Truth(n)
		if !ok || len(tr.Chunks) != 5 || len(sum.textAt) != 5 {
			return fmt.Errorf("truth %+v, %d chunks read", tr, len(sum.textAt))
		}
		if ttft, _ := tr.TTFT(); ttft > 15*time.Millisecond {
			return fmt.Errorf("server TTFT %v with a sub-millisecond prefill", ttft)
		}
		for i, g := range tr.ITL() {
			if g < 12*time.Millisecond || g > 28*time.Millisecond {
				return fmt.Errorf("gap %d is %v, want 20ms±8ms", i, g)
			}
		}
		// Deadlines are absolute, so lateness does not add up.
		if span := tr.Chunks[4].Sub(tr.Chunks[0]); span < 72*time.Millisecond || span > 88*time.Millisecond {
			return fmt.Errorf("first to last chunk %v, want 80ms±8ms", span)
		}
		var diffs []time.Duration
		for i, at := range sum.textAt {
			d := at.Sub(tr.Chunks[i])
			if d < -2*time.Millisecond || d > 10*time.Millisecond {
				return fmt.Errorf("chunk %d read %v after the server flushed it", i, d)
			}
			diffs = append(diffs, d)
		}
		slices.Sort(diffs)
		if diffs[2] > 3*time.Millisecond {
			return fmt.Errorf("median read delay %v", diffs[2])
		}
		t.Logf("gaps %v, read delays %v", tr.ITL(), diffs)
		return nil
	})
}

func TestBatchQueue(t *testing.T) {
	s, url := startSim(t, Config{RecordTruth: true, BatchCapacity: 2, TokenInterval: 20 * time.Millisecond})
	round := 0
	attempts(t, 3, func() error {
		round++
		var wg sync.WaitGroup
		for i := range 4 {
			n := int64(round*10 + i)
			wg.Go(func() { mustStream(t, url, chatBody("kovara-sim-8b", n, 20, streamOpts(5, true))) })
		}
		wg.Wait()
		var ttfts []time.Duration
		var duration time.Duration
		for i := range 4 {
			tr, ok := s.Truth(int64(round*10 + i))
			if !ok || len(tr.Chunks) != 5 {
				return fmt.Errorf("truth %+v", tr)
			}
			ttft, _ := tr.TTFT()
			ttfts = append(ttfts, ttft)
			duration = max(duration, tr.Chunks[4].Sub(tr.Admitted))
		}
		slices.Sort(ttfts)
		// Two are admitted at once; two wait about one whole request.
		if ttfts[1] > 30*time.Millisecond || ttfts[2] < duration*3/4 || ttfts[3] < duration*3/4 {
			return fmt.Errorf("TTFTs %v with requests lasting %v", ttfts, duration)
		}
		t.Logf("TTFTs %v, request duration %v", ttfts, duration)
		return nil
	})
}

func TestBatchSlowdown(t *testing.T) {
	s, url := startSim(t, Config{RecordTruth: true, BatchSlowdown: 1, TokenInterval: 10 * time.Millisecond})
	round := 0
	attempts(t, 3, func() error {
		round++
		var wg sync.WaitGroup
		for i := range 2 {
			n := int64(round*10 + i)
			wg.Go(func() { mustStream(t, url, chatBody("kovara-sim-8b", n, 20, streamOpts(6, true))) })
		}
		wg.Wait()
		tr, _ := s.Truth(int64(round * 10))
		gaps := tr.ITL()
		if len(gaps) != 5 {
			return fmt.Errorf("truth %+v", tr)
		}
		slices.Sort(gaps)
		// Two sequences decoding: 10ms * (1 + 1*(2-1)) = 20ms.
		if med := gaps[2]; med < 15*time.Millisecond || med > 26*time.Millisecond {
			return fmt.Errorf("median gap %v, want about 20ms", med)
		}
		return nil
	})
}

func TestJitterIsSeeded(t *testing.T) {
	t.Parallel()
	s := New(Config{Jitter: 0.25, TokenInterval: 20 * time.Millisecond, Seed: 3})
	draw := func(n int64) []time.Duration {
		ru := &run{s: s, rng: rand.New(rand.NewPCG(uint64(s.cfg.Seed), uint64(n)))}
		out := make([]time.Duration, 2000)
		for i := range out {
			out[i] = ru.interval()
		}
		return out
	}
	a, b, c := draw(1), draw(1), draw(2)
	if !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Error("jitter is not a function of the seed and the request number")
	}
	var sum time.Duration
	for _, d := range a {
		if d < 15*time.Millisecond || d > 25*time.Millisecond {
			t.Fatalf("interval %v outside 20ms±25%%", d)
		}
		sum += d
	}
	if mean := sum / time.Duration(len(a)); mean < 19500*time.Microsecond || mean > 20500*time.Microsecond {
		t.Errorf("mean interval %v", mean)
	}
	if lo, hi := slices.Min(a), slices.Max(a); lo > 16*time.Millisecond || hi < 24*time.Millisecond {
		t.Errorf("jitter spans only %v..%v", lo, hi)
	}
}

func TestSchedulerFIFO(t *testing.T) {
	t.Parallel()
	q := scheduler{limit: 1}
	stop := make(chan struct{})
	bg := context.Background()
	if err := q.acquire(bg, stop); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 3)
	var wg sync.WaitGroup
	waitFor := func(waiting int) {
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if _, w := q.counts(); w == waiting {
				return
			}
		}
		t.Fatalf("never saw %d waiting", waiting)
	}
	for i := 1; i <= 2; i++ {
		wg.Go(func() {
			if q.acquire(bg, stop) == nil {
				order <- i
				time.Sleep(time.Millisecond)
				q.release()
			}
		})
		waitFor(i)
	}
	// A waiter that gives up leaves the queue.
	ctx, cancel := context.WithCancel(bg)
	gaveUp := make(chan error)
	go func() { gaveUp <- q.acquire(ctx, stop) }()
	waitFor(3)
	cancel()
	if err := <-gaveUp; err == nil {
		t.Fatal("a cancelled waiter got a slot")
	}
	waitFor(2)
	q.release()
	wg.Wait()
	if a, b := <-order, <-order; a != 1 || b != 2 {
		t.Errorf("served %d then %d, want 1 then 2", a, b)
	}
	if r, w := q.counts(); r != 0 || w != 0 {
		t.Errorf("running %d waiting %d at the end", r, w)
	}
	// Close releases waiters.
	q.acquire(bg, stop)
	go func() { gaveUp <- q.acquire(bg, stop) }()
	waitFor(1)
	close(stop)
	if err := <-gaveUp; err != errShutdown {
		t.Errorf("waiter after shutdown: %v", err)
	}
}
