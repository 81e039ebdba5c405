package engine

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/kovara/desktop/engine/results"
)

// Another client on the server. A capacity probe of one user once met a
// server with two requests running, and its figures were read as the
// server's own. The server's counters (running and waiting, from
// /metrics) are set against this run's own requests in flight at each
// reading; more on the server than ours is another client's load.
//
// The rule cannot fire on our own traffic's timing:
//   - ours is the most of our requests in flight at any moment from
//     foreignLag readings and foreignLagTime before this one to its answer
//     (a request counts from before it is sent until its answer is read),
//     so a request that ended just before the server's count was taken,
//     or a gauge the server updates a second or two late, is still ours;
//   - a request this run gave up on (a timeout, Stop) may still run on
//     the server until it notices: it stays ours until a reading shows
//     the server holding no more than we had in flight;
//   - only foreignConfirm of the last foreignWindow readings with more on
//     the server than ours make it said: a reading racing a burst of
//     starts and ends never does. Not "in a row": another client that
//     sends a request, reads it, and sends the next (curl in a loop) is
//     between requests at some readings (seen on llama-server b4748).
//
// Once said, it stays said until foreignWindow readings in a row show
// nothing of another client's.
//
// Readings count towards a measured stage only while this run had
// requests in flight, so another client between two levels is said live
// but is no level's problem.

const (
	// foreignConfirm is how many of the last foreignWindow readings (a
	// second apart) must show another client's requests before it is
	// said.
	foreignConfirm = 3
	foreignWindow  = 5
	// foreignLag and foreignLagTime are how far back "ours" reaches,
	// whichever is longer: a gauge that lags by up to that much still
	// finds our requests.
	foreignLag     = 3
	foreignLagTime = 2 * time.Second
)

// flight counts this run's requests in flight. A lock per request start
// and end, never per chunk.
type flight struct {
	mu        sync.Mutex
	now       int
	peak, low int // the most and fewest in flight since the last mark
	abandoned int // requests given up on that the server may still hold
}

func (f *flight) begin() {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.now++
	f.peak = max(f.peak, f.now)
	f.mu.Unlock()
}

// end records a request that ended; gaveUp: this run stopped waiting
// for it (a timeout, Stop), so the server may not have noticed yet.
func (f *flight) end(gaveUp bool) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.now--
	f.low = min(f.low, f.now)
	if gaveUp {
		f.abandoned++
	}
	f.mu.Unlock()
}

// mark ends a window: the most and fewest requests in flight since the
// previous mark, and those given up on; the next window starts with
// those in flight now.
func (f *flight) mark() (peak, low, abandoned int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	peak, low, abandoned = f.peak, f.low, f.abandoned
	f.peak, f.low = f.now, f.now
	return peak, low, abandoned
}

// forget drops n requests given up on: the server no longer holds them.
func (f *flight) forget(n int) {
	f.mu.Lock()
	f.abandoned = max(f.abandoned-n, 0)
	f.mu.Unlock()
}

// foreignWatch sets each server reading against this run's requests in
// flight. The scraper calls reading from its one goroutine, holding its
// lock; records is read under the same lock.
type foreignWatch struct {
	flight *flight
	live   *Live
	peaks  []windowPeak // the windows "ours" reaches over, oldest first
	// recent are the last foreignWindow readings, oldest first.
	recent []foreignReading
	// said: another client is being said live.
	said   bool
	stages []*stageLoad // measured stages with readings, in order
}

type windowPeak struct {
	at   time.Duration
	peak int
}

type foreignReading struct {
	at                   float64
	total, running, ours int
	stage                *stageLoad // nil: outside a measured stage
	// foreign: more on the server than ours; counted: in its stage's
	// record already.
	foreign, counted bool
}

// stageLoad is one measured stage's readings.
type stageLoad struct {
	serial int
	rec    results.ForeignLoad
}

// reading judges one reading taken at at (since the start); running and
// waiting are the server's gauges (nil when it has no such gauge).
func (w *foreignWatch) reading(at time.Duration, running, waiting *float64) {
	if w == nil || w.flight == nil || (running == nil && waiting == nil) {
		return
	}
	peak, low, abandoned := w.flight.mark()
	w.peaks = append(w.peaks, windowPeak{at, peak})
	for len(w.peaks) > foreignLag && w.peaks[1].at <= at-foreignLagTime {
		w.peaks = w.peaks[1:]
	}
	run, wait := gauge(running), gauge(waiting)
	total := run + wait
	if total <= low && abandoned > 0 {
		// The server holds no more than we had in flight throughout the
		// reading: it has let go of every request we gave up on.
		w.flight.forget(abandoned)
		abandoned = 0
	}
	ours := abandoned
	for _, p := range w.peaks {
		ours = max(ours, p.peak+abandoned)
	}
	var st *stageLoad
	if serial, name, measured := w.live.stageNow(); measured && peak > 0 {
		st = w.stage(serial, name)
		st.rec.Readings++
	}
	r := foreignReading{at: math.Round(at.Seconds()*1000) / 1000, total: total, running: run, ours: ours, stage: st, foreign: total > ours}
	if len(w.recent) == foreignWindow {
		w.recent = append(w.recent[:0], w.recent[1:]...)
	}
	w.recent = append(w.recent, r)
	n := 0
	for _, x := range w.recent {
		if x.foreign {
			n++
		}
	}
	switch {
	case n >= foreignConfirm:
		for i := range w.recent {
			if x := &w.recent[i]; x.foreign && !x.counted {
				x.counted = true
				if x.stage != nil {
					x.stage.add(*x)
				}
			}
		}
		w.said = true
	case n == 0 && w.said:
		w.said = false
		w.live.setForeign("")
	}
	if w.said && r.foreign {
		w.live.setForeign(foreignAlert(total, run, ours))
	}
}

// stage is the record of the stage numbered serial, made on its first
// reading.
func (w *foreignWatch) stage(serial int, name string) *stageLoad {
	if n := len(w.stages); n > 0 && w.stages[n-1].serial == serial {
		return w.stages[n-1]
	}
	st := &stageLoad{serial: serial, rec: results.ForeignLoad{Stage: name}}
	w.stages = append(w.stages, st)
	return st
}

func (st *stageLoad) add(r foreignReading) {
	f := &st.rec
	if f.Foreign == 0 {
		f.FirstS = r.at
	}
	f.Foreign++
	f.LastS = r.at
	if r.total > f.MaxRequests {
		f.MaxRequests, f.MaxRunning = r.total, r.running
	}
	f.MaxOurs = max(f.MaxOurs, r.ours)
}

// records are the measured stages another client's requests were seen
// in, for local.server_metrics.foreign_load; nil when none.
func (w *foreignWatch) records() []results.ForeignLoad {
	if w == nil {
		return nil
	}
	var out []results.ForeignLoad
	for _, st := range w.stages {
		if st.rec.Foreign > 0 {
			out = append(out, st.rec)
		}
	}
	return out
}

// foreignAlert says it live: "another client is using the server: 2
// requests running, 1 of them ours".
func foreignAlert(total, running, ours int) string {
	what := "running"
	if total > running {
		what = "running or waiting"
	}
	mine := fmt.Sprintf("%d of them ours", ours)
	if ours == 0 {
		mine = "none of them ours"
	}
	return fmt.Sprintf("another client is using the server: %d %s %s, %s — the figures now include its load",
		total, results.Plural(total, "request", "requests"), what, mine)
}

// gauge reads a request-count gauge as a whole count (0 when absent).
func gauge(v *float64) int {
	if v == nil || math.IsNaN(*v) || *v < 0 {
		return 0
	}
	return int(math.Round(*v))
}
