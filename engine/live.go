package engine

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/promptfile"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/hw"
)

// Phase is which of the steps every plan shares a run is in: the
// endpoint check, the probe, calibration, a warmup or a measured stage,
// and the end. What a stage is and how it reads is the plan's own
// (Stage).
type Phase string

const (
	PhasePrompts   Phase = "reading your prompts file"
	PhaseCheck     Phase = "checking endpoint"
	PhaseWallIdle  Phase = "reading the wall plug at idle, before anything is sent"
	PhaseProbe     Phase = "probing"
	PhaseCalibrate Phase = "calibrating"
	PhaseWarmup    Phase = "warmup"
	PhaseMeasure   Phase = "measuring"
	PhaseDone      Phase = "done"
	PhaseStopped   Phase = "stopped"
)

// Measured says whether requests in phase p are measured: their tokens,
// TTFTs and gaps are the plan's figures (warmup's are not).
func (p Phase) Measured() bool { return p == PhaseMeasure }

// Stage is a stage of a plan as the plan's code describes it when it
// begins it (beginStage): whether it is measured, its place, its slots
// and requests, and its words. Live keeps it and hands its words out with
// the stage's counts; it knows nothing of any plan.
type Stage struct {
	// Measured: its requests are the plan's figures; false for a warmup.
	Measured bool
	// Index is its place among the plan's stages, from 1 (Snapshot.Level);
	// 0 for one before them, as a warmup.
	Index      int
	Users      int // slots: requests in flight at once
	Requests   int
	TokensEach int // output tokens each request asks for; 0: unknown
	// Name names it in a title: "level 2", "depth 8k", "the probe at 16
	// users", "stage 1 (single-user decode)".
	Name string
	// NameInWait: while its first token gaps are awaited, the live view
	// says whose they are (a deep context's first answer takes seconds).
	NameInWait bool
	// Line says where it is from its finished requests and its total:
	// "Level 1 of 2 — concurrency 2 — 2 of 10 requests" (Snapshot.Line).
	// Snapshot calls it, on the reader's goroutine.
	Line func(done, total int) string
}

func (st *Stage) phase() Phase {
	if st.Measured {
		return PhaseMeasure
	}
	return PhaseWarmup
}

// liveBufferCap bounds what one slot keeps between two snapshots, so a run
// nobody watches does not grow without limit.
const liveBufferCap = 1 << 18

// Live is the run's progress as seen from outside: the engine writes it
// without waiting on anyone (atomics per chunk, one small per-slot lock per
// finished request) and a single reader polls Snapshot at its own cadence.
type Live struct {
	mu                   sync.Mutex // guards the fields below; never taken per chunk
	clock                func() time.Duration
	prompts              *promptfile.Progress // PhasePrompts: how far the file is read
	phase                Phase
	cur                  Stage // the current stage, as its plan began it
	levels, overallTotal int
	doneBefore           int // requests of finished levels
	levelStart           time.Duration
	slots                []*liveSlot
	carryTTFT            []float64 // a finished stage's last TTFTs, for the next Snapshot
	lastError            string
	lastErrorAt          time.Duration
	stage, seenStage     int // bumped per warmup or level; NewLevel compares
	// byStages: the plan's size is known in stages only (the capacity
	// search): stagesDone measured, stagesLeft expected, the current one
	// included.
	byStages               bool
	stagesDone, stagesLeft int
	// This stage's recent Snapshots (time, tokens), oldest first, for
	// the rate over the last rateWindow.
	rateStage int
	rateHist  []ratePoint
	// The plan's own work besides its measured requests (expectPrep):
	// calibration and warmup, counted in the whole plan's progress.
	prepTotal, prepDone int
	// runIndex of runs: this run's place in a repeated group (SetRepeat),
	// kept from one run to the next; 0 of 0 for one run.
	runIndex, runs int
	// announced: SetRepeat said a run is about to start, and it has not
	// (start): nothing of it is done yet, whatever the last one left.
	announced bool
	// planHist is the whole plan's progress as it grew (planLeft).
	planHist []planPoint
	// weights are how long each measured stage is expected to take, in
	// any one unit (ExpectStages); nil: each as long as its requests.
	weights []float64
	// tokStage, tokSeen and tokAt: the stage's tokens at the Snapshot
	// where they last grew, and when (Snapshot.Quiet).
	tokStage int
	tokSeen  int64
	tokAt    time.Duration

	// The server's own gauges from /metrics, written by the scraper
	// about once a second under their own lock.
	smu          sync.Mutex
	serverFamily string
	serverLatest *results.ServerMetricsSample
	serverNew    []results.ServerMetricsSample
	serverNone   string // why there are no server readings, once known
	alert        string // what the run's watchdog says now (Snapshot.Alert)
	foreign      string // another client on the server, said now (foreign.go)
	// inFlight is how many of the stage's requests are out, as its loop's
	// watchdog last saw (every half second); 0 when none or no loop.
	inFlight int

	gpu  func() (hw.Point, bool) // the GPU sampler's newest reading; nil without one
	wall func() (WallReading, bool)
}

