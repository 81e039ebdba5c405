package engine

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/promptfile"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
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
	slots := l.beginStage(kovaraLevel(1, 2, 2, 10, 100))
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
	if got, want := s.Describe(), "Level 1 of 2 — concurrency 2 — 2 of 10 requests — this stage a few seconds left, whole plan about 15 s left"; got != want {
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
	slots = l.beginStage(kovaraLevel(2, 2, 4, 10, 100))
	now = 5 * time.Second
	slots[3].tokens.Add(400)
	if s = l.Snapshot(); s.TPS != 400 || !near(s.Progress, 0.7, 1e-9) {
		t.Errorf("level 2: rate %v (want 400), progress %v (want 0.7)", s.TPS, s.Progress)
	}
}

// kovaraLevel is Kovara level index of levels as runLevel begins it.
func kovaraLevel(index, levels, users, requests, tokens int) Stage {
	st := levelStage(index, levels, users)
	st.Measured, st.Index, st.Users, st.Requests, st.TokensEach = true, index, users, requests, tokens
	return st
}

// TestStageWords: every plan's stages read in the live view as they did
// when Live knew the plans: each line, with its finished requests, and
// the name a title gives it.
func TestStageWords(t *testing.T) {
	t.Parallel()
	withCounts := func(st Stage, users, requests int) Stage {
		st.Users, st.Requests = users, requests
		return st
	}
	capacity := CapacityProgress{Probing: 16, Step: results.StepDouble, Held: 8, Max: 256, Done: 4, Left: 6}
	bisect := CapacityProgress{Probing: 3, Step: results.StepBisect, Held: 2, Missed: 4, Max: 256, Done: 3, Left: 3}
	tests := []struct {
		stage  Stage
		line   func(*Live) // changes the line as the stage goes on; nil: none
		done   int
		want   string
		name   string
		inWait bool
	}{
		{kovaraLevel(1, 2, 2, 10, 100), nil, 2, "Level 1 of 2 — concurrency 2 — 2 of 10 requests", "level 1", false},
		{withCounts(warmupStage(), 4, 8), nil, 2, "Warmup (not measured) — 2 of 8 requests", "warmup", false},
		{withCounts(capacity.stage(), 16, 48), nil, 6,
			"Capacity search: probing 16 concurrent users; so far up to 8 held (maximum 256) — 6 of 48 requests", "the probe at 16 users", true},
		{withCounts(bisect.stage(), 3, 20), nil, 0,
			"Capacity search: probing 3 concurrent users (bisecting); so far 2 held, 4 missed — 0 of 20 requests", "the probe at 3 users", true},
		{withCounts(CapacityProgress{Probing: 1, Max: 4}.stage(), 1, 20), nil, 1,
			"Capacity search: probing 1 concurrent user — 1 of 20 requests", "the probe at 1 user", true},
		{depthStage(3, 5, 8192, 1, 3, 128), nil, 0, "Context depth 8k (4 of 5), repeat 1 of 3: cold prompts — 0 of 6 requests", "depth 8k", true},
		{depthStage(3, 5, 8192, 1, 3, 128), func(l *Live) { l.setLine(depthLine(3, 5, 8192, 2, 3, true)) }, 3,
			"Context depth 8k (4 of 5), repeat 2 of 3: cached follow-ups — 3 of 6 requests", "depth 8k", true},
		{depthStage(0, 2, 0, 2, 1, 128), nil, 1, "Context depth short prompt (1 of 2), repeat 1 of 1: cold prompts — 1 of 4 requests", "depth short prompt", true},
		{specDecStage(1, 3, 4, 16, 512), nil, 6, "Speculative decoding, level 2 of 3 — concurrency 4 — 6 of 16 requests", "level 2", false},
		{stagesDecode(3, 1024), nil, 0, "Stage 1 of 3: single-user decode — answer 1 of 3", "stage 1 (single-user decode)", false},
		{stagesDecode(3, 1024), nil, 3, "Stage 1 of 3: single-user decode — answer 3 of 3", "stage 1 (single-user decode)", false},
		{stagesPrefill(), nil, 0, "Stage 2 of 3: cold prefill — calibration probe (1 of 2 requests)", "stage 2 (cold prefill)", false},
		{stagesPrefill(), nil, 1, "Stage 2 of 3: cold prefill — the long prompt (2 of 2 requests)", "stage 2 (cold prefill)", false},
		{stagesWarmup(3, 32), nil, 1, "Stage 3 of 3: warmup at 3 users (not measured) — 1 of 3 requests", "warmup", false},
		{stagesUsers(3, 512), nil, 2, "Stage 3 of 3: 3 users at once — 2 of 3 answers finished", "stage 3 (many users)", false},
	}
	for _, tt := range tests {
		l := NewLive()
		l.start(func() time.Duration { return 0 }, 0, 0)
		slots := l.beginStage(tt.stage)
		if tt.line != nil {
			tt.line(l)
		}
		slots[0].done.Add(int64(tt.done))
		s := l.Snapshot()
		if got := s.Describe(); got != tt.want {
			t.Errorf("%s: says %q, want %q", tt.name, got, tt.want)
		}
		if s.StageName != tt.name || s.StageNameInWait != tt.inWait || s.Phase.Measured() != tt.stage.Measured {
			t.Errorf("%q: named %q (in the wait %v), phase %q; want %q (%v)", tt.want, s.StageName, s.StageNameInWait, s.Phase, tt.name, tt.inWait)
		}
	}
	// Between stages the phase says where the run is, whatever stage came
	// before it.
	l := NewLive()
	if got := l.Snapshot().Describe(); got != "Starting…" {
		t.Errorf("before anything: %q", got)
	}
	for _, tt := range []struct {
		p    Phase
		want string
	}{{PhaseCheck, "Checking endpoint…"}, {PhaseProbe, "Probing…"}, {PhaseCalibrate, "Calibrating…"}, {PhaseWarmup, "Warmup…"}} {
		l.setPhase(tt.p)
		if got := l.Snapshot().Describe(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.p, got, tt.want)
		}
	}
	l.beginStage(kovaraLevel(1, 1, 1, 1, 1))
	l.setPhase(PhaseDone)
	if got := l.Snapshot().Describe(); got != "Done…" {
		t.Errorf("done after a level: %q", got)
	}
	if got := (Snapshot{Phase: PhaseStopped}).Describe(); got != "Stopped…" {
		t.Errorf("a snapshot with a phase only: %q", got)
	}
}

