package engine

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestLiveStageTimeFromRelease: a stage's time left runs from its
// requests' release, not from the seconds its connections took to open,
// and it is told from the very share the stage's bar shows. At 32 users
// against llama-server -np 2 the connections took 16 s of a 22-s level:
// counted in, the level's time left read 75 s with 6 s to go, and the
// bar (finished requests) and the time left told different stories.
func TestLiveStageTimeFromRelease(t *testing.T) {
	t.Parallel()
	now := time.Duration(0)
	l := NewLive()
	l.start(func() time.Duration { return now }, 1, 100)
	sl := l.beginStage(kovaraLevel(1, 1, 32, 100, 64))
	var open atomic.Int64
	restore := l.opening(32, &open)
	now = 16 * time.Second
	if s := l.Snapshot(); s.Left != 0 || s.StageProgress != 0 {
		t.Errorf("while the connections open: time left %v, bar %v; want neither", s.Left, s.StageProgress)
	}
	restore()
	// 2.5 s after the release: 30 requests done and 45 % of the tokens.
	now += 2500 * time.Millisecond
	sl[0].done.Add(30)
	sl[0].tokens.Add(45 * 64)
	s := l.Snapshot()
	if got, want := s.StageProgress, 0.45; !near(got, want, 1e-9) {
		t.Errorf("the stage's bar is %v, want %v (the tokens' share)", got, want)
	}
	secs := 2.5 * 0.55 / 0.45
	if got, want := s.Left, time.Duration(secs*float64(time.Second)); (got - want).Abs() > time.Millisecond {
		t.Errorf("time left %v, want %v (2.5 s since the release for 45 %%)", got, want)
	}
	// The time left is the bar's share extrapolated over the time since
	// the release: the two agree.
	if got, want := s.Left, time.Duration(float64(s.LevelElapsed)*(1-s.StageProgress)/s.StageProgress); (got - want).Abs() > time.Millisecond {
		t.Errorf("time left %v disagrees with the bar %.2f after %v: want %v", s.Left, s.StageProgress, s.LevelElapsed, want)
	}
	if !strings.HasSuffix(s.Describe(), "— a few seconds left") {
		t.Errorf("describe %q", s.Describe())
	}
}

// TestLiveQuiet: once no token has come for quietAfter while requests are
// out, the live line says for how long instead of a time left, and the
// whole plan's time left goes too; a token, or no request out (an open
// loop between its arrivals), ends it. A server that died with its streams
// open showed "about 10 s left" over a flat line until the watchdog spoke.
func TestLiveQuiet(t *testing.T) {
	t.Parallel()
	now := time.Duration(0)
	l := NewLive()
	l.start(func() time.Duration { return now }, 2, 80)
	sl := l.beginStage(kovaraLevel(1, 2, 4, 40, 100))
	l.setInFlight(4)
	for i := 1; i <= 4; i++ {
		now += time.Second
		sl[0].tokens.Add(200)
		sl[0].done.Add(1)
		l.Snapshot()
	}
	s := l.Snapshot()
	if s.Quiet != 0 || s.Left == 0 {
		t.Fatalf("tokens flowing: quiet %v, time left %v", s.Quiet, s.Left)
	}
	now += quietAfter - 100*time.Millisecond
	if s = l.Snapshot(); s.Quiet != 0 || s.Left == 0 {
		t.Errorf("%v without a token: quiet %v, time left %v; want the time left still", quietAfter-100*time.Millisecond, s.Quiet, s.Left)
	}
	now = 10 * time.Second // 6 s since the last token
	s = l.Snapshot()
	if s.Quiet != 6*time.Second || s.Left != 0 || s.PlanLeft != 0 {
		t.Errorf("6 s without a token: quiet %v, time left %v, whole plan %v; want 6 s and no time left", s.Quiet, s.Left, s.PlanLeft)
	}
	if got, want := s.Describe(), "Level 1 of 2 — concurrency 4 — 4 of 40 requests — no token for 6 s…"; got != want {
		t.Errorf("describe %q, want %q", got, want)
	}
	l.setInFlight(0)
	if s = l.Snapshot(); s.Quiet != 0 {
		t.Errorf("no request out: quiet %v", s.Quiet)
	}
	l.setInFlight(4)
	now += 500 * time.Millisecond
	sl[1].tokens.Add(5)
	if s = l.Snapshot(); s.Quiet != 0 || s.Left == 0 {
		t.Errorf("a token came: quiet %v, time left %v", s.Quiet, s.Left)
	}
}