// WallReading is the wall plug's newest reading: the whole machine's
// power, and its idle read before the run (nil until then, or when
// the plug gave none while idle).
type WallReading struct {
	At     time.Duration // since the run started
	PowerW float64
	IdleW  *float64
}

// setWall lets Snapshot read the wall plug's sampler.
func (l *Live) setWall(latest func() (WallReading, bool)) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.wall = latest
	l.mu.Unlock()
}

// setGPU lets Snapshot read the GPU sampler (which has its own lock).
func (l *Live) setGPU(latest func() (hw.Point, bool)) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.gpu = latest
	l.mu.Unlock()
}

// liveSlot is one slot's share of the live state. Slots never touch each
// other's, and the padding keeps their hot counters on separate cache lines.
type liveSlot struct {
	tokens   atomic.Int64
	done     atomic.Int64
	ok       atomic.Int64
	errs     atomic.Int64
	timeouts atomic.Int64
	_        [24]byte

	mu        sync.Mutex
	ttft      []float64
	itl       []float32
	lastErr   string
	lastErrAt time.Duration
}

// Snapshot is the live state at one moment, plus the samples that finished
// since the previous Snapshot.
type Snapshot struct {
	At          time.Duration // since the run started
	Phase       Phase
	Level       int // 1-based index of the current level, 0 before levels
	Levels      int
	Concurrency int
	LevelDone   int
	LevelTotal  int
	// Read is how much of a prompts file has been read, 0 to 1, while
	// the phase is PhasePrompts.
	Read         float64
	OverallDone  int
	OverallTotal int
	OK           int
	Errors       int
	Timeouts     int
	Tokens       int64 // text chunks received in the current level
	// TPS is output tokens (text chunks) per second over all streams in
	// about the last second (since the stage began, if that is later):
	// the live throughput both programs show.
	TPS float64
	// TokensEach is what each request of the stage asks for (0: unknown).
	TokensEach   int
	LevelElapsed time.Duration
	// Left estimates the time the stage still needs from its progress so
	// far (its finished requests, and the tokens of those in flight);
	// 0 until a request has finished or a tenth of its tokens came.
	Left time.Duration
	// StageProgress is how far the stage is, 0 to 1 (stageFraction):
	// the live view's stage bar, and the share its time left (Left) is
	// extrapolated from, so the two never disagree. The stage's time
	// runs from its requests' release, after its connections are open.
	StageProgress float64
	// Quiet is how long no token has come while requests are out, once
	// that is quietAfter or more (0 else): the server may have stopped,
	// or be reading long prompts. No time left is estimated meanwhile.
	Quiet time.Duration
	// Progress is how far the whole plan is, 0 to 1, as well as it is
	// known: the capacity search guesses its remaining levels. It
	// counts calibration and warmup as the plan's work, and, in a
	// repeated group, the runs before this one (Run of Runs).
	Progress float64
	// PlanLeft estimates the time the whole plan (the group, when
	// repeated) still needs, from how fast Progress grew over about the
	// last minute; it grows while nothing moves. 0 until it can say.
	PlanLeft  time.Duration
	Run, Runs int // this run's place in a repeated group; 0 of 0 alone
	LastError string
	// TTFT and ITL are of the measured requests (never warmup's) that
	// finished since the previous Snapshot: ms, and the gaps of those
	// requests, exactly 0 where two chunks came off the socket in one
	// read. A stage's last TTFTs may come with the next stage's first
	// Snapshot; its last gaps are dropped with its histogram.
	TTFT     []float64
	ITL      []float32
	NewLevel bool // warmup or a new level began since the previous Snapshot
	// Line is where the run is in words, without the time left
	// (Describe adds it): the current stage's own (Stage.Line, with its
	// counts), or between stages the phase ("Probing…").
	Line string
	// StageName names the current stage in a title (Stage.Name), and
	// StageNameInWait says to name it while its first gaps are awaited
	// (Stage.NameInWait).
	StageName       string
	StageNameInWait bool

	// The server's own view from its /metrics, when it answers (see
	// servermetrics.go): the engine whose names were read, the latest
	// reading, and the readings since the previous Snapshot (T is
	// seconds since the run started, like At). All empty without
	// /metrics.
	// GPU is the newest GPU reading (total power, mean utilisation), when
	// the endpoint has a GPU source.
	GPU *hw.Point
	// Wall is the wall plug's newest reading, when the endpoint has one.
	Wall *WallReading

	ServerFamily string
	Server       *results.ServerMetricsSample
	ServerNew    []results.ServerMetricsSample
	// ServerNone says why the server's charts stay empty, once that is
	// known: its /metrics did not answer, or stopped answering.
	ServerNone string
	// Alert is what needs saying now about the server, in the warning
	// colour and in words ("no tokens for 12 s — the server may have
	// stopped …", "another client is using the server: …"); "" when all
	// is well. While the watchdog's is set no time left is estimated: the
	// data it would come from has stopped.
	Alert string
}

