package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// A server that dies in the middle of a run (killed, crashed, out of
// memory) was hammered to the end of the plan: every request after it an
// instant connection error, saved as a level of 0 of 200. So every loop
// has a watchdog. Two things make it ask the server's model list, on a
// connection of its own: a request that failed to reach the server or
// broke off, and no byte from any stream for the endpoint's silence
// while requests are in flight. A model list refused or broken means the
// server is gone; one that times out twice in a row while every stream
// is silent means the same (a dying process can hold its socket open).
// Then the run ends the way Stop ends it — finished levels kept, the
// level in progress partial — and says why. A model list that answers
// only says the silence (a very long prompt may be being read).

// DefaultSilence is how long requests in flight may go without a byte
// from the server before the run asks whether it is still there.
const DefaultSilence = 10 * time.Second

const (
	watchEvery     = 500 * time.Millisecond
	askEvery       = 2 * time.Second         // at most one model-list read this often
	askTimeout     = 2500 * time.Millisecond // or the silence, when shorter: 10 s + 2 × 2.5 s ends a frozen server's run 15 s after its last byte
	silentTimeouts = 2                       // model-list reads timed out in a row that make a silent server gone
)

// ServerGoneError is a run that ended because the server stopped
// answering. It wraps the run's ErrInterrupted error: what was measured
// is kept and returned, as after Stop.
type ServerGoneError struct {
	Why string // the sentence every surface shows
	Err error
}

func (e *ServerGoneError) Error() string { return e.Why }
func (e *ServerGoneError) Unwrap() error { return e.Err }

// serverGone is what the watchdog found.
type serverGone struct {
	stage string        // the stage it happened in ("level 1"), as the live view names it
	into  time.Duration // the server's last byte, from the stage's start
	why   string        // what the model list said, in words
}

// sentence says it for a person: "the server stopped answering 15 s
// into level 1 (nothing is listening on … any more); the run ended
// there, …". What was kept is the document's to say.
func (g *serverGone) sentence() string {
	where := ""
	if g.stage != "" {
		where = fmt.Sprintf(" %s into %s", wholeSeconds(g.into), g.stage)
	}
	return fmt.Sprintf("the server stopped answering%s (%s); the run ended there, and no request after it is counted", where, g.why)
}

// bind gives the run's context: cancelled by the watchdog when the server
// is gone. done, deferred with the run's error, ends it and turns an
// interrupted run's error into a *ServerGoneError when that was why.
func (s *session) bind(ctx context.Context) (context.Context, func(*error)) {
	ctx, cancel := context.WithCancel(ctx)
	s.endRun = cancel
	return ctx, func(err *error) {
		cancel()
		if g := s.gone.Load(); g != nil && *err != nil && errors.Is(*err, ErrInterrupted) {
			*err = &ServerGoneError{Why: g.sentence(), Err: *err}
		}
	}
}

// goneNote is the sentence for a document's warnings once the server is
// gone, or "".
func (s *session) goneNote() string {
	if g := s.gone.Load(); g != nil {
		return g.sentence()
	}
	return ""
}

// watchdog watches one loop over a slot set.
type watchdog struct {
	ss      *slotSet
	start   time.Duration // the loop's release
	silence time.Duration // <0: say the silence, never end the run
	stop    func()        // ends the loop and the run
	client  *http.Client
	wait    time.Duration // how long a model-list read may take

	mu      sync.Mutex    // one look at a time; never taken but after a failure or by the ticker
	askedAt time.Duration // when the model list was last asked (-1: never)
	// answeredAt is when the last ask that was answered began (-1: none).
	answeredAt time.Duration
	timeouts   int // model-list reads timed out in a row
	alerted    bool
}

func (s *slotSet) newWatchdog(start time.Duration, stop func()) *watchdog {
	sil := s.s.ep.Silence
	if sil == 0 {
		sil = DefaultSilence
	}
	return &watchdog{ss: s, start: start, silence: sil, stop: stop, wait: min(askTimeout, abs(sil)), askedAt: -1, answeredAt: -1}
}

// outcome is called by a slot after each request. After a connection
// failure the slot asks the server before it sends anything more (one
// ask shared by every slot that failed meanwhile): a killed server
// refuses instantly, and without this the slots had burnt through the
// rest of the level, 36 requests in 5 ms, before any look. ctx is the
// loop's.
func (w *watchdog) outcome(ctx context.Context, o *outcome) {
	if o.class != ClassConnection || ctx.Err() != nil {
		return
	}
	w.look(ctx, o.end, o.chunks > 0)
}

// run looks every watchEvery until ctx ends (the loop's end), for
// streams that have gone silent.
func (w *watchdog) run(ctx context.Context) {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	defer func() {
		w.mu.Lock()
		w.say("")
		w.ss.s.obs.Live.setInFlight(0) // the loop is over
		w.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.look(ctx, -1, false)
	}
}

