package engine

import (
	"context"
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
	"github.com/kovara/desktop/engine/setup"
)

// runner carries the Kovara method's state between its steps (check,
// probe, calibration, warmup, measured levels), on top of the session
// every plan has. The Kovara plan (kovaraRun), the capacity plan and the
// context plan each build on one.
type runner struct {
	*session
	plan     setup.KovaraPlan
	file     *results.File
	opts     requestOpts // settled by probe and calibration
	usage    bool        // the server reports usage in streams
	probeOut outcome     // the accepted probe, a free calibration point
	// prefix: the server's /metrics has prefix-cache counters, read on
	// both sides of each level through mc.
	prefix bool
	// estimates: a Kovara method run, whose plan an estimate describes
	// (estimate); the capacity search shares prepare but not the plan.
	estimates bool
	mc        *http.Client
	// shared is the prompt tokens every request shares by design (chat
	// template and instruction), measured by the shared-prefix pair when
	// sharedOK (sharedprefix.go).
	shared   int
	sharedOK bool
	// stamps counts how the measured levels' reads were stamped.
	stamps connStats
	// extra is how many prompt tokens a workload adds to the plan's
	// longest prompt (a shared prefix, a conversation's history), held
	// against the server's context with the plan's own.
	extra int
	// warmUsers is how many users warmup runs at once at most: the most
	// any level of this process runs (a shard runs its own share); 0 for
	// the plan's highest level.
	warmUsers int
}

// level is one measured level as the method runs it: its place, its
// users and requests (this process's part of them), how the log and the
// live view say it, and when its users are released.
type level struct {
	index, conc int
	requests    int   // the level's requests in all (the log says them)
	first       int64 // the request number its offsets count from
	users       int   // the users this process runs
	offsets     []int64
	name        string // in the log: "level 2 of 3", "probe 4 (bisect)"
	// stage is the live view's words for it; runLevel adds its counts.
	stage Stage
	// wl shapes its requests (a shared prefix, conversations); nil: the
	// method's synthetic prompt.
	wl *workload
	// release waits, with the level's connections open, for the moment
	// its users go (a shard's agreed time); nil: at once.
	release func(context.Context)
}

// wholeLevel is level index of conc users and requests requests numbered
// from first, all of it run by this process.
func wholeLevel(index, conc, requests int, first int64, name string, stage Stage) level {
	offsets := make([]int64, requests)
	for k := range offsets {
		offsets[k] = int64(k)
	}
	return level{index: index, conc: conc, requests: requests, first: first, users: conc, offsets: offsets, name: name, stage: stage}
}

// kovaraRun is one run of the Kovara method's plan: its levels in turn,
// each this process's part of it; shard is that part in a run from
// several client machines (shard.go), nil for a whole run.
type kovaraRun struct {
	*runner
	shard *Shard
	wl    *workload // the plan's workload, made ready once calibrated
}

// Run benchmarks ep with plan. It owns every goroutine and connection it
// starts and closes them before returning. On success the file is complete;
// when ctx is cancelled it returns the completed levels with an error
// wrapping ErrInterrupted; a failed stage returns a *StageError, a bad plan
// a *PlanError, an endpoint problem an *EndpointError.
func Run(ctx context.Context, plan setup.KovaraPlan, ep setup.Endpoint, obs Observer) (*results.File, error) {
	return run(ctx, plan, ep, obs, nil)
}