// NewLive makes an empty live view.
func NewLive() *Live { return &Live{} }

func (l *Live) start(clock func() time.Duration, levels, overall int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	// A live view may follow several runs one after another (a settings
	// comparison's): each starts from nothing of the last one's.
	l.clock, l.levels, l.overallTotal = clock, levels, overall
	l.phase, l.cur, l.doneBefore, l.levelStart, l.slots, l.carryTTFT = "", Stage{}, 0, 0, nil, nil
	l.lastError, l.lastErrorAt, l.byStages, l.stagesDone, l.stagesLeft = "", 0, false, 0, 0
	l.rateStage, l.rateHist = 0, nil
	l.prepTotal, l.prepDone, l.planHist, l.announced = 0, 0, nil, false
	l.prompts = nil
	l.mu.Unlock()
	l.setForeign("")
}

// readingPrompts says the plan is reading a person's prompts file, and
// how far it has read (p, kept by the scan), until the run starts: a
// file of gigabytes takes seconds to read.
func (l *Live) readingPrompts(p *promptfile.Progress) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.phase, l.prompts = PhasePrompts, p
	l.mu.Unlock()
}

func (l *Live) setPhase(p Phase) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.phase = p
	l.mu.Unlock()
}

func (l *Live) phaseOr(def Phase) Phase {
	if l == nil {
		return def
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase
}

// expectStages says the plan's size in stages, for a plan that cannot say
// its requests ahead (the capacity search): done measured, left still
// expected, the current one included. Progress is then done and the
// current stage's share of done+left.
func (l *Live) expectStages(done, left int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.byStages, l.stagesDone, l.stagesLeft = true, done, left
	l.mu.Unlock()
}

// beginStage installs fresh slots for the stage st, as its plan
// describes it: st.Users slots for st.Requests requests.
func (l *Live) beginStage(st Stage) []*liveSlot {
	slots := make([]*liveSlot, st.Users)
	for i := range slots {
		slots[i] = &liveSlot{}
	}
	if l == nil {
		return slots
	}
	l.mu.Lock()
	if l.cur.Measured {
		// The stage that ends may have TTFTs no Snapshot took yet.
		for _, sl := range l.slots {
			sl.mu.Lock()
			if len(l.carryTTFT)+len(sl.ttft) <= liveBufferCap {
				l.carryTTFT = append(l.carryTTFT, sl.ttft...)
			}
			sl.ttft = sl.ttft[:0]
			sl.mu.Unlock()
		}
	}
	l.cur, l.phase, l.slots = st, st.phase(), slots
	l.stage++
	if l.clock != nil {
		l.levelStart = l.clock()
	}
	l.mu.Unlock()
	return slots
}

// opening adds to the current stage's words how many of its n
// connections are open, until restore is called: a server with fewer
// HTTP threads than users takes some only as others go idle (seconds),
// and the level has not started meanwhile.
func (l *Live) opening(n int, open *atomic.Int64) (restore func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	line := l.cur.Line
	l.mu.Unlock()
	l.setLine(func(done, total int) string {
		s := fmt.Sprintf("opening connections ahead of the level: %d of %d open", open.Load(), n)
		if line != nil {
			s = line(done, total) + " — " + s
		}
		return s
	})
	return func() {
		l.setLine(line)
		l.released()
	}
}

// setLine changes the current stage's words as it goes on (the context
// plan's depth: a repeat's cold prompts, then their follow-ups).
func (l *Live) setLine(line func(done, total int) string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.cur.Line = line
	l.mu.Unlock()
}

func (l *Live) endLevel(finished int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.doneBefore += finished
	l.mu.Unlock()
}

// finish records a finished request in its slot.
func (s *liveSlot) finish(o *outcome, itl []float32) {
	if o.interrupted {
		return
	}
	s.done.Add(1)
	switch {
	case o.ok():
		s.ok.Add(1)
	case o.class == ClassTimeout:
		s.timeouts.Add(1)
	default:
		s.errs.Add(1)
	}
	s.mu.Lock()
	if o.ok() {
		if len(s.ttft) < liveBufferCap {
			s.ttft = append(s.ttft, float64(o.ttft)/float64(time.Millisecond))
		}
		if len(s.itl)+len(itl) <= liveBufferCap {
			s.itl = append(s.itl, itl...)
		}
	} else {
		s.lastErr, s.lastErrAt = o.class+": "+o.msg, o.end
	}
	s.mu.Unlock()
}

// Snapshot reads the live state and drains the per-slot sample buffers.
// Call it from one goroutine only (the UI ticker or the CLI's bar).
func (l *Live) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{
		Phase: l.phase, Level: l.cur.Index, Levels: l.levels, Concurrency: l.cur.Users,
		LevelTotal: l.cur.Requests, OverallTotal: l.overallTotal, TokensEach: l.cur.TokensEach,
		StageName: l.cur.Name, StageNameInWait: l.cur.NameInWait,
	}
	if l.clock != nil {
		s.At = l.clock()
		s.LevelElapsed = s.At - l.levelStart
	}
	s.TTFT, l.carryTTFT = l.carryTTFT, nil
	for _, sl := range l.slots {
		s.Tokens += sl.tokens.Load()
		s.LevelDone += int(sl.done.Load())
		s.OK += int(sl.ok.Load())
		s.Errors += int(sl.errs.Load())
		s.Timeouts += int(sl.timeouts.Load())
		sl.mu.Lock()
		if l.cur.Measured {
			s.TTFT = append(s.TTFT, sl.ttft...)
			s.ITL = append(s.ITL, sl.itl...)
		}
		sl.ttft, sl.itl = sl.ttft[:0], sl.itl[:0]
		if sl.lastErr != "" && sl.lastErrAt >= l.lastErrorAt {
			l.lastError, l.lastErrorAt = sl.lastErr, sl.lastErrAt
		}
		sl.mu.Unlock()
	}
	s.LastError = l.lastError
	s.NewLevel = l.stage != l.seenStage
	l.smu.Lock()
	s.ServerFamily, s.Server, s.ServerNone, s.Alert = l.serverFamily, l.serverLatest, l.serverNone, l.alert
	watchdog := l.alert != ""
	if l.foreign != "" {
		s.Alert = joinAlerts(s.Alert, l.foreign)
	}
	if len(l.serverNew) > 0 {
		s.ServerNew = l.serverNew
		l.serverNew = nil
	}
	l.smu.Unlock()
	l.seenStage = l.stage
	if s.Phase.Measured() {
		s.OverallDone = l.doneBefore + s.LevelDone
	} else {
		s.OverallDone = l.doneBefore
	}
	l.rate(&s)
	s.Quiet = l.quiet(s)
	if s.Phase == PhaseWarmup || s.Phase.Measured() {
		s.StageProgress = stageFraction(s)
	}
	if !watchdog && s.Quiet == 0 {
		// Another client's load slows the stage but does not stop it:
		// the time left still comes from its progress.
		s.Left = stageLeft(s)
	}
	s.Progress = l.progress(s)
	s.Run, s.Runs = l.runIndex, l.runs
	if plan := l.planLeft(s.At, s.Progress); !watchdog && s.Quiet == 0 {
		s.PlanLeft = atLeastStage(plan, s.Left)
	}
	switch {
	case l.cur.Line != nil && s.Phase == l.cur.phase():
		s.Line = l.cur.Line(s.LevelDone, s.LevelTotal)
	case s.Phase == PhasePrompts && l.prompts != nil:
		read, size := l.prompts.Read.Load(), l.prompts.Size.Load()
		s.Line = promptsLine(read, size)
		if size > 0 {
			s.Read = float64(read) / float64(size)
		}
	default:
		s.Line = phaseLine(s.Phase)
	}
	if l.gpu != nil {
		if p, ok := l.gpu(); ok {
			s.GPU = &p
		}
	}
	if l.wall != nil {
		if w, ok := l.wall(); ok {
			s.Wall = &w
		}
	}
	return s
}