// look asks the server's model list when a request failed at failedAt
// (-1: none) or the streams are silent, and decides: the server answers,
// may have stopped, or is gone (the loop and the run end). A stream that
// broke midway (midStream) soon after the server last answered is taken
// as that answer says; a request that reached nothing always asks.
func (w *watchdog) look(ctx context.Context, failedAt time.Duration, midStream bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.ss.s
	if ctx.Err() != nil || s.gone.Load() != nil {
		return
	}
	now := s.clock()
	heard, inFlight := w.heard()
	s.obs.Live.setInFlight(inFlight) // the live view's silence (Snapshot.Quiet)
	quiet := now - heard
	silent := inFlight > 0 && quiet >= abs(w.silence)
	switch {
	case failedAt >= 0 && w.askedAt > failedAt:
		return // asked since this failure: it was answered
	case midStream && w.answeredAt >= 0 && failedAt-w.answeredAt < askEvery:
		return
	case failedAt < 0 && !silent:
		w.timeouts = 0
		w.say("")
		return
	case failedAt < 0 && w.askedAt >= 0 && now-w.askedAt < askEvery:
		return
	}
	w.askedAt = s.clock()
	why, timedOut := w.ask(ctx)
	if ctx.Err() != nil {
		return
	}
	switch {
	case why == "":
		w.timeouts, w.answeredAt = 0, w.askedAt
		if silent {
			w.say(fmt.Sprintf("no tokens for %s, though the server still answers: it may be reading a very long prompt, or stuck", wholeSeconds(quiet)))
		}
		return
	case timedOut:
		w.timeouts++
		if !silent || w.timeouts < silentTimeouts {
			w.say(fmt.Sprintf("no tokens for %s — the server may have stopped: %s", wholeSeconds(quiet), why))
			return
		}
	}
	if w.silence < 0 {
		w.say(fmt.Sprintf("the server is not answering (%s); the run goes on, as asked", why))
		return
	}
	g := &serverGone{stage: s.obs.Live.stageName(), into: max(heard-w.start, 0), why: why}
	s.gone.CompareAndSwap(nil, g) // the loop puts it among the warnings, which are logged
	w.say("the server stopped answering: " + why)
	w.stop()
}

// heard is the last time any slot heard from the server (the loop's
// release when none has yet) and how many requests are in flight.
func (w *watchdog) heard() (time.Duration, int) {
	last, n := w.start, 0
	for _, c := range w.ss.conns {
		last = max(last, time.Duration(c.heard.Load()))
		if c.busy.Load() {
			n++
		}
	}
	return last, n
}

// ask reads the model list on a connection of its own: "" when it
// answered, else why not in words, and whether it was a timeout.
func (w *watchdog) ask(ctx context.Context) (string, bool) {
	s := w.ss.s
	if w.client == nil {
		w.client = metricsClient(s.ep, s.base)
		w.client.Timeout = w.wait
	}
	actx, cancel := context.WithTimeout(ctx, w.wait)
	defer cancel()
	_, _, err := listModels(actx, w.client, s.ep, s.base)
	if err == nil {
		return "", false
	}
	var ee *EndpointError
	if errors.As(err, &ee) {
		switch ee.Kind {
		case ErrTimeout:
			return fmt.Sprintf("it did not answer its model list in %s", wholeSeconds(w.wait)), true
		case ErrUnreachable:
			// No address: the sentence goes into results a person may
			// paste somewhere (the run keeps the endpoint apart).
			return "nothing is listening on its port any more", false
		}
	}
	return "its model list failed: " + rootCause(err), false
}

// say sets the live view's alert; "" clears the one this watchdog set.
func (w *watchdog) say(alert string) {
	if alert == "" && !w.alerted {
		return
	}
	w.alerted = alert != ""
	w.ss.s.obs.Live.setAlert(alert)
}

// settle, after the loop, leaves out of the record every request that
// broke on a server already gone: they measure nothing about it. A
// connection failure counts only when the server answered a request
// after it (it was a failure of a server still there). The cut is the
// last answer's end, not the last byte heard: a dying server's streams
// break one by one, and one slot read a byte after another's broke (CI,
// a CPU hog: four failures counted).
func (w *watchdog) settle(res []slotRun) {
	if w.ss.s.gone.Load() == nil {
		return
	}
	last := time.Duration(-1)
	for si := range res {
		for _, o := range res[si].outs {
			if !o.interrupted && o.class != ClassConnection && o.class != ClassTimeout {
				last = max(last, o.end)
			}
		}
	}
	for si := range res {
		for i := range res[si].outs {
			if o := &res[si].outs[i]; o.class == ClassConnection && o.end > last {
				o.interrupted = true
			}
		}
	}
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// wholeSeconds says a duration in seconds: "12 s", "2.5 s" below 10 s.
func wholeSeconds(d time.Duration) string {
	if d < 10*time.Second && d%time.Second != 0 {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
}
