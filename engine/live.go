package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/hw"
)

// Phase names the stage a run is in.
type Phase string

const (
	PhaseCheck     Phase = "checking endpoint"
	PhaseProbe     Phase = "probing"
	PhaseCalibrate Phase = "calibrating"
	PhaseWarmup    Phase = "warmup"
	PhaseLevel     Phase = "level"
	PhaseDone      Phase = "done"
	PhaseStopped   Phase = "stopped"
)

// Phases of the plans beyond the Kovara method.
const (
	PhaseDecode  Phase = "single-user decode"
	PhasePrefill Phase = "cold prefill"
	PhaseUsers   Phase = "many users"
	PhaseSpecDec Phase = "speculative decoding"
)

// liveBufferCap bounds what one slot keeps between two snapshots, so a run
// nobody watches does not grow without limit.
const liveBufferCap = 1 << 18

// Live is the run's progress as seen from outside: the engine writes it
// without waiting on anyone (atomics per chunk, one small per-slot lock per
// finished request) and a single reader polls Snapshot at its own cadence.
type Live struct {
	mu                         sync.Mutex // guards the fields below; never taken per chunk
	clock                      func() time.Duration
	phase                      Phase
	level, levels, concurrency int
	levelTotal, overallTotal   int
	doneBefore                 int // requests of finished levels
	levelStart                 time.Duration
	slots                      []*liveSlot
	lastError                  string
	lastErrorAt                time.Duration
	stage, seenStage           int // bumped per warmup or level; NewLevel compares
	capacity                   *CapacityProgress

	// The server's own gauges from /metrics, written by the scraper
	// about once a second under their own lock.
	smu          sync.Mutex
	serverFamily string
	serverLatest *results.ServerMetricsSample
	serverNew    []results.ServerMetricsSample

	gpu func() (hw.Point, bool) // the GPU sampler's newest reading; nil without one
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
	At           time.Duration // since the run started
	Phase        Phase
	Level        int // 1-based index of the current level, 0 before levels
	Levels       int
	Concurrency  int
	LevelDone    int
	LevelTotal   int
	OverallDone  int
	OverallTotal int
	OK           int
	Errors       int
	Timeouts     int
	Tokens       int64 // text chunks received in the current level
	LevelElapsed time.Duration
	LastError    string
	TTFT         []float64 // ms, requests finished since the previous Snapshot
	ITL          []float32 // ms, gaps of those requests; exactly 0 where two chunks came off the socket in one read
	NewLevel     bool      // warmup or a new level began since the previous Snapshot
	// Capacity is the capacity plan's search so far; nil for other plans.
	Capacity *CapacityProgress

	// The server's own view from its /metrics, when it answers (see
	// servermetrics.go): the engine whose names were read, the latest
	// reading, and the readings since the previous Snapshot (T is
	// seconds since the run started, like At). All empty without
	// /metrics.
	// GPU is the newest GPU reading (total power, mean utilisation), when
	// the endpoint has a GPU source.
	GPU *hw.Point

	ServerFamily string
	Server       *results.ServerMetricsSample
	ServerNew    []results.ServerMetricsSample
}

// NewLive makes an empty live view.
func NewLive() *Live { return &Live{} }

func (l *Live) start(clock func() time.Duration, levels, overall int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.clock, l.levels, l.overallTotal = clock, levels, overall
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

// setCapacity records where the capacity search is.
func (l *Live) setCapacity(p CapacityProgress) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.capacity = &p
	l.mu.Unlock()
}

// beginStage installs fresh slots for warmup or a level.
func (l *Live) beginStage(p Phase, level, concurrency, total int) []*liveSlot {
	slots := make([]*liveSlot, concurrency)
	for i := range slots {
		slots[i] = &liveSlot{}
	}
	if l == nil {
		return slots
	}
	l.mu.Lock()
	l.phase, l.level, l.concurrency, l.levelTotal = p, level, concurrency, total
	l.slots = slots
	l.stage++
	if l.clock != nil {
		l.levelStart = l.clock()
	}
	l.mu.Unlock()
	return slots
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
		Phase: l.phase, Level: l.level, Levels: l.levels, Concurrency: l.concurrency,
		LevelTotal: l.levelTotal, OverallTotal: l.overallTotal,
	}
	if l.clock != nil {
		s.At = l.clock()
		s.LevelElapsed = s.At - l.levelStart
	}
	for _, sl := range l.slots {
		s.Tokens += sl.tokens.Load()
		s.LevelDone += int(sl.done.Load())
		s.OK += int(sl.ok.Load())
		s.Errors += int(sl.errs.Load())
		s.Timeouts += int(sl.timeouts.Load())
		sl.mu.Lock()
		s.TTFT = append(s.TTFT, sl.ttft...)
		s.ITL = append(s.ITL, sl.itl...)
		sl.ttft, sl.itl = sl.ttft[:0], sl.itl[:0]
		if sl.lastErr != "" && sl.lastErrAt >= l.lastErrorAt {
			l.lastError, l.lastErrorAt = sl.lastErr, sl.lastErrAt
		}
		sl.mu.Unlock()
	}
	s.LastError = l.lastError
	if l.capacity != nil {
		c := *l.capacity
		s.Capacity = &c
	}
	s.NewLevel = l.stage != l.seenStage
	l.smu.Lock()
	s.ServerFamily, s.Server = l.serverFamily, l.serverLatest
	if len(l.serverNew) > 0 {
		s.ServerNew = l.serverNew
		l.serverNew = nil
	}
	l.smu.Unlock()
	l.seenStage = l.stage
	if s.Phase == PhaseLevel {
		s.OverallDone = l.doneBefore + s.LevelDone
	} else {
		s.OverallDone = l.doneBefore
	}
	if l.gpu != nil {
		if p, ok := l.gpu(); ok {
			s.GPU = &p
		}
	}
	return s
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