// quietAfter is how long requests may be out with no token before the
// live view says so instead of a time left: longer than a loaded
// server's usual first token, much shorter than the watchdog's silence
// (DefaultSilence), which then asks whether the server is still there.
const quietAfter = 3 * time.Second

// quiet is how long the stage has had no token while requests are out
// (inFlight), when that is quietAfter or more; else 0. A server that died
// with its streams open showed "errors 0 … about 10 s left" over a flat
// line until the watchdog spoke, ten seconds on. Call with mu.
func (l *Live) quiet(s Snapshot) time.Duration {
	if l.tokStage != l.stage {
		l.tokStage, l.tokSeen, l.tokAt = l.stage, 0, l.levelStart
	}
	if s.Tokens > l.tokSeen {
		l.tokSeen, l.tokAt = s.Tokens, s.At
	}
	if s.Phase != PhaseWarmup && !s.Phase.Measured() || l.inFlight == 0 {
		return 0
	}
	if q := s.At - max(l.tokAt, l.levelStart); q >= quietAfter {
		return q
	}
	return 0
}

// setInFlight records how many requests the stage has out now (the
// loop's watchdog, every half second).
func (l *Live) setInFlight(n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.inFlight = n
	l.mu.Unlock()
}

// released says the stage's requests are released, now that its
// connections are open: its time, rate and silence run from here, not
// from the seconds its connections took to open (16 s of a 22-s level
// at 32 users against llama-server -np 2, which made its time left
// 75 s with 6 s to go).
func (l *Live) released() {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.clock != nil {
		l.levelStart = l.clock()
		l.rateStage = -1 // the rate starts again from here
	}
	l.mu.Unlock()
}