// run is Run, or with sh its shard's share (RunShard).
func run(ctx context.Context, plan setup.KovaraPlan, ep setup.Endpoint, obs Observer, sh *Shard) (_ *results.File, err error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	if sh != nil && plan.Workload.Set() {
		// A shard's levels are merged as the method's own records; a
		// workload's are not the method's prompts.
		return nil, &PlanError{Err: errors.New("a run with a shared system prompt or conversations cannot run as a shard: run it from one client machine")}
	}
	if !plan.FixedSeed {
		plan.Seed = sh.freshSeed()
	}
	// No prompts file on this plan (Validate): nothing is read here.
	wl, err := loadPrompts(ctx, obs.Live, plan.Workload, plan.Seed, 0)
	if err != nil {
		return nil, err
	}
	sess, err := newSession(ep, obs)
	if err != nil {
		return nil, err
	}
	ctx, done := sess.bind(ctx)
	defer done(&err)
	r := &kovaraRun{runner: &runner{session: sess, plan: plan}, shard: sh, wl: wl}
	r.extra = plan.Workload.ExtraTokens(plan.InputTokens, plan.OutputTokens)
	sess.othersExpected = sh != nil && sh.Of > 1
	r.file = r.newFile()
	r.file.Local.FreshSeed = !plan.FixedSeed
	r.startShard()
	r.warmUsers = r.mostUsers()
	r.estimates = true
	obs.Live.start(r.clock, len(plan.Concurrency), r.measuredTotal())
	checks := r.expectPrep(wl)

	defer r.release()
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	if err := r.prepareWorkload(ctx, checks); err != nil {
		return nil, err
	}
	for i, c := range plan.Concurrency {
		if err := r.awaitLevel(ctx, i); err != nil {
			return nil, err
		}
		lv, run, loc := r.measure(ctx, r.level(i, c))
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

// level is the plan's level i, of c users, as this process runs it: the
// whole level, or a shard's share of it released at the agreed time.
func (r *kovaraRun) level(i, c int) level {
	users, offsets := r.share(c, r.plan.Requests)
	n := len(r.plan.Concurrency)
	return level{
		index: i, conc: c, requests: r.plan.Requests, first: levelFirstNumber(r.plan, i), users: users, offsets: offsets,
		name: fmt.Sprintf("level %d of %d", i+1, n), stage: levelStage(i+1, n, users), wl: r.wl,
		release: func(ctx context.Context) { r.releaseAt(ctx, i) },
	}
}

// finish settles the file as the method's runner does; a shard's keeps
// its level records as its own (finishShard).
func (r *kovaraRun) finish(complete bool) {
	r.runner.finish(complete)
	r.finishShard()
}

// levelStage is how the live view says a Kovara level: "Level 2 of 3 —
// concurrency 8 — 40 of 100 requests", "level 2" in a title.
func levelStage(index, levels, users int) Stage {
	return Stage{Name: fmt.Sprintf("level %d", index), Line: func(done, total int) string {
		return fmt.Sprintf("Level %d of %d — concurrency %d — %d of %d requests", index, levels, users, done, total)
	}}
}

// prepare is the method's steps 1 to 4 (check, probe, calibration,
// warmup), with the /metrics scraper and the GPU sampler started beside
// them; release stops what it started. Errors are ready to return from Run.
func (r *runner) prepare(ctx context.Context) error {
	if err := r.startup(ctx, r.wantModel(), r.plan.InputTokens+r.extra, r.plan.OutputTokens, r.plan.MetricsInterval); err != nil {
		return err
	}
	r.aliasWarning()
	if err := r.probe(ctx); err != nil {
		return r.stop(ctx, err)
	}
	// The probe loaded the model: a server that only then says its
	// context (Ollama) is held to it before the prompts are fitted.
	if err := r.learnContext(ctx, r.plan.InputTokens+r.extra, r.plan.OutputTokens, r.probeOut.ttft); err != nil {
		return err
	}
	r.estimate(ctx)
	r.mc = metricsClient(r.ep, r.base)
	_, r.prefix = r.fetchPrefix(ctx)
	if err := r.measureShared(ctx); err != nil {
		return r.stop(ctx, err)
	}
	if err := r.calibrate(ctx); err != nil {
		return r.stop(ctx, err)
	}
	r.obs.Live.prepared(1)
	if err := r.warmup(ctx); err != nil {
		return r.stop(ctx, err)
	}
	r.obs.Live.prepared(r.plan.Warmup)
	return nil
}

// release stops what prepare started.
func (r *runner) release() {
	r.session.release()
	if r.mc != nil {
		r.mc.CloseIdleConnections()
	}
}

// measure is step 5 for one level, and its record: the published run
// record and its local detail. The level's warnings are given; whether it
// was interrupted is the caller's to handle.
func (r *runner) measure(ctx context.Context, l level) (*levelRun, results.Run, results.LevelLocal) {
	c := l.conc
	lv := r.runLevel(ctx, l)
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

// attachTelemetry stops the GPU sampler and files what it saw.
func (r *runner) attachTelemetry() {
	r.file.Local.Telemetry, r.file.Local.Wall = r.telemetry(), r.wallTelemetry()
}

// outputTokens is a level's total output tokens, from its record.
func outputTokens(run results.Run) int64 {
	m := run.Metrics
	if m.OutputTokensMean == nil {
		return 0
	}
	return int64(math.Round(*m.OutputTokensMean * float64(m.RequestsOK)))
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
	f.Local.SLO = sloOf(r.plan.SLO)
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
	r.file.Local.ServerGone = r.goneNote()
	r.file.Local.ReceiveClock = results.ReceiveClockOf(r.stamps.KernelStamped, r.stamps.ReadStamped)
	r.file.Complete = complete
	r.file.Local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	r.file.Local.ServerMetrics = r.metrics.snapshot()
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

// warmupStage is how the live view says the method's warmup: "Warmup
// (not measured) — 3 of 8 requests", "warmup" in a title.
func warmupStage() Stage {
	return Stage{Name: "warmup", Line: func(done, total int) string {
		return fmt.Sprintf("Warmup (not measured) — %d of %d requests", done, total)
	}}
}

// warmup is step 4: unmeasured requests with up to the highest level's
// concurrency in flight.
func (r *runner) warmup(ctx context.Context) error {
	n := r.plan.Warmup
	if n == 0 {
		return nil
	}
	r.phase(PhaseWarmup)
	most := r.warmUsers
	if most == 0 {
		most = maxConcurrency(r.plan)
	}
	workers := min(n, most)
	st := warmupStage()
	st.Users, st.Requests, st.TokensEach = workers, n, r.opts.maxTokens
	slots := r.openSlots(ctx, r.obs.Live.beginStage(st), false)
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
func (r *runner) runLevel(ctx context.Context, l level) *levelRun {
	r.obs.logf("%s: concurrency %d, %d requests", l.name, l.conc, l.requests)
	st := l.stage
	st.Measured, st.Index, st.Users, st.Requests, st.TokensEach = true, l.index+1, l.users, len(l.offsets), r.opts.maxTokens
	slots := r.openSlots(ctx, r.obs.Live.beginStage(st), true)
	defer slots.close()
	lv := &levelRun{index: l.index, concurrency: l.conc, requests: len(l.offsets), preopenFailed: slots.openFailed}
	before, _ := r.readPrefix(ctx)
	if l.release != nil {
		l.release(ctx)
	}
	if r.obs.LevelStart != nil {
		r.obs.LevelStart(l.conc)
	}
	lv.loadRun = slots.run(ctx, loadSpec{total: len(l.offsets), timeout: r.plan.Timeout, shape: l.wl.loop(slots), request: func(k int) (requestOpts, int64) {
		return r.opts, l.first + l.offsets[k]
	}})
	lv.interrupted = ctx.Err() != nil
	if after, ok := r.readPrefix(ctx); ok {
		lv.prefixPrompt, lv.prefixCached, lv.prefixOK = after.Since(before)
		lv.prefixNames = after.Names
	}
	if lv.preopenFailed > 0 {
		r.warn("at concurrency %d, %d of %d connections could not be opened ahead of the level; their first request includes connecting", l.conc, lv.preopenFailed, l.users)
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
