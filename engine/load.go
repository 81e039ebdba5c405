package engine

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The one request loop of every plan: a set of slots, each with its own
// connection, and loops run over them, paced by a Pacer (closed loop
// unless a plan gives another). The Kovara levels and their warmup, the
// three-stage plan's many users, the speculative-decoding levels and the
// context plan's rounds all go through it, so what it does about opening
// bursts and closed connections holds for each of them.

// Pacer says when a loop sends each of its requests. Request k is the
// loop's k-th, in the order its slots take them (from 0); a slot takes its
// next request as soon as its last one has ended, then waits until Due
// says, an offset from the loop's release, and sends it. ok false ends the
// slot's loop before request k. Slots call Due concurrently.
type Pacer interface {
	Due(k int) (at time.Duration, ok bool)
}

// loopBound is a Pacer whose Due may wait for more than the clock: it is
// given the loop's context before the loop starts, and gives up when it
// ends.
type loopBound interface {
	bind(ctx context.Context)
}

// ClosedLoop is the loop's pacer unless a plan gives another: every
// request is due at once, so each slot sends its next request the moment
// its last one ends.
var ClosedLoop Pacer = closedLoop{}

type closedLoop struct{}

func (closedLoop) Due(int) (time.Duration, bool) { return 0, true }

// ConstantRate is an open-loop pacer: requests at a steady rate, this
// many a second from the loop's release, request k due at k / rate
// whichever slot takes it. A slot still has one request in flight at a
// time, so with too few slots requests leave late (each outcome keeps
// when it was due). A rate of 0 or less sends nothing.
type ConstantRate float64

// Due is request k's time: k / rate after the release.
func (r ConstantRate) Due(k int) (time.Duration, bool) {
	if !(r > 0) {
		return 0, false
	}
	at := float64(k) / float64(r) * float64(time.Second)
	if at >= math.MaxInt64 {
		return 0, false // later than any run lasts
	}
	return time.Duration(at), true
}

// slotSet is a stage's slots: one connection each, opened ahead of the
// stage when asked, reused by every loop run over the set.
type slotSet struct {
	s          *session
	conns      []*conn
	openFailed int // connections that could not be opened ahead
}

// openSlots makes one slot per live slot. With preopen each connection is
// opened (and warmed with one GET) before the stage, so connection setup is
// not inside the first measured request; a connection that cannot be
// opened early connects on its first request, and openFailed says how many
// did.
func (ss *session) openSlots(ctx context.Context, live []*liveSlot, preopen bool) *slotSet {
	s := &slotSet{s: ss, conns: make([]*conn, len(live))}
	for i := range s.conns {
		s.conns[i] = ss.newConn()
		s.conns[i].live = live[i]
	}
	if !preopen {
		return s
	}
	octx, cancel := context.WithTimeout(ctx, checkTimeout(ss.ep))
	defer cancel()
	var failed, open atomic.Int64
	restore := ss.obs.Live.opening(len(s.conns), &open)
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Go(func() {
			if c.preopen(octx) != nil {
				failed.Add(1)
			} else {
				open.Add(1)
			}
		})
	}
	wg.Wait()
	restore()
	s.openFailed = int(failed.Load())
	s.connectEach()
	return s
}

// connectEach switches the slots to a connection of their own for every
// request when the server closed some connections opened ahead while
// others waited to be taken: it cannot keep one open for every slot.
// llama-server answers HTTP from -np + 2 threads, and an idle kept-alive
// connection holds its thread until its 5 s keep-alive ends; with more
// users than threads the connections opened ahead held them all, so the
// level's first requests waited those 5 s, and the wait fell inside the
// level (llama-server -np 2 at 8 users: no request sent for the level's
// first 5.0 s, half its throughput). A request that connects as it is
// sent waits for a thread inside its time to first token, as a client
// without kept-alive connections does; ConnectionNote says so.
func (s *slotSet) connectEach() {
	if len(s.conns) < 2 {
		return
	}
	closed := 0
	for _, c := range s.conns {
		if sc := c.sock.Load(); sc != nil && sc.Gone() {
			closed++
		}
	}
	if closed == 0 {
		return
	}
	for _, c := range s.conns {
		c.connectEach = true
	}
}

// setLive points the slots' progress at live (nil: a loop that is not
// progress, such as a warmup).
func (s *slotSet) setLive(live []*liveSlot) {
	for i, c := range s.conns {
		c.live = nil
		if live != nil {
			c.live = live[i]
		}
	}
}

func (s *slotSet) close() {
	for _, c := range s.conns {
		c.close()
	}
}

// loadSpec is one loop over a slot set.
type loadSpec struct {
	total int // requests in all; with oneEach, one per slot
	// oneEach makes every slot send exactly one request, request k on
	// slot k: a round of users that start together.
	oneEach bool
	timeout time.Duration
	// request gives request k's options and number. Slots call it
	// concurrently.
	request func(k int) (requestOpts, int64)
	// pace says when each request is sent; nil is ClosedLoop.
	pace Pacer
	// shape gives each request its workload on its slot (workload.go);
	// nil: the request as given.
	shape *shaper
	// ended, when set, is told of request k's outcome and its answer's
	// text (the body of a JSON string; valid only during the call) as
	// soon as they are known, from its slot's goroutine (a trace's
	// replay sends a conversation's next turn after it, with that
	// answer in its history: replay.go).
	ended func(k int, o *outcome, answer []byte)
}