// rateWindow is what the live rate averages over: chunks come in bursts
// (a slot's answer, a batch step), and a quarter-second rate jumps
// between 0 and twice the truth.
const rateWindow = time.Second

type ratePoint struct {
	at     time.Duration
	tokens int64
}

// planPoint is the whole plan's progress f at one Snapshot (planLeft).
type planPoint struct {
	at time.Duration
	f  float64
}

// rate sets s.TPS from the tokens of the last rateWindow: since the
// newest earlier Snapshot at least that old, or since the stage began.
// Call with mu.
func (l *Live) rate(s *Snapshot) {
	if l.rateStage != l.stage {
		l.rateStage = l.stage
		l.rateHist = append(l.rateHist[:0], ratePoint{l.levelStart, 0})
	}
	l.rateHist = append(l.rateHist, ratePoint{s.At, s.Tokens})
	for len(l.rateHist) > 2 && l.rateHist[1].at <= s.At-rateWindow {
		l.rateHist = l.rateHist[1:]
	}
	base := l.rateHist[0]
	if dt := s.At - base.at; dt > 0 && s.Tokens >= base.tokens {
		s.TPS = float64(s.Tokens-base.tokens) / dt.Seconds()
	}
}

// stageFraction is how much of the stage is done, 0 to 1: its finished
// requests, or the tokens received against those asked for when that
// says more (a few long requests: the tokens move while they run).
// Answers that stop early make the token share lag, never lead.
func stageFraction(s Snapshot) float64 {
	if s.LevelTotal <= 0 {
		return 0
	}
	f := float64(s.LevelDone) / float64(s.LevelTotal)
	if s.TokensEach > 0 {
		f = max(f, float64(s.Tokens)/float64(s.TokensEach*s.LevelTotal))
	}
	return min(f, 1)
}

