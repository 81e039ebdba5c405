// Package engine implements the Kovara benchmark method against any
// OpenAI-compatible server: endpoint check, compat probe, prompt
// calibration, warmup, closed-loop concurrency levels, statistics and the
// results file. It imports neither the GUI nor any toolkit.
package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
)

// Client identity written into every run's environment. Version is set at
// build time with -ldflags "-X github.com/kovara/desktop/engine.Version=…".
var Version = "0.1.0-dev"

// ClientName is the environment.client of every record we write.
const ClientName = "kovara-desktop"

// ErrInterrupted is returned (wrapped) when the run was stopped; the file
// returned with it holds the completed levels and is marked incomplete.
var ErrInterrupted = errors.New("the benchmark was stopped before it finished")

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

// runner carries one Kovara run's state between its stages, on top of the
// session every plan has.
type runner struct {
	*session
	plan     Plan
	file     *results.File
	opts     requestOpts // settled by probe and calibration
	usage    bool        // the server reports usage in streams
	probeOut outcome     // the accepted probe, a free calibration point
	// prefix: the server's /metrics has prefix-cache counters, read on
	// both sides of each level through mc.
	prefix bool
	mc     *http.Client
	// stamps counts how the measured levels' reads were stamped.
	stamps connStats
	// shard is this process's part of a run from several client machines
	// (shard.go); nil for a whole run.
	shard *Shard
}

// Run benchmarks ep with plan. It owns every goroutine and connection it
// starts and closes them before returning. On success the file is complete;
// when ctx is cancelled it returns the completed levels with an error
// wrapping ErrInterrupted; a failed stage returns a *StageError, a bad plan
// a *PlanError, an endpoint problem an *EndpointError.
func Run(ctx context.Context, plan Plan, ep Endpoint, obs Observer) (*results.File, error) {
	return run(ctx, plan, ep, obs, nil)
}

// run is Run, or with sh its shard's share (RunShard).
func run(ctx context.Context, plan Plan, ep Endpoint, obs Observer, sh *Shard) (*results.File, error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	if !plan.FixedSeed {
		plan.Seed = sh.freshSeed()
	}
	sess, err := newSession(ep, obs)
	if err != nil {
		return nil, err
	}
	r := &runner{session: sess, plan: plan, shard: sh}
	r.file = r.newFile()
	r.file.Local.FreshSeed = !plan.FixedSeed
	r.startShard()
	obs.Live.start(r.clock, len(plan.Concurrency), r.measuredTotal())

	defer r.release()
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	for i, c := range plan.Concurrency {
		if err := r.awaitLevel(ctx, i); err != nil {
			return nil, err
		}
		first := levelFirstNumber(plan, i)
		lv, run, loc := r.measure(ctx, i, c, plan.Requests, first, fmt.Sprintf("level %d of %d", i+1, len(plan.Concurrency)))
		if lv.interrupted {
			loc.Partial = true
			r.file.Local.PartialRun = &run
			r.file.Local.Levels = append(r.file.Local.Levels, loc)
			r.attachTelemetry()
			r.finish(false)
			r.obs.Live.setPhase(PhaseStopped)
			return r.file, fmt.Errorf("level %d of %d (concurrency %d): %w", i+1, len(plan.Concurrency), c, ErrInterrupted)
		}
		r.file.Runs = append(r.file.Runs, run)
		r.file.Local.Levels = append(r.file.Local.Levels, loc)
		if i < len(plan.Concurrency)-1 && obs.Checkpoint != nil {
			r.finish(false)
			obs.Checkpoint(r.file)
		}
	}
	r.attachTelemetry()
	r.finish(true)
	r.obs.Live.setPhase(PhaseDone)
	return r.file, nil
}

// prepare is the method's steps 1 to 4 (check, probe, calibration,
// warmup), with the /metrics scraper and the GPU sampler started beside
// them; release stops what it started. Errors are ready to return from Run.
func (r *runner) prepare(ctx context.Context) error {
	if err := r.startup(ctx, r.wantModel(), r.plan.InputTokens, r.plan.OutputTokens, r.plan.MetricsInterval); err != nil {
		return err
	}
	r.aliasWarning()
	if err := r.probe(ctx); err != nil {
		return r.stop(ctx, err)
	}
	// The probe loaded the model: a server that only then says its
	// context (Ollama) is held to it before the prompts are fitted.
	if err := r.learnContext(ctx, r.plan.InputTokens, r.plan.OutputTokens, r.probeOut.ttft); err != nil {
		return err
	}
	r.mc = metricsClient(r.ep, r.base)
	_, r.prefix = r.fetchPrefix(ctx)
	if err := r.calibrate(ctx); err != nil {
		return r.stop(ctx, err)
	}
	if err := r.warmup(ctx); err != nil {
		return r.stop(ctx, err)
	}
	return nil
}

