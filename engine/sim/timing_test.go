package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// The simulator paces against absolute deadlines: admission, plus the
// prefill, plus one interval per token. How late a busy machine runs it
// is the machine's business, not a property to test; what must hold on
// any machine is that nothing comes early and that the batch queue admits
// in order. How close to schedule it runs is BenchmarkPacing's.

// TestChunksNeverEarly: each chunk leaves no earlier than its deadline,
// and the client reads it no earlier than the server sent it.
func TestChunksNeverEarly(t *testing.T) {
	const interval = 20 * time.Millisecond
	s, url := startSim(t, Config{RecordTruth: true, TokenInterval: interval, PrefillRate: 1e6})
	res := mustStream(t, url, chatBody("kovara-sim-8b", 1, 20, streamOpts(5, true)))
	sum := summarize(t, res.lines)
	tr, ok := s.Truth(1)
	if !ok || len(tr.Chunks) != 5 || len(sum.textAt) != 5 {
		t.Fatalf("truth %+v, %d chunks read", tr, len(sum.textAt))
	}
	prefill := time.Duration(float64(tr.PromptTokens) / 1e6 * float64(time.Second))
	for i, at := range tr.Chunks {
		due := tr.Admitted.Add(prefill + time.Duration(i)*interval)
		if at.Before(due) {
			t.Errorf("chunk %d left %v before its deadline", i, due.Sub(at))
		}
		// The client's stamp is the kernel's receive time, the truth's
		// the moment before the write: a read can never precede it
		// (100 µs allows for the two clocks' reading).
		if d := sum.textAt[i].Sub(at); d < -100*time.Microsecond {
			t.Errorf("chunk %d read %v before the server sent it", i, -d)
		}
	}
}

// TestBatchQueue: with room for two, the third and fourth requests wait
// until a running one ends.
func TestBatchQueue(t *testing.T) {
	s, url := startSim(t, Config{RecordTruth: true, BatchCapacity: 2, TokenInterval: 5 * time.Millisecond})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { mustStream(t, url, chatBody("kovara-sim-8b", int64(i), 20, streamOpts(5, true))) })
	}
	wg.Wait()
	var trs []Truth
	for i := range 4 {
		tr, ok := s.Truth(int64(i))
		if !ok || len(tr.Chunks) != 5 {
			t.Fatalf("truth %+v", tr)
		}
		trs = append(trs, tr)
	}
	slices.SortFunc(trs, func(a, b Truth) int { return a.Admitted.Compare(b.Admitted) })
	for _, late := range trs[2:] {
		if !late.Admitted.After(trs[0].Chunks[4]) && !late.Admitted.After(trs[1].Chunks[4]) {
			t.Errorf("a third request was admitted at %v, before either of the first two finished", late.Admitted.Sub(trs[0].Admitted))
		}
	}
}

// TestBatchSlowdown: the interval stretches with the sequences decoding:
// TokenInterval × (1 + BatchSlowdown × (b − 1)).
func TestBatchSlowdown(t *testing.T) {
	t.Parallel()
	s := New(Config{BatchSlowdown: 0.5, TokenInterval: 10 * time.Millisecond})
	ru := &run{s: s}
	for b, want := range map[int64]time.Duration{0: 10 * time.Millisecond, 1: 10 * time.Millisecond, 2: 15 * time.Millisecond, 5: 30 * time.Millisecond} {
		s.decoding.Store(b)
		if got := ru.interval(); got != want {
			t.Errorf("%d decoding: interval %v, want %v", b, got, want)
		}
	}
}

// BenchmarkPacing streams five 20 ms tokens and reports how far the
// server's own record strays from its schedule: the largest gap error and
// the first-to-last span's error, in ms (ideally near 0 on an idle
// machine; the tests above hold only what no load can change).
func BenchmarkPacing(b *testing.B) {
	const interval = 20 * time.Millisecond
	s, url, err := Start(Config{RecordTruth: true, TokenInterval: interval}, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var worstGap, worstSpan time.Duration
	n := int64(0)
	for b.Loop() {
		n++
		if _, err := postStream(context.Background(), nil, url, chatBody("kovara-sim-8b", n, 20, streamOpts(5, true))); err != nil {
			b.Fatal(err)
		}
		tr, _ := s.Truth(n)
		for _, g := range tr.ITL() {
			worstGap = max(worstGap, (g - interval).Abs())
		}
		worstSpan = max(worstSpan, (tr.Chunks[4].Sub(tr.Chunks[0]) - 4*interval).Abs())
	}
	b.ReportMetric(float64(worstGap)/float64(time.Millisecond), "gap-err-max-ms")
	b.ReportMetric(float64(worstSpan)/float64(time.Millisecond), "span-err-max-ms")
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