// stageLeft extrapolates the stage's elapsed time over what is left of
// it, once there is something to go on: a finished request, or a tenth of
// the stage's tokens.
func stageLeft(s Snapshot) time.Duration {
	if s.Phase != PhaseWarmup && !s.Phase.Measured() {
		return 0
	}
	f := stageFraction(s)
	if f <= 0 || f >= 1 || (s.LevelDone == 0 && f < 0.1) {
		return 0
	}
	return time.Duration(float64(s.LevelElapsed) * (1 - f) / f)
}

// progress is the whole plan's share done: the finished stages' requests
// and the current stage's fraction of its own; for a plan whose size is
// known in stages only (expectStages), the stages measured (and the
// current one's fraction) against those it expects to measure. Call with
// mu.
func (l *Live) progress(s Snapshot) float64 {
	in := 0.0
	if s.Phase.Measured() {
		in = stageFraction(s)
	}
	if l.byStages {
		if l.stagesDone+l.stagesLeft == 0 {
			return 0
		}
		if l.stagesLeft == 0 {
			in = 0
		}
		return min((float64(l.stagesDone)+in)/float64(l.stagesDone+l.stagesLeft), 1)
	}
	return l.inGroup(l.runProgress(s, in))
}

// runProgress is this run's share done, its calibration and warmup
// counted (expectPrep), in its measured stage's share of itself: each
// stage as long as its requests, or as ExpectStages weighs it. Call with
// mu.
func (l *Live) runProgress(s Snapshot, in float64) float64 {
	if l.announced {
		return 0
	}
	if s.Phase == PhaseDone {
		return 1
	}
	var done, total float64
	if w := l.weights; len(w) > 0 && len(w) == l.levels {
		for i, x := range w {
			total += x
			if s.Phase.Measured() && i+1 < s.Level {
				done += x
			}
		}
		if s.Phase.Measured() && s.Level >= 1 && s.Level <= len(w) {
			done += in * w[s.Level-1]
		}
	} else {
		total = float64(s.OverallTotal)
		done = float64(s.OverallDone-s.LevelDone) + in*float64(s.LevelTotal)
		if !s.Phase.Measured() {
			done = float64(s.OverallDone)
		}
	}
	total += float64(l.prepTotal)
	if total <= 0 {
		return 0
	}
	if l.prepTotal > 0 {
		prep := float64(l.prepDone)
		if s.Phase == PhaseWarmup {
			prep += stageFraction(s) * float64(s.LevelTotal)
		}
		done += min(prep, float64(l.prepTotal)) // a warmup marked done still shows as the stage
	}
	return min(done/total, 1)
}

