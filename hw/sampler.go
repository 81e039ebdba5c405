package hw

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/telemetry"
)

// hangIntervals is how many intervals without a line (or without a good
// exporter fetch) count as a hung sampler.
const hangIntervals = 5

// maxBadRun is how many unreadable lines in a row stop the sampler.
const maxBadRun = 5

// maxSamples bounds memory: 8 GPUs at 1 s for 17 hours. Later readings
// still update Latest but are not kept.
const maxSamples = 500_000

// Sampler collects readings from one source until Stop or until its
// context is cancelled. All methods are safe for concurrent use.
type Sampler struct {
	start    time.Time // what sample offsets count from (monotonic)
	interval time.Duration
	gpus     []int
	what     string // "nvidia-smi on lab-box", for sentences
	// parse reads one line of the source's output into zero or more
	// readings (a header gives none); nil means nvidia-smi's query line.
	// Only the goroutine that copies the child's output calls it.
	parse func(line string) ([]Sample, error)

	cancel context.CancelFunc
	done   chan struct{}
	wg     sync.WaitGroup // helpers that must end before done closes

	mu        sync.Mutex
	samples   []Sample
	warnings  []string
	ended     bool // no more readings or warnings are taken
	failed    bool
	lastData  time.Time
	gotData   bool
	problem   string // the exporter's last failed fetch, in words
	badLines  int
	badRun    int
	firstBad  string
	capped    bool
	tickOpen  bool
	tickT     time.Duration
	tickSeen  []int    // every GPU index seen in the open tick
	tick      []Sample // the open tick's chosen GPUs
	published bool
	widest    int // most chosen GPUs seen in one tick
	latest    Point
	hasLatest bool

	// The server machine's memory readings (hostmem.go) and the programs
	// on its cards (gpuprocs.go); beforeStop, when set, runs once at Stop
	// while sampling still goes on (the end-of-run process list).
	host       []hostReading
	procs      telemetry.GPUProcesses
	procsRead  bool
	beforeStop func()
}

func newSampler(interval time.Duration, gpus []int, what string, cancel context.CancelFunc) *Sampler {
	now := time.Now()
	return &Sampler{
		start: now, interval: interval, gpus: gpus, what: what,
		cancel: cancel, done: make(chan struct{}), lastData: now,
	}
}

// Interval is the sampling interval.
func (s *Sampler) Interval() time.Duration { return s.interval }

// Offset turns a moment (from time.Now) into an offset comparable with
// Sample.T, for marking level windows.
func (s *Sampler) Offset(t time.Time) time.Duration { return t.Sub(s.start) }

// Samples returns a copy of every reading so far, in arrival order.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// Latest is the most recent tick summed over the chosen GPUs, for live
// charts. ok is false until the first reading.
func (s *Sampler) Latest() (p Point, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest, s.hasLatest
}

// Warnings returns what went wrong, one sentence each, in order.
func (s *Sampler) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.warnings)
}

// Done is closed once sampling has ended for good — after Stop, after the
// context was cancelled, or after a failure (see Warnings) — and the child
// process, if any, is gone.
func (s *Sampler) Done() <-chan struct{} { return s.done }

// Stop ends sampling, kills the child process group and waits for it.
// Readings and warnings stay available. Stop may be called more than once.
// An nvidia-smi source first lists the programs on its cards once more
// (gpuprocs.go), which holds Stop up for that command (at most 5 s).
func (s *Sampler) Stop() {
	s.mu.Lock()
	hook, live := s.beforeStop, !s.ended
	s.beforeStop = nil
	s.mu.Unlock()
	if hook != nil && live {
		hook()
	}
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	s.cancel()
	<-s.done
}

// fail records why sampling ended early and stops it. Only the first
// reason counts, and none is recorded after Stop.
func (s *Sampler) fail(reason string) {
	s.mu.Lock()
	if !s.ended {
		s.ended, s.failed = true, true
		s.warnings = append(s.warnings, "GPU telemetry stopped: "+reason)
	}
	s.mu.Unlock()
	s.cancel()
}

// finish runs once the source's process or poller is gone.
func (s *Sampler) finish() {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	s.closeTickLocked()
	if s.badLines > 0 && !s.failed {
		lines := "lines"
		if s.badLines == 1 {
			lines = "line"
		}
		s.warnings = append(s.warnings, fmt.Sprintf("%s printed %d %s we could not read, such as %q; they were skipped", s.what, s.badLines, lines, s.firstBad))
	}
	s.ended = true
	s.mu.Unlock()
	close(s.done)
}

// handleLine takes one line of a tool's output as it arrives.
func (s *Sampler) handleLine(line string) {
	now := time.Now()
	var got []Sample
	var err error
	if s.parse != nil {
		got, err = s.parse(line)
	} else {
		var smp Sample
		if smp, err = parseSampleLine(line); err == nil {
			got = []Sample{smp}
		}
	}
	blank := strings.TrimSpace(line) == ""
	var stop string
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.lastData, s.gotData = now, true
	switch {
	case blank && err == nil:
	case err != nil:
		s.badLines++
		s.badRun++
		if s.firstBad == "" {
			s.firstBad = clip.Line(shownLine(line, err), 160)
		}
		if s.badRun >= maxBadRun {
			stop = fmt.Sprintf("%s printed lines we could not read, such as %q", s.what, s.firstBad)
		}
	default:
		if len(got) > 0 {
			s.badRun = 0
		}
		for _, smp := range got {
			s.addLineLocked(smp, now.Sub(s.start))
		}
	}
	s.mu.Unlock()
	if stop != "" {
		s.fail(stop)
	}
}

// blockError is a parse failure of several lines at once (one JSON
// document, one pass of a shell loop): shown is what a warning quotes.
type blockError struct {
	shown string
	err   error
}