// TestLiveProgressByStages: a plan that knows its size in stages only
// (the capacity search) shows its progress as stages done, with the
// current one's share, against those it expects.
func TestLiveProgressByStages(t *testing.T) {
	t.Parallel()
	now := time.Duration(0)
	l := NewLive()
	l.start(func() time.Duration { return now }, 0, 0)
	l.expectStages(2, 2) // two measured, this one and one more expected
	slots := l.beginStage(kovaraLevel(3, 0, 4, 20, 0))
	slots[0].done.Add(10)
	if got := l.Snapshot().Progress; !near(got, 2.5/4, 1e-9) {
		t.Errorf("half-way through the third of four: %v, want %v", got, 2.5/4)
	}
	l.setPhase(PhaseStopped)
	if got := l.Snapshot().Progress; !near(got, 2.0/4, 1e-9) {
		t.Errorf("stopped in the third: %v, want %v (its requests count no more)", got, 2.0/4)
	}
	l.expectStages(3, 0)
	l.setPhase(PhaseDone)
	if got := l.Snapshot().Progress; got != 1 {
		t.Errorf("done: %v", got)
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

// watch polls live as the app's ticker does and keeps, per stage (by its
// name) and per phase between stages, what a viewer would have seen. look
// takes one more Snapshot at once, on the same goroutine as the ticker's
// (Snapshot has one reader), and returns it: a Log hook calls it to see
// the live view at a known point of the plan, with the engine waiting on
// it, whatever the machine's speed.
type watched struct {
	measured bool
	tokens   int64
	tps      bool
	ttft     int
	left     bool
	describe string
	progress float64
	done     int // the most finished requests of a stage seen
}

// seenKey is where watch files a Snapshot: its stage's name, or between
// stages its phase.
func seenKey(s Snapshot) string {
	if s.Phase == PhaseWarmup || s.Phase.Measured() {
		return s.StageName
	}
	return string(s.Phase)
}

func watch(live *Live) (look func() Snapshot, stop func() map[string]*watched) {
	seen := map[string]*watched{}
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
			w := seen[seenKey(s)]
			if w == nil {
				w = &watched{measured: s.Phase.Measured()}
				seen[seenKey(s)] = w
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
	stop = func() map[string]*watched {
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
		stages   []string // by name
		words    map[string]string
		measured int // requests whose TTFT the live chart must get
		// looks: at the log line that begins with the key, the live
		// view is in that stage and shows its tokens so far.
		looks map[string]string
	}{
		{"kovara", func(url string, obs Observer) error {
			p := smallPlan()
			p.OutputTokens, p.Warmup = 64, 4
			_, err := Run(context.Background(), p, setup.Endpoint{URL: url}, obs)
			return err
		}, []string{"warmup", "level 1", "level 2"}, map[string]string{"level 2": "Level 2 of 2", "warmup": "Warmup (not measured)"}, 16, nil},
		{"three stages", func(url string, obs Observer) error {
			p := setup.DefaultStagesPlan()
			p.Quick, p.Users, p.Timeout, p.SpecDecode = true, 3, 30*time.Second, "none"
			_, err := RunStages(context.Background(), p, setup.Endpoint{URL: url}, obs)
			return err
		}, []string{"stage 1 (single-user decode)", "stage 2 (cold prefill)", "warmup", "stage 3 (many users)"}, map[string]string{
			"stage 1 (single-user decode)": "Stage 1 of 3: single-user decode", "stage 3 (many users)": "Stage 3 of 3: 3 users at once",
			"warmup": "Stage 3 of 3: warmup at 3 users"}, 3 + 2 + 3,
			// After the calibration probe's answer, before the cold prefill.
			map[string]string{"cold prefill: about": "stage 2 (cold prefill)"}},
		{"speculative decoding", func(url string, obs Observer) error {
			p := setup.DefaultSpecDecPlan()
			p.Levels, p.MaxTokens, p.Timeout = []int{1, 2}, 64, 30*time.Second
			_, err := RunSpecDec(context.Background(), p, setup.Endpoint{URL: url}, obs)
			return err
		}, []string{"level 1", "level 2"}, map[string]string{"level 2": "Speculative decoding, level 2 of 2"}, 2 * len(SpecDecPrompts), nil},
		// A service level any machine meets, so the search measures the
		// same probes whatever the load: 1 and 2 users, then 2 again (the
		// answer's level, repeated).
		{"capacity", func(url string, obs Observer) error {
			p := setup.DefaultCapacityPlan()
			p.InputTokens, p.OutputTokens, p.Warmup, p.MaxConcurrency = 64, 32, 2, 2
			p.UserTPS, p.TTFTP95Ms = 0.01, 600_000
			_, err := RunCapacity(context.Background(), p, setup.Endpoint{URL: url}, obs)
			return err
		}, []string{"the probe at 1 user", "the probe at 2 users"}, map[string]string{"the probe at 2 users": "Capacity search: probing 2"},
			setup.CapacityRequests(1) + 2*setup.CapacityRequests(2), nil},
		{"context", func(url string, obs Observer) error {
			p := setup.DefaultContextPlan()
			p.Depths, p.Repeats, p.OutputTokens, p.Timeout = []int{0, 1024}, 2, 64, 30*time.Second
			_, err := RunContext(context.Background(), p, setup.Endpoint{URL: url}, obs)
			return err
		}, []string{"warmup", "depth short prompt", "depth 1k"}, map[string]string{"depth 1k": "Context depth 1k (2 of 2), repeat "}, 2 * 2 * 2, nil},
		// Two given rates, each a stage named by its rate; the warmup
		// before them is not measured.
		{"rate", func(url string, obs Observer) error {
			p := ratePlan(20, 40)
			p.Requests, p.Warmup, p.OutputTokens = 8, 2, 32
			_, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, obs)
			return err
		}, []string{"warmup", "20 req/s", "40 req/s"}, map[string]string{"20 req/s": "Rate 1 of 2 — 20 req/s offered, constant, up to ",
			"40 req/s": "Rate 2 of 2 — 40 req/s offered"}, 2 * 8, nil},
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
			for prefix, name := range tt.looks {
				s, ok := looked[prefix]
				if !ok {
					t.Errorf("no log line began %q", prefix)
					continue
				}
				if s.StageName != name || !s.Phase.Measured() || s.Tokens == 0 || s.TPS <= 0 || s.LevelDone == 0 {
					t.Errorf("at %q the live view showed %q (%s), %d tokens, %.1f tok/s, %d finished; want %q with tokens, a rate and a finished request",
						prefix, s.StageName, s.Phase, s.Tokens, s.TPS, s.LevelDone, name)
				}
			}
			for _, name := range tt.stages {
				w := seen[name]
				if w == nil {
					t.Errorf("%s: never seen", name)
					continue
				}
				if w.tokens == 0 || !w.tps {
					t.Errorf("%s: tokens %d, a rate %v: the live view would show none", name, w.tokens, w.tps)
				}
				if w.measured && name != "stage 2 (cold prefill)" && !w.left {
					t.Errorf("%s: no time left was ever estimated", name)
				}
				if want := tt.words[name]; want != "" && !strings.HasPrefix(w.describe, want) {
					t.Errorf("%s: says %q, want it to begin %q", name, w.describe, want)
				}
			}
			// A depth of the context plan is one stage: its finished
			// requests add up across its repeats (once a stage a request,
			// they showed 0 nearly all the time).
			if tt.name == "context" {
				if w := seen["depth 1k"]; w == nil || w.done < 3 {
					t.Errorf("context: finished requests of a depth seen at most %+v, want them to add up past a round", w)
				}
			}
			if d := seen[string(PhaseDone)]; d == nil || d.progress != 1 {
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

func TestPlanLeftAtLeastTheStage(t *testing.T) {
	t.Parallel()
	tests := []struct{ plan, stage, want time.Duration }{
		{40 * time.Second, 45 * time.Second, 45 * time.Second}, // seen: a slow last stage after a fast one
		{90 * time.Second, 45 * time.Second, 90 * time.Second},
		{0, 45 * time.Second, 0}, // the plan cannot say yet: nothing is made up
		{40 * time.Second, 0, 40 * time.Second},
	}
	for _, tt := range tests {
		if got := atLeastStage(tt.plan, tt.stage); got != tt.want {
			t.Errorf("atLeastStage(%v, %v) = %v, want %v", tt.plan, tt.stage, got, tt.want)
		}
	}
}

// TestLiveOpening: while a level's connections are opened ahead of it
// (seconds, against a server with fewer HTTP threads than users), the
// live line says how many are open; afterwards it is the level's own.
func TestLiveOpening(t *testing.T) {
	t.Parallel()
	now := time.Duration(0)
	l := NewLive()
	l.start(func() time.Duration { return now }, 2, 20)
	l.beginStage(kovaraLevel(2, 2, 8, 16, 100))
	before := l.Snapshot().Line
	var open atomic.Int64
	restore := l.opening(8, &open)
	open.Store(4)
	if got, want := l.Snapshot().Line, before+" — opening connections ahead of the level: 4 of 8 open"; got != want {
		t.Errorf("while opening: %q, want %q", got, want)
	}
	restore()
	if got := l.Snapshot().Line; got != before {
		t.Errorf("after opening: %q, want the level's own %q", got, before)
	}
}

// TestLiveReadingPrompts: while a prompts file is read the live line says
// how far, in MB of the file's size (its phase's words for a small file).
func TestLiveReadingPrompts(t *testing.T) {
	t.Parallel()
	l := NewLive()
	var p promptfile.Progress
	p.Size.Store(2_048_000_000)
	p.Read.Store(412_300_000)
	l.readingPrompts(&p)
	if got, want := l.Snapshot().Describe(), "Reading your prompts file: 412 of 2,048 MB…"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := l.Snapshot().Read; got < 0.2013 || got > 0.2014 {
		t.Errorf("read %.4f of the file, want 0.2013", got)
	}
	p.Read.Store(2_048_000_000)
	if got, want := l.Snapshot().Line, "Reading your prompts file: 2,048 of 2,048 MB…"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	p.Size.Store(300_000)
	if got, want := l.Snapshot().Line, "Reading your prompts file…"; got != want {
		t.Errorf("a small file: %q, want %q", got, want)
	}
	l.start(func() time.Duration { return 0 }, 1, 10)
	if got := l.Snapshot().Line; got != "Starting…" {
		t.Errorf("once the run starts: %q", got)
	}
}