// LevelWaves weighs each level of a Kovara plan for ExpectStages: its
// requests in waves of its users, or of slots where the server serves no
// more at once (slots > 0), as EstimatePlan counts a plan's length.
func LevelWaves(p setup.KovaraPlan, slots int) []float64 {
	w := make([]float64, len(p.Concurrency))
	for i, c := range p.Concurrency {
		users := max(c, 1)
		if slots > 0 {
			users = min(users, slots)
		}
		w[i] = float64((p.Requests + users - 1) / users)
	}
	return w
}

// ExpectStages says how long each of the plan's measured stages is
// expected to take against the others (weights, in stage order, in any
// one unit; the plan's calibration and warmup count a unit a request).
// The whole plan's share done, and the time left told from how fast it
// grows, are then of that time, not of the requests: a Kovara plan of
// 100 requests at 1, 8 and 32 users spends nearly all its time at 1 user,
// and counted in requests its first level was a third of it — "whole
// plan about 4 min" for a plan that took 2 min 20 s. Call it before the
// run starts; weights that do not match the plan's stages are left
// unused.
func (l *Live) ExpectStages(weights []float64) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.weights = weights
	l.mu.Unlock()
}

// inGroup is a run's progress as the repeated group's: the runs before
// it done, then its own share. Call with mu.
func (l *Live) inGroup(f float64) float64 {
	if l.runs <= 1 || l.runIndex < 1 {
		return f
	}
	return min((float64(l.runIndex-1)+f)/float64(l.runs), 1)
}

// SetRepeat says the run about to start is run index of runs in a
// repeated group, so the whole plan's progress and time left are the
// group's. Until it starts, the last run's end is not counted as its
// own (the bar once read 100 % in run 2 of 2).
func (l *Live) SetRepeat(index, runs int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.runIndex, l.runs, l.announced = index, runs, true
	l.mu.Unlock()
}

// expectPrep counts n requests of the plan's preparation (calibration and
// warmup) in its work, for prepared to mark done.
func (l *Live) expectPrep(n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.prepTotal = n
	l.mu.Unlock()
}

// prepared marks n of the preparation's requests done.
func (l *Live) prepared(n int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.prepDone += n
	l.mu.Unlock()
}

// planWindow is about how far back the whole plan's rate looks: long
// enough to span a slow server's requests, short enough to forget a
// model load before the warmup.
const planWindow = time.Minute

// planLeft extrapolates the whole plan's progress f at at from its rate
// since the newest earlier reading at least planWindow old (or the
// oldest), among those where it was lower than now: while nothing moves
// the rate falls and the time left grows, never stands. 0 while it
// cannot say. Call with mu.
func (l *Live) planLeft(at time.Duration, f float64) time.Duration {
	h := l.planHist
	if n := len(h); n > 0 && at < h[n-1].at {
		h = h[:0] // a new run's clock
	}
	if n := len(h); n == 0 || f > h[n-1].f {
		h = append(h, planPoint{at: at, f: f})
	}
	from := -1
	for i, p := range h {
		if p.f < f && (i == 0 || p.at <= at-planWindow) {
			from = i
		}
	}
	if from > 0 {
		h = h[from:]
		from = 0
	}
	l.planHist = h
	if from < 0 || f >= 1 || at <= h[0].at {
		return 0
	}
	rate := (f - h[0].f) / (at - h[0].at).Seconds()
	return time.Duration((1 - f) / rate * float64(time.Second))
}

// atLeastStage is the whole plan's time left, never less than the
// stage's own: the stage is part of the plan. They come from different
// rates (the plan's over the last minute, the stage's from its own
// requests), and a slower stage after a fast one once read "this stage
// about 45 s left, whole plan about 40 s left".
func atLeastStage(plan, stage time.Duration) time.Duration {
	if plan > 0 && stage > plan {
		return stage
	}
	return plan
}