// TestLiveQuietFromTheWatchdog: a run whose server stops sending with its
// streams open says "no token for" within a few seconds, from what its
// loop's watchdog sees out, before the watchdog's own silence.
func TestLiveQuietFromTheWatchdog(t *testing.T) {
	t.Parallel()
	p := smallPlan()
	p.Warmup, p.Concurrency, p.Timeout = 0, []int{2}, 30*time.Second
	first := levelFirstNumber(p, 0)
	cfg := fastSim()
	cfg.Faults = func(n int64) sim.Fault {
		if n >= first { // every measured request: headers and a token, then nothing
			return sim.FaultStall
		}
		return ""
	}
	_, url := startSim(t, cfg)
	live := NewLive()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, p, setup.Endpoint{URL: url, Silence: -time.Minute}, Observer{Live: live})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := live.Snapshot()
		if s.Quiet > 0 {
			if !strings.Contains(s.Describe(), "no token for ") || s.Left != 0 {
				t.Errorf("quiet %v: describe %q, time left %v", s.Quiet, s.Describe(), s.Left)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no silence said; last line %q", s.Describe())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	<-done
}

// TestLivePlanLeftWeighted: with each level weighed by its waves (the
// default plan on the demo's simulator: 100 requests at 1, 8 and 32
// users, 100, 13 and 4 waves), the whole plan's time left 40 s into its
// first level is what the levels left take; counted in requests it was
// 260 s ("whole plan about 4 min" for a plan that took 2 min 20 s).
func TestLivePlanLeftWeighted(t *testing.T) {
	t.Parallel()
	p := setup.DefaultPlan()
	if got, want := LevelWaves(p, 64), []float64{100, 13, 4}; !slices.Equal(got, want) {
		t.Fatalf("LevelWaves(default plan, 64 slots) = %v, want %v", got, want)
	}
	if got, want := LevelWaves(p, 2), []float64{100, 50, 50}; !slices.Equal(got, want) {
		t.Errorf("LevelWaves(default plan, 2 slots) = %v, want %v", got, want)
	}
	run := func(weights []float64) Snapshot {
		now := time.Duration(0)
		l := NewLive()
		l.ExpectStages(weights)
		l.start(func() time.Duration { return now }, 3, 300)
		sl := l.beginStage(kovaraLevel(1, 3, 1, 100, 0))
		var s Snapshot
		for i := 1; i <= 40; i++ { // a request a second
			now += time.Second
			sl[0].done.Add(1)
			s = l.Snapshot()
		}
		return s
	}
	s := run(LevelWaves(p, 64))
	if got, want := s.PlanLeft, 77*time.Second; (got - want).Abs() > time.Second {
		t.Errorf("weighed: whole plan %v left, want %v (60 s of level 1, 13 and 4 waves of a second)", got, want)
	}
	if got, want := s.Progress, 40.0/117; !near(got, want, 1e-9) {
		t.Errorf("weighed: progress %v, want %v", got, want)
	}
	if got, want := s.Describe(), "Level 1 of 3 — concurrency 1 — 40 of 100 requests — this stage about 60 s left, whole plan about 75 s left"; got != want {
		t.Errorf("describe %q, want %q", got, want)
	}
	if s := run(nil); (s.PlanLeft - 260*time.Second).Abs() > time.Second {
		t.Errorf("unweighed: whole plan %v left, want 260 s (each level as long as its requests)", s.PlanLeft)
	}
	if s := run([]float64{1, 2}); (s.PlanLeft - 260*time.Second).Abs() > time.Second {
		t.Errorf("weights for another plan's levels: whole plan %v left, want them left unused (260 s)", s.PlanLeft)
	}
}