// slotRun is what one slot did during a loop.
type slotRun struct {
	outs []outcome
	itl  []float32
	// tried is, beside each outcome of a paced loop, when the slot handed
	// it to its connection: what came before is the client's, what came
	// after until it left is connecting (rate.go).
	tried []time.Duration
}

// loadRun is what a loop did: each slot's outcomes, when the slots
// were released and when the last request ended (offsets from the run's
// start), and what the slots did about closed connections.
type loadRun struct {
	slots      []slotRun
	start, end time.Duration
	conns      connStats
}

// run starts every slot together; a slot takes its next request the
// moment its previous one ends and sends it when the pacer says (at once
// in a closed loop), until the requests are used up, the pacer ends the
// loop or ctx is done.
func (s *slotSet) run(ctx context.Context, spec loadSpec) loadRun {
	total := spec.total
	if spec.oneEach {
		total = len(s.conns)
	}
	// The opening burst makes every slot runnable at once, and while Go's
	// scheduler has runnable goroutines on every P it looks at the network
	// only every 10 ms: a stream whose first chunk came back early in the
	// burst was read a whole token late, merged with the next one in the
	// kernel and its arrival lost (selftest at 256 streams, 2 cores). So
	// the first requests go through a gate that lets one slot fewer than
	// there are Ps build and write at a time, leaving a P to read. The
	// requests still leave as fast as this machine can send them, and each
	// one's start is its own socket's stamp.
	sends := newSendGate(runtime.GOMAXPROCS(0) - 1)
	var next atomic.Int64
	res := make([]slotRun, len(s.conns))
	var start time.Duration // the release; set before gate opens
	gate := make(chan struct{})
	// The loop's own context: the watchdog ends it, and the run with it,
	// when the server is gone (watchdog.go).
	ctx, endLoop := context.WithCancel(ctx)
	defer endLoop()
	if b, ok := spec.pace.(loopBound); ok {
		// A pacer that waits (a replay's turn for the one before it)
		// waits on the loop itself, which the watchdog may end alone.
		b.bind(ctx)
	}
	var wd *watchdog
	var wg sync.WaitGroup
	for i, c := range s.conns {
		c.stats = connStats{}
		wg.Go(func() {
			<-gate
			sr := &res[i]
			c.gate, c.loopGate = sends, sends
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if spec.oneEach {
					if len(sr.outs) > 0 {
						break
					}
					k = i
				}
				if k >= total {
					break
				}
				var due time.Duration
				if spec.pace != nil {
					at, ok := spec.pace.Due(k)
					if !ok {
						break
					}
					if due = start + at; !sleepPrecise(ctx, s.s.clock, due) {
						break
					}
				}
				opts, n := spec.request(k)
				turn := 0
				if spec.shape != nil {
					turn = spec.shape.before(i, &opts, n)
				}
				c.busy.Store(true)
				if spec.pace != nil {
					sr.tried = append(sr.tried, s.s.clock())
				}
				o := c.do(ctx, opts, n, spec.timeout)
				c.busy.Store(false)
				o.due, o.turn = due, turn
				if spec.shape != nil {
					spec.shape.after(i, opts, &o, n, c.answer)
				}
				wd.outcome(ctx, &o)
				if spec.ended != nil {
					spec.ended(k, &o, c.answer)
				}
				c.gate = nil
				sr.outs = append(sr.outs, o)
				if c.live != nil {
					c.live.finish(&o, c.itl[o.itlFrom:o.itlTo])
				}
			}
			c.gate, c.loopGate = nil, nil
			sr.itl = c.itl
		})
	}
	start = s.s.clock()
	lr := loadRun{slots: res, start: start}
	wd = s.newWatchdog(start, func() {
		endLoop()
		if s.s.endRun != nil {
			s.s.endRun()
		}
	})
	wctx, endWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		wd.run(wctx)
	}()
	close(gate)
	wg.Wait()
	endWatch()
	<-watched
	wd.settle(res)
	if note := s.s.goneNote(); note != "" && !s.s.goneSaid {
		s.s.goneSaid = true
		s.s.warn("%s", note)
	}
	lr.end = lr.start
	for _, sr := range res {
		for i := range sr.outs {
			if o := &sr.outs[i]; !o.interrupted && o.end > lr.end {
				lr.end = o.end
			}
		}
	}
	for _, c := range s.conns {
		lr.conns.add(c.stats)
	}
	return lr
}

// outcomes lists the loop's outcomes slot by slot.
func (l *loadRun) outcomes() []*outcome {
	var out []*outcome
	for si := range l.slots {
		for i := range l.slots[si].outs {
			out = append(out, &l.slots[si].outs[i])
		}
	}
	return out
}