// setAlert records what the run's watchdog says now ("" when nothing).
func (l *Live) setAlert(alert string) {
	if l == nil {
		return
	}
	l.smu.Lock()
	l.alert = alert
	l.smu.Unlock()
}

// setForeign records what the /metrics readings say about another
// client on the server now ("" when nothing).
func (l *Live) setForeign(alert string) {
	if l == nil {
		return
	}
	l.smu.Lock()
	l.foreign = alert
	l.smu.Unlock()
}

// joinAlerts puts two things to say now in one line, the watchdog's first.
func joinAlerts(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// stageNow is the current stage: a number that changes with every stage
// begun, its name, and whether it is measured and under way.
func (l *Live) stageNow() (serial int, name string, measured bool) {
	if l == nil {
		return 0, "", false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stage, l.cur.Name, l.cur.Measured && l.phase == PhaseMeasure
}

// stageName is the current stage's name ("level 1"), "" before any.
func (l *Live) stageName() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur.Name
}

// serverUnavailable records why there will be no server readings.
func (l *Live) serverUnavailable(why string) {
	if l == nil {
		return
	}
	l.smu.Lock()
	l.serverNone = why
	l.smu.Unlock()
}

// serverSample records one /metrics reading for the next Snapshot.
func (l *Live) serverSample(family string, smp results.ServerMetricsSample) {
	if l == nil {
		return
	}
	l.smu.Lock()
	l.serverFamily = family
	c := smp
	l.serverLatest = &c
	if len(l.serverNew) < 4096 { // nobody watching: keep a bounded backlog
		l.serverNew = append(l.serverNew, smp)
	}
	l.smu.Unlock()
}

// Describe says in words where the run is, the same in the app's live
// view and the CLI's progress line: the stage in its plan's words with
// its finished requests (Line), and the estimated time left in it.
func (s Snapshot) Describe() string {
	line := s.Line
	if line == "" {
		line = phaseLine(s.Phase)
	}
	switch {
	case s.Alert != "":
		line += " — " + s.Alert
	case s.Quiet > 0:
		line += " — no token for " + wholeSeconds(s.Quiet) + "…"
	case s.PlanLeft > 0 && (s.Levels > 1 || s.Runs > 1) && s.Left > 0:
		// Both, each labelled as the live view's bars are: a stage's
		// end is not the plan's.
		line += " — this stage " + FormatLeft(s.Left) + ", whole plan " + FormatLeft(s.PlanLeft)
	case s.PlanLeft > 0 && (s.Levels > 1 || s.Runs > 1):
		line += " — whole plan " + FormatLeft(s.PlanLeft)
	case s.Left > 0:
		line += " — " + FormatLeft(s.Left)
	}
	return line
}

// promptsLine is how far a prompts file has been read: "Reading your
// prompts file: 412 of 2,048 MB…".
func promptsLine(read, size int64) string {
	const mb = 1_000_000
	if size < mb {
		return phaseLine(PhasePrompts)
	}
	return fmt.Sprintf("Reading your prompts file: %s of %s MB…", results.Thousands(int(read/mb)), results.Thousands(int(size/mb)))
}

// phaseLine is a phase in words, between stages: "Probing…".
func phaseLine(p Phase) string {
	if p == "" {
		return "Starting…"
	}
	return strings.ToUpper(string(p[:1])) + string(p[1:]) + "…"
}

// FormatLeft says an estimated time left: "about 40 s left".
func FormatLeft(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return "a few seconds left"
	case d < 90*time.Second:
		return fmt.Sprintf("about %d s left", int(d.Round(5*time.Second)/time.Second))
	case d < 90*time.Minute:
		return fmt.Sprintf("about %d min left", int(d.Round(time.Minute)/time.Minute))
	}
	h := int(d / time.Hour)
	m := int((d - time.Duration(h)*time.Hour).Round(time.Minute) / time.Minute)
	return fmt.Sprintf("about %d h %d min left", h, m)
}
