package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/sim"
)

// TestLiveArithmetic: the snapshot's rate, time left and progress from a
// hand-driven clock and slots.
func TestLiveArithmetic(t *testing.T) {
	t.Parallel()
	now := time.Duration(0)
	l := NewLive()
	l.start(func() time.Duration { return now }, 2, 20)
	now = time.Second
	slots := l.beginStage(PhaseLevel, 1, 2, 10, 100)
	now = 1500 * time.Millisecond
	slots[0].tokens.Add(40)
	slots[1].tokens.Add(20)
	s := l.Snapshot()
	if got, want := s.TPS, 120.0; got != want {
		t.Errorf("first rate: %v tok/s, want %v (60 tokens in the 0.5 s since the level began)", got, want)
	}
	if s.Left != 0 {
		t.Errorf("time left %v before a request finished or a tenth of the tokens came", s.Left)
	}
	// 2 of 10 requests done and 250 of 1,000 tokens after 2 s: a quarter.
	now = 3 * time.Second
	slots[0].tokens.Add(190)
	slots[0].done.Add(2)
	s = l.Snapshot()
	if got, want := s.TPS, 190.0/1.5; !near(got, want, 1e-9) {
		t.Errorf("rate: %v, want %v", got, want)
	}
	if got, want := s.Left, 6*time.Second; got != want {
		t.Errorf("time left %v, want %v (a quarter done in 2 s)", got, want)
	}
	if got, want := s.Progress, 0.125; !near(got, want, 1e-9) {
		t.Errorf("progress %v, want %v (a quarter of the first of two levels)", got, want)
	}
	if got, want := s.Describe(), "Level 1 of 2 — concurrency 2 — 2 of 10 requests — a few seconds left"; got != want {
		t.Errorf("describe %q, want %q", got, want)
	}
	// A quarter second without a chunk is not 0 tok/s: the rate is of
	// the last second or more (here since 1.5 s).
	now = 3250 * time.Millisecond
	if s = l.Snapshot(); !near(s.TPS, 190/1.75, 1e-9) {
		t.Errorf("rate after a quiet quarter second: %v, want %v", s.TPS, 190/1.75)
	}
	// A new stage's first rate counts from its own start.
	l.endLevel(10)
	now = 4 * time.Second
	slots = l.beginStage(PhaseLevel, 2, 4, 10, 100)
	now = 5 * time.Second
	slots[3].tokens.Add(400)
	if s = l.Snapshot(); s.TPS != 400 || !near(s.Progress, 0.7, 1e-9) {
		t.Errorf("level 2: rate %v (want 400), progress %v (want 0.7)", s.TPS, s.Progress)
	}
}