// release stops what prepare started.
func (r *runner) release() {
	r.session.release()
	if r.mc != nil {
		r.mc.CloseIdleConnections()
	}
}

// measure is step 5 for one level of requests requests, numbered from
// first (name says which level it is in the log), and its record: the
// published run record and its local detail. The level's warnings are
// given; whether it was interrupted is the caller's to handle.
func (r *runner) measure(ctx context.Context, index, c, requests int, first int64, name string) (*levelRun, results.Run, results.LevelLocal) {
	lv := r.runLevel(ctx, index, c, requests, first, name)
	if r.obs.Requests != nil {
		r.obs.Requests(c, lv.records())
	}
	run, loc := r.record(lv)
	r.gpuWindow(c, c, lv.start, lv.end, outputTokens(run))
	if lv.interrupted {
		return lv, run, loc
	}
	// A level's failures and prompt-cache hits are warned from the file
	// itself (results.Warnings); the log says them as they happen.
	if lv.okCount() == 0 && lv.requests > 0 {
		r.obs.logf("at concurrency %d no request succeeded", c)
	}
	return lv, run, loc
}

// readPrefix reads the server's prefix-cache counters when the run found
// it has them (r.prefix, settled once after the probe by fetchPrefix).
func (r *runner) readPrefix(ctx context.Context) (PrefixCounters, bool) {
	if !r.prefix {
		return PrefixCounters{}, false
	}
	return r.fetchPrefix(ctx)
}

func (r *runner) fetchPrefix(ctx context.Context) (PrefixCounters, bool) {
	m, err := fetchMetrics(ctx, r.mc, r.ep, r.base, 5*time.Second)
	if err != nil || !m.Prefix.Present {
		return PrefixCounters{}, false
	}
	return m.Prefix, true
}

// FreshSeed draws a new prompt seed: a positive number short enough to
// read off a results file and type back in with --seed.
func FreshSeed() int64 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return int64(binary.BigEndian.Uint32(b[:])>>1) + 1
}

// attachTelemetry stops the GPU sampler and files what it saw.
func (r *runner) attachTelemetry() { r.file.Local.Telemetry = r.telemetry() }

// outputTokens is a level's total output tokens, from its record.
func outputTokens(run results.Run) int64 {
	m := run.Metrics
	if m.OutputTokensMean == nil {
		return 0
	}
	return int64(math.Round(*m.OutputTokensMean * float64(m.RequestsOK)))
}