func (e *blockError) Error() string { return e.err.Error() }
func (e *blockError) Unwrap() error { return e.err }

// shownLine is what a warning quotes of an unreadable line.
func shownLine(line string, err error) string {
	var be *blockError
	if errors.As(err, &be) {
		return be.shown
	}
	return line
}

// lineTooLong is called when nvidia-smi prints a line far longer than ours.
func (s *Sampler) lineTooLong() {
	s.fail(s.what + " printed a line far longer than a GPU reading")
}

// firstBadLine is the first unreadable line, which is where nvidia-smi
// explains its own failures.
func (s *Sampler) firstBadLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstBad
}

// addLineLocked places one GPU's line in a tick: nvidia-smi prints one line
// per GPU per loop, so a GPU seen again, or a line more than half an
// interval after the tick began, starts a new tick.
func (s *Sampler) addLineLocked(smp Sample, t time.Duration) {
	if !s.tickOpen || slices.Contains(s.tickSeen, smp.GPU) || t-s.tickT > s.interval/2 {
		s.closeTickLocked()
		s.tickOpen, s.tickT, s.published = true, t, false
		s.tickSeen, s.tick = s.tickSeen[:0], s.tick[:0]
	}
	s.tickSeen = append(s.tickSeen, smp.GPU)
	if !selected(s.gpus, smp.GPU) {
		return
	}
	smp.T = s.tickT
	s.keepLocked(smp)
	s.tick = append(s.tick, smp)
	if len(s.tick) >= s.widest {
		s.widest = len(s.tick)
		s.publishLocked()
	}
}

// addTick takes one exporter fetch: every GPU at one moment.
func (s *Sampler) addTick(at time.Time, readings []Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.lastData, s.gotData, s.problem = at, true, ""
	s.closeTickLocked()
	t := at.Sub(s.start)
	s.tickOpen, s.tickT, s.tick = true, t, s.tick[:0]
	for _, r := range readings {
		if !selected(s.gpus, r.GPU) {
			continue
		}
		r.T = t
		s.keepLocked(r)
		s.tick = append(s.tick, r)
	}
	s.publishLocked()
	s.tickOpen = false
}

// noteProblem remembers why the last exporter fetch failed.
func (s *Sampler) noteProblem(p string) {
	s.mu.Lock()
	s.problem = p
	s.mu.Unlock()
}

func (s *Sampler) keepLocked(smp Sample) {
	if len(s.samples) >= maxSamples {
		if !s.capped {
			s.capped = true
			s.warnings = append(s.warnings, fmt.Sprintf("GPU telemetry kept its first %d readings and dropped later ones", maxSamples))
		}
		return
	}
	s.samples = append(s.samples, smp)
}

func (s *Sampler) closeTickLocked() {
	if s.tickOpen && !s.published && len(s.tick) > 0 {
		s.publishLocked()
	}
	s.tickOpen = false
}

func (s *Sampler) publishLocked() {
	if len(s.tick) == 0 {
		return
	}
	s.latest, s.hasLatest, s.published = pointOf(s.tickT, s.tick), true, true
}

// watch stops the sampler when no data has come for hangIntervals
// intervals (first: before the very first data, which may need an SSH
// handshake).
func (s *Sampler) watch(ctx context.Context, limit, first time.Duration, stalled func(waited time.Duration, started bool, problem string) string) {
	defer s.wg.Done()
	step := min(max(s.interval/2, 10*time.Millisecond), time.Second)
	tk := time.NewTicker(step)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tk.C:
			s.mu.Lock()
			last, got, problem := s.lastData, s.gotData, s.problem
			s.mu.Unlock()
			lim := limit
			if !got {
				lim = first
			}
			if now.Sub(last) > lim {
				s.fail(stalled(lim, got, problem))
				return
			}
		}
	}
}

// Point is one tick summed over the chosen GPUs. A nil field was missing:
// power and memory are nil unless every GPU of the tick had them.
type Point struct {
	T          time.Duration `json:"-"`
	GPUs       int           `json:"gpus"`         // GPUs in the tick
	PowerW     *float64      `json:"power_w"`      // sum
	UtilPct    *float64      `json:"util_pct"`     // mean over GPUs that had it
	MemUsedMiB *float64      `json:"mem_used_mib"` // sum
	TempC      *float64      `json:"temp_c"`       // hottest
	SMClockMHz *float64      `json:"sm_clock_mhz"` // mean
}

// pointOf sums one tick's samples.
func pointOf(t time.Duration, tick []Sample) Point {
	p := Point{T: t, GPUs: len(tick)}
	var power, mem, util, clock, temp float64
	var nPower, nMem, nUtil, nClock, nTemp int
	for _, s := range tick {
		if s.Has(FieldPower) {
			power += s.PowerW
			nPower++
		}
		if s.Has(FieldMemUsed) {
			mem += s.MemUsedMiB
			nMem++
		}
		if s.Has(FieldUtil) {
			util += s.UtilPct
			nUtil++
		}
		if s.Has(FieldSMClock) {
			clock += s.SMClockMHz
			nClock++
		}
		if s.Has(FieldTemp) && (nTemp == 0 || s.TempC > temp) {
			temp = s.TempC
			nTemp++
		}
	}
	if nPower == len(tick) && nPower > 0 {
		p.PowerW = &power
	}
	if nMem == len(tick) && nMem > 0 {
		p.MemUsedMiB = &mem
	}
	if nUtil > 0 {
		u := util / float64(nUtil)
		p.UtilPct = &u
	}
	if nClock > 0 {
		c := clock / float64(nClock)
		p.SMClockMHz = &c
	}
	if nTemp > 0 {
		p.TempC = &temp
	}
	return p
}