func TestFormatLeft(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{3 * time.Second, "a few seconds left"},
		{42 * time.Second, "about 40 s left"},
		{150 * time.Second, "about 3 min left"},
		{100 * time.Minute, "about 1 h 40 min left"},
	} {
		if got := FormatLeft(tt.d); got != tt.want {
			t.Errorf("FormatLeft(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// watch polls live as the app's ticker does and keeps, per phase, what a
// viewer would have seen. look takes one more Snapshot at once, on the
// same goroutine as the ticker's (Snapshot has one reader), and returns
// it: a Log hook calls it to see the live view at a known point of the
// plan, with the engine waiting on it, whatever the machine's speed.
type watched struct {
	tokens   int64
	tps      bool
	ttft     int
	left     bool
	describe string
	progress float64
	done     int // the most finished requests of a stage seen
}

func watch(live *Live) (look func() Snapshot, stop func() map[Phase]*watched) {
	seen := map[Phase]*watched{}
	done := make(chan struct{})
	asks := make(chan chan Snapshot)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for final := false; !final; {
			var reply chan Snapshot
			select {
			case <-done:
				final = true // one last look, as the app's last redraw
			case <-t.C:
			case reply = <-asks:
			}
			s := live.Snapshot()
			w := seen[s.Phase]
			if w == nil {
				w = &watched{}
				seen[s.Phase] = w
			}
			w.tokens = max(w.tokens, s.Tokens)
			w.tps = w.tps || s.TPS > 0
			w.ttft += len(s.TTFT)
			w.left = w.left || s.Left > 0
			w.describe = s.Describe()
			w.progress = max(w.progress, s.Progress)
			w.done = max(w.done, s.LevelDone)
			if reply != nil {
				reply <- s
			}
		}
	}()
	look = func() Snapshot {
		reply := make(chan Snapshot, 1)
		select {
		case asks <- reply:
			return <-reply
		case <-done:
			return Snapshot{} // stopped: nobody looks any more
		}
	}
	stop = func() map[Phase]*watched {
		close(done)
		wg.Wait()
		return seen
	}
	return look, stop
}

// TestLiveEveryPlan: while each plan runs, its measured stages show
// tokens, a rate, finished requests' TTFTs and a time left, and say where
// they are; warmup shows as warmup. The three-stage and speculative-
// decoding plans once showed nothing at all. A stage too short for a
// poller to be sure to catch (the cold prefill: two one-token answers, a
// few milliseconds) is looked at from the plan's own log line inside it,
// with the engine waiting on the look.
func TestLiveEveryPlan(t *testing.T) {
	cfg := sim.Config{TokenInterval: 3 * time.Millisecond, PrefillRate: 100000, NaturalStop: longAnswers}
	tests := []struct {
		name     string
		run      func(url string, obs Observer) error
		phases   []Phase
		words    map[Phase]string
		measured int // requests whose TTFT the live chart must get
		// looks: at the log line that begins with the key, the live
		// view is in that phase and shows its tokens so far.
		looks map[string]Phase
	}{
		{"kovara", func(url string, obs Observer) error {
			p := smallPlan()
			p.OutputTokens, p.Warmup = 64, 4
			_, err := Run(context.Background(), p, Endpoint{URL: url}, obs)
			return err
		}, []Phase{PhaseWarmup, PhaseLevel}, map[Phase]string{PhaseLevel: "Level 2 of 2", PhaseWarmup: "Warmup (not measured)"}, 16, nil},
		{"three stages", func(url string, obs Observer) error {
			p := DefaultStagesPlan()
			p.Quick, p.Users, p.Timeout, p.SpecDecode = true, 3, 30*time.Second, "none"
			_, err := RunStages(context.Background(), p, Endpoint{URL: url}, obs)
			return err
		}, []Phase{PhaseDecode, PhasePrefill, PhaseWarmup, PhaseUsers}, map[Phase]string{
			PhaseDecode: "Stage 1 of 3: single-user decode", PhaseUsers: "Stage 3 of 3: 3 users at once", PhaseWarmup: "Stage 3 of 3: warmup at 3 users"}, 3 + 2 + 3,
			// After the calibration probe's answer, before the cold prefill.
			map[string]Phase{"cold prefill: about": PhasePrefill}},
		{"speculative decoding", func(url string, obs Observer) error {
			p := DefaultSpecDecPlan()
			p.Levels, p.MaxTokens, p.Timeout = []int{1, 2}, 64, 30*time.Second
			_, err := RunSpecDec(context.Background(), p, Endpoint{URL: url}, obs)
			return err
		}, []Phase{PhaseSpecDec}, map[Phase]string{PhaseSpecDec: "Speculative decoding, level 2 of 2"}, 2 * len(SpecDecPrompts), nil},
		{"context", func(url string, obs Observer) error {
			p := DefaultContextPlan()
			p.Depths, p.Repeats, p.OutputTokens, p.Timeout = []int{0, 1024}, 2, 64, 30*time.Second
			_, err := RunContext(context.Background(), p, Endpoint{URL: url}, obs)
			return err
		}, []Phase{PhaseContextCold, PhaseContextFollowUp}, map[Phase]string{PhaseContextCold: "Context depth"}, 2 * 2 * 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url := startSim(t, cfg)
			live := NewLive()
			look, stop := watch(live)
			var mu sync.Mutex
			looked := map[string]Snapshot{}
			logf := func(line string) {
				for prefix := range tt.looks {
					if strings.HasPrefix(line, prefix) {
						s := look()
						mu.Lock()
						looked[prefix] = s
						mu.Unlock()
					}
				}
			}
			err := tt.run(url, Observer{Live: live, Log: logf})
			seen := stop()
			if err != nil {
				t.Fatal(err)
			}
			for prefix, ph := range tt.looks {
				s, ok := looked[prefix]
				if !ok {
					t.Errorf("no log line began %q", prefix)
					continue
				}
				if s.Phase != ph || s.Tokens == 0 || s.TPS <= 0 || s.LevelDone == 0 {
					t.Errorf("at %q the live view showed %q, %d tokens, %.1f tok/s, %d finished; want %q with tokens, a rate and a finished request",
						prefix, s.Phase, s.Tokens, s.TPS, s.LevelDone, ph)
				}
			}
			for _, ph := range tt.phases {
				w := seen[ph]
				if w == nil {
					t.Errorf("%s: never seen", ph)
					continue
				}
				if w.tokens == 0 || !w.tps {
					t.Errorf("%s: tokens %d, a rate %v: the live view would show none", ph, w.tokens, w.tps)
				}
				if ph.Measured() && ph != PhasePrefill && !w.left {
					t.Errorf("%s: no time left was ever estimated", ph)
				}
				if want := tt.words[ph]; want != "" && !strings.HasPrefix(w.describe, want) {
					t.Errorf("%s: says %q, want it to begin %q", ph, w.describe, want)
				}
			}
			// A depth of the context plan is one stage: its finished
			// requests add up across its repeats (once a stage a request,
			// they showed 0 nearly all the time).
			if tt.name == "context" {
				if w := seen[PhaseContextFollowUp]; w == nil || w.done < 3 {
					t.Errorf("context: finished requests of a depth seen at most %+v, want them to add up past a round", w)
				}
			}
			if d := seen[PhaseDone]; d == nil || d.progress != 1 {
				t.Errorf("the finished plan's progress: %+v", d)
			}
			// Every measured request's TTFT reaches the chart (a stage's
			// last ones come with the next stage's first look), and no
			// warmup request's does.
			ttfts := 0
			for _, w := range seen {
				ttfts += w.ttft
			}
			if ttfts != tt.measured {
				t.Errorf("the live TTFT chart got %d points, want one per measured request: %d", ttfts, tt.measured)
			}
		})
	}
}