func (l *Live) phaseOr(def Phase) Phase {
	if l == nil {
		return def
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase
}

func (r *runner) newFile() *results.File {
	f := &results.File{
		Format:        results.Format,
		FormatVersion: results.FormatVersion,
		CreatedAt:     r.t0.UTC().Format(time.RFC3339),
		Runs:          []results.Run{},
		Local: results.Local{
			Plan:         "kovara",
			Endpoint:     r.base.Root,
			EndpointHost: r.base.Host,
			EndpointName: r.ep.Name,
			Simulated:    r.plan.Simulated,
			Levels:       []results.LevelLocal{},
			Warnings:     []string{},
			StartedAt:    r.t0.UTC().Format(time.RFC3339),
		},
	}
	if c := r.plan.Conditions; c != nil {
		f.Manifest = &results.ManifestRef{Revision: c.Revision, ContentHash: c.ContentHash}
		if c.ManifestPath != "" || c.ManifestName != "" {
			f.Local.Manifest = &results.ManifestLocal{Path: c.ManifestPath, Name: c.ManifestName}
		}
	}
	return f
}

func (r *runner) finish(complete bool) {
	r.file.Local.ServedModels = r.served
	r.file.Local.RequestedModel = r.model
	r.file.Local.Detection = r.detection
	r.file.Local.Warnings = slices.Clone(r.warnings)
	r.file.Local.ReceiveClock = results.ReceiveClockOf(r.stamps.KernelStamped, r.stamps.ReadStamped)
	r.file.Complete = complete
	r.file.Local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	r.file.Local.ServerMetrics = r.metrics.snapshot()
	r.finishShard()
}

// check is step 1: the endpoint check, for a hardware run with the
// manifest's model id.
// wantModel is the model the run asks for: the plan's, else the
// manifest's model id, else "" (the only one served).
func (r *runner) wantModel() string {
	if r.plan.Model == "" && r.plan.Conditions != nil {
		return r.plan.Conditions.ModelID
	}
	return r.plan.Model
}

// aliasWarning says when a hardware run asked for its model under another
// name than the manifest's.
func (r *runner) aliasWarning() {
	if cond := r.plan.Conditions; cond != nil && r.plan.Model != "" && r.plan.Model != cond.ModelID {
		r.warn("the server was asked for %q, an alias: the runs are recorded under the manifest's model id %q", r.plan.Model, cond.ModelID)
	}
}

// probe is step 2: one small streaming request, falling back on 400/422
// first without ignore_eos, then also without stream_options.
func (r *runner) probe(ctx context.Context) error {
	r.phase(PhaseProbe)
	cn := r.newConn()
	defer cn.close()
	tries := []requestOpts{
		{ignoreEOS: true, streamOptions: true},
		{ignoreEOS: false, streamOptions: true},
		{ignoreEOS: false, streamOptions: false},
	}
	var refusals []string
	for i, t := range tries {
		t.model, t.maxTokens, t.words, t.seed = r.model, probeMaxTokens, probeWords, r.plan.Seed
		cn.rememberModel = true
		out := cn.do(ctx, t, prompt.ProbeRequest, checkTimeout(r.ep))
		if out.interrupted {
			return ErrInterrupted
		}
		if out.class == "http_400" || out.class == "http_422" {
			refusals = append(refusals, fmt.Sprintf("%s (%s)", out.class, out.msg))
			continue
		}
		if out.class != "" {
			return &StageError{Stage: PhaseProbe, Err: r.probeFailure(out)}
		}
		r.opts = t
		r.opts.maxTokens = r.plan.OutputTokens
		r.usage = out.hasUsage
		r.srvModel = cn.seenModel
		r.file.Local.Compat = &results.Compat{
			IgnoreEOS: t.ignoreEOS, StreamOptions: t.streamOptions, Usage: out.hasUsage, Attempts: i + 1,
		}
		if !t.ignoreEOS {
			r.warn("the server refused ignore_eos: completions may stop before %d tokens, so throughput is less comparable", r.plan.OutputTokens)
		}
		if !out.hasUsage {
			r.warn("the server does not report token usage: prompts are not calibrated and output is counted in stream chunks")
		}
		r.probeOut = out
		return nil
	}
	return &StageError{Stage: PhaseProbe, Err: fmt.Errorf(
		"the server refused every form of streaming chat request: %s", strings.Join(refusals, "; "))}
}

const (
	probeWords     = 16
	probeMaxTokens = 4
)

// probeFailure explains the probe's failed streaming chat request. A 401
// or 403 is the API key: an *EndpointError that says where the key goes
// (the model list answered, without the key when none was given).
func (s *session) probeFailure(o outcome) error {
	if o.class == httpClass(http.StatusUnauthorized) || o.class == httpClass(http.StatusForbidden) {
		status, _ := strconv.Atoi(strings.TrimPrefix(o.class, "http_"))
		return authError(s.ep, status, "/v1/chat/completions", o.msg, s.served != nil)
	}
	switch o.class {
	case ClassConnection:
		return fmt.Errorf("the streaming chat request failed: %s", o.msg)
	case ClassTimeout:
		return errors.New("the streaming chat request got no answer in time: is the model still loading?")
	}
	if len(o.class) > 5 && o.class[:5] == "http_" {
		return fmt.Errorf("the server answered the streaming chat request with %s: %s", o.class, o.msg)
	}
	return fmt.Errorf("the streaming chat request failed (%s): %s", o.class, o.msg)
}

// warmup is step 4: unmeasured requests with up to the highest level's
// concurrency in flight.
func (r *runner) warmup(ctx context.Context) error {
	n := r.plan.Warmup
	if n == 0 {
		return nil
	}
	r.phase(PhaseWarmup)
	workers := min(n, r.mostUsers())
	slots := r.openSlots(ctx, r.obs.Live.beginStage(PhaseWarmup, 0, workers, n, r.opts.maxTokens), false)
	defer slots.close()
	from := prompt.WarmupRequest(0)
	lr := slots.run(ctx, loadSpec{total: n, timeout: r.plan.Timeout, request: func(k int) (requestOpts, int64) {
		return r.opts, from + int64(k)
	}})
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	failed := 0
	var first string
	for _, x := range lr.outcomes() {
		if !x.ok() {
			failed++
			if first == "" {
				first = x.class + ": " + x.msg
			}
		}
	}
	if failed > 0 {
		r.warn("%d of %d warmup requests failed (first: %s)", failed, n, first)
	}
	return nil
}

// levelRun is one finished (or interrupted) level.
type levelRun struct {
	loadRun
	index, concurrency int
	requests           int // the level's requests in all
	interrupted        bool
	// tpot is each success's time per output token after the first, ms
	// (filled by record).
	tpot          []float64
	preopenFailed int
	// The server's prefix-cache counters over the level, when it has them.
	prefixOK                   bool
	prefixPrompt, prefixCached int64
	prefixNames                string
}

func (l *levelRun) records() []RequestRecord {
	var out []RequestRecord
	for _, s := range l.slots {
		for _, o := range s.outs {
			if o.interrupted {
				continue
			}
			out = append(out, RequestRecord{
				N: o.n, Start: o.start, TTFT: o.ttft, Latency: o.end - o.start,
				ITL: s.itl[o.itlFrom:o.itlTo], Class: o.class, Chunks: o.chunks,
			})
		}
	}
	return out
}

func (l *levelRun) okCount() int {
	n := 0
	for _, o := range l.outcomes() {
		if o.ok() {
			n++
		}
	}
	return n
}

// runLevel is step 5 for one level: open one connection per slot, then
// start every slot together; a slot starts its next request the moment its
// previous one ends, until the level's requests are used up.
func (r *runner) runLevel(ctx context.Context, index, conc, requests int, first int64, name string) *levelRun {
	r.obs.logf("%s: concurrency %d, %d requests", name, conc, requests)
	users, share := r.share(conc, requests)
	live := r.obs.Live.beginStage(PhaseLevel, index+1, users, len(share), r.opts.maxTokens)
	slots := r.openSlots(ctx, live, true)
	defer slots.close()
	lv := &levelRun{index: index, concurrency: conc, requests: len(share), preopenFailed: slots.openFailed}
	before, _ := r.readPrefix(ctx)
	r.releaseAt(ctx, index)
	if r.obs.LevelStart != nil {
		r.obs.LevelStart(conc)
	}
	lv.loadRun = slots.run(ctx, loadSpec{total: len(share), timeout: r.plan.Timeout, request: func(k int) (requestOpts, int64) {
		return r.opts, first + share[k]
	}})
	lv.interrupted = ctx.Err() != nil
	if after, ok := r.readPrefix(ctx); ok {
		lv.prefixPrompt, lv.prefixCached, lv.prefixOK = after.Since(before)
		lv.prefixNames = after.Names
	}
	if lv.preopenFailed > 0 {
		r.warn("at concurrency %d, %d of %d connections could not be opened ahead of the level; their first request includes connecting", conc, lv.preopenFailed, users)
	}
	finished := 0
	for _, o := range lv.outcomes() {
		if !o.interrupted {
			finished++
		}
	}
	r.obs.Live.endLevel(finished)
	return lv
}

// environment is the client description shared by every record of a run.
func (r *runner) environment(honoured *bool) results.Environment {
	var srv *string
	if r.srvModel != "" {
		s := r.srvModel
		srv = &s
	}
	return results.Environment{
		Client:            ClientName,
		ClientVersion:     Version,
		GoVersion:         runtime.Version(),
		OS:                runtime.GOOS,
		Machine:           runtime.GOARCH,
		Temperature:       0,
		MaxTokens:         r.plan.OutputTokens,
		IgnoreEOS:         r.opts.ignoreEOS,
		IgnoreEOSHonoured: honoured,
		Stream:            true,
		StreamOptions:     r.opts.streamOptions,
		PromptGenerator:   prompt.Generator,
		Seed:              r.plan.Seed,
		PercentileMethod:  results.PercentileLinear,
		ServerModel:       srv,
		TimeoutS:          r.plan.Timeout.Seconds(),
	}
}
