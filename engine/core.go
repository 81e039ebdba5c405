// Package engine runs benchmark plans against any OpenAI-compatible
// server. Its core, which every plan builds on, is the session start-up
// (session.go), the slots and the one request loop with its pacer
// (load.go, request.go), the live progress (live.go) and the base in this
// file: the client's identity, the errors a run returns, the Observer and
// the helpers the plans share. The plans are each their own file: the
// Kovara method (run.go, level.go), the three-stage plan (stages.go), the
// speculative-decoding mode (specdec.go), the capacity plan (capacity.go)
// and the context plan (context.go). What a run is given is plain data
// in package setup, each under its one name (setup.KovaraPlan,
// setup.RatePlan, setup.Endpoint, …), so the library and the manifest
// reader build it without this package. It imports neither the GUI nor
// any toolkit.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// Client identity written into every run's environment. Version is set at
// build time with -ldflags "-X github.com/kovara/desktop/engine.Version=…".
var Version = "0.1.0-dev"

// ClientName is the environment.client of every record we write.
const ClientName = "kovara-desktop"

// ErrInterrupted is returned (wrapped) when the run was stopped; the file
// returned with it holds the completed levels and is marked incomplete.
var ErrInterrupted = errors.New("the benchmark was stopped before it finished")

// Kept says whether a plan's result is kept — saved in the library and
// shown — after its run ended with err: always when it finished or was
// stopped (by the person, or because the server stopped answering:
// ServerGoneError wraps ErrInterrupted), and after any other error only
// when it had measured something. The CLI and the app keep by it alike.
func Kept(err error, measured bool) bool {
	return err == nil || errors.Is(err, ErrInterrupted) || measured
}

// StageError is a method stage that could not be done (the probe was
// refused, say). Request failures inside a level are data, not StageErrors.
type StageError struct {
	Stage Phase
	Err   error
}

func (e *StageError) Error() string { return fmt.Sprintf("%s: %v", e.Stage, e.Err) }
func (e *StageError) Unwrap() error { return e.Err }

// PlanError is a plan that cannot be run as given.
type PlanError struct{ Err error }

func (e *PlanError) Error() string { return e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// Observer receives what a run wants to tell the outside world. Every field
// is optional; none is called per token.
type Observer struct {
	Live *Live
	// Checkpoint gets the file after every finished level (complete
	// false) so it can be saved and a crash loses at most one level.
	Checkpoint func(*results.File)
	// Log gets one line per phase change and every warning.
	Log func(string)
	// Requests gets every finished request of a level after the level
	// (for accuracy checks against a server's own record).
	Requests func(concurrency int, recs []RequestRecord)
	// LevelStart is called as a level's connections are open and its
	// slots are about to be released; with Requests after it, it brackets
	// the measured level (selftest counts the client's cost over it).
	LevelStart func(concurrency int)
	// Estimate, when set, has a Kovara method run measure the server's
	// speed with the speed test's streams (measureSpeed) after the probe
	// and gets how long the plan takes at it (EstimateLine), before
	// calibration and warmup.
	Estimate func(line string)
}

// RequestRecord is one measured request, as the engine saw it.
type RequestRecord struct {
	N       int64
	Start   time.Duration // offset from the run's start
	TTFT    time.Duration // -1 when no text arrived
	Latency time.Duration
	ITL     []float32 // ms between consecutive text-bearing chunks
	Class   string    // "" for a success
	Chunks  int
}

func (o Observer) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(fmt.Sprintf(format, args...))
	}
}

// FreshSeed draws a new prompt seed: a positive number short enough to
// read off a results file and type back in with --seed.
func FreshSeed() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint32(b[:])>>1) + 1
}

// planStop turns a cancelled context into ErrInterrupted.
func planStop(ctx context.Context, what string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ErrInterrupted)
	}
	return nil
}

// sleepUntil waits until clock reads at; false when ctx ended first.
func sleepUntil(ctx context.Context, clock func() time.Duration, at time.Duration) bool {
	d := at - clock()
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// stageWindow is a measured stage's span, from its first request's start
// to its last one's end, and its output tokens: the window its GPU energy
// is read over.
type stageWindow struct {
	start, end time.Duration
	tokens     int64
	n          int
}

func (w *stageWindow) add(o *outcome, tokens int) {
	if o.interrupted {
		return
	}
	if w.n == 0 || o.start < w.start {
		w.start = o.start
	}
	w.end = max(w.end, o.end)
	w.tokens += int64(tokens)
	w.n++
}

// record files the window under the stage's number.
func (w *stageWindow) record(s *session, stage, concurrency int) {
	if w.n > 0 && w.end > w.start {
		s.gpuWindow(stage, concurrency, w.start, w.end, w.tokens)
	}
}

// spreadOf is five type-7 percentiles of xs (sorted in place), or nil.
func spreadOf(xs []float64) *results.Spread {
	if len(xs) == 0 {
		return nil
	}
	slices.Sort(xs)
	q := func(p float64) float64 { return math.Round(stats.Quantile(xs, p)*10000) / 10000 }
	return &results.Spread{Min: q(0), P10: q(0.1), P50: q(0.5), P90: q(0.9), Max: q(1)}
}

// failure is a request's failure in words.
func failure(o *outcome) string {
	if o.msg == "" {
		return o.class
	}
	return o.class + ": " + o.msg
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func ptr[T any](v T) *T { return &v }

func msPtr(d time.Duration) *float64 {
	if d < 0 {
		return nil
	}
	return ptr(math.Round(ms(d)*1000) / 1000)
}

// settlePlan is settle for a plan run on the Kovara method's runner
// (context, rate): with what its probe found, as a plan's result records
// it, before the finish time, /metrics and telemetry; nothing of the
// probe's before it was accepted.
func (r *runner) settlePlan(local *results.PlanLocal, compat *results.PlanCompat, ignoreEOS *bool) []string {
	if c := r.file.Local.Compat; c != nil {
		*ignoreEOS = c.IgnoreEOS
		*compat = results.PlanCompat{StreamOptions: c.StreamOptions, Usage: c.Usage, Timings: r.probeOut.hasTimings, Attempts: c.Attempts}
	}
	return r.settle(local)
}

// expectPrep counts in the live view what a run on the runner sends
// before its measured requests: calibration (as one request), the warmup
// and, with wl's shared system prompt, the prefix check, whose requests
// it returns (0 without one).
func (r *runner) expectPrep(wl *workload) (checks int) {
	if wl.w.SharedPrefix > 0 {
		checks = prefixCheckRequests
	}
	r.obs.Live.expectPrep(1 + r.plan.Warmup + checks)
	return checks
}
