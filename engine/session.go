package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// session is what a run of any plan has: the endpoint and one clock, the
// observer, what the endpoint check found, the warnings so far, the
// server's /metrics scraper and what the slots have learned about the
// server's connections. The Kovara method's runner and the other plans'
// runs each embed one.
type session struct {
	ep    setup.Endpoint
	base  setup.Base
	obs   Observer
	t0    time.Time
	clock func() time.Duration // since t0: every time of the run is an offset

	served    []string // the model list
	model     string   // the model requested
	srvModel  string   // what the server called it in its answers
	detection *results.Detection
	warnings  []string
	metrics   *metricsScraper // nil until started
	gpu       *gpuWatch       // nil without a GPU source
	wall      *wallWatch      // nil without a wall plug
	// closes counts connections the server closed right after an answer
	// (see conn.ready).
	closes atomic.Int64
	// flight counts the run's requests in flight, for the /metrics
	// readings to be set against (foreign.go). othersExpected: this run
	// is one shard of several, whose other shards' requests are on the
	// server by design, so no reading is another client's.
	flight         flight
	othersExpected bool
	// endRun ends the run's context (bind); gone is set by a loop's
	// watchdog when the server stopped answering, and goneSaid once its
	// sentence is among the warnings (watchdog.go).
	endRun   context.CancelFunc
	gone     atomic.Pointer[serverGone]
	goneSaid bool
}

// newSession starts a session's clock; an address that cannot be used is
// an *EndpointError.
func newSession(ep setup.Endpoint, obs Observer) (*session, error) {
	base, err := setup.ParseBase(ep.URL)
	if err != nil {
		return nil, &EndpointError{Kind: ErrBadAddress, Msg: err.Error()}
	}
	s := &session{ep: ep, base: base, obs: obs, t0: time.Now(), warnings: []string{}}
	s.clock = func() time.Duration { return time.Since(s.t0) }
	return s, nil
}

func (s *session) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.warnings = append(s.warnings, msg)
	s.obs.logf("warning: %s", msg)
}

func (s *session) phase(p Phase) {
	s.obs.Live.setPhase(p)
	s.obs.logf("%s", p)
}

// stop turns a failure into ErrInterrupted when the cause was Stop.
func (s *session) stop(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		s.obs.Live.setPhase(PhaseStopped)
		return fmt.Errorf("%s: %w", s.obs.Live.phaseOr(PhaseCheck), ErrInterrupted)
	}
	return err
}

// check is the method's step 1 for every plan: the model list, the model
// to request (want, else the only one served; with firstWhenMany, the
// first of several, so the endpoint Test can still probe) and engine
// detection.
func (s *session) check(ctx context.Context, want string, firstWhenMany bool) error {
	s.phase(PhaseCheck)
	cctx, cancel := context.WithTimeout(ctx, checkTimeout(s.ep))
	defer cancel()
	c := checkClient(s.ep, s.base)
	defer c.CloseIdleConnections()
	models, hdr, err := listModels(cctx, c, s.ep, s.base)
	if err != nil {
		return s.stop(ctx, err)
	}
	s.served = modelIDs(models)
	if s.base.TLS() && s.ep.InsecureTLS {
		s.warn("TLS certificate verification was off for this endpoint (Verify TLS unticked, or --insecure): the server's identity was not checked")
	}
	model, err := ResolveModel(models, want, s.ep.ModelHint)
	var ee *EndpointError
	if errors.As(err, &ee) && ee.Kind == ErrModelNotServed && want == "" && firstWhenMany {
		model, err = slices.Min(s.served), nil
	}
	if err != nil {
		return err
	}
	s.model = model
	det := Detect(cctx, c, s.ep, s.base, models, model, hdr)
	s.detection = &det
	return nil
}

// startup is how every plan begins, before its first request to the
// model: the endpoint check (the model list, the model to request — want,
// else the only one served — and engine detection), then the context fit
// (a plan whose prompts of input and answers of output tokens the
// server's context cannot hold is refused as a *PlanError before any
// request; 0, 0 checks nothing), then the server's /metrics scraper and
// the GPU telemetry beside the run. The probe that follows is each
// plan's own. release stops what startup started, whatever it returned.
func (s *session) startup(ctx context.Context, want string, input, output int, metricsEvery time.Duration) error {
	if err := s.check(ctx, want, false); err != nil {
		return err
	}
	if input+output > 0 {
		if ce := FitContext(input, output, s.detection); ce != nil {
			return &PlanError{Err: ce}
		}
	}
	fl := &s.flight
	if s.othersExpected {
		fl = nil
	}
	s.metrics = startMetricsScraper(ctx, s.ep, s.base, metricsEvery, s.clock, s.obs.Live, fl)
	// GPU telemetry starts before the probe so the sampler is warm by the
	// first measured request; it never holds the benchmark up.
	s.gpu = watchGPUs(ctx, s.ep.GPU, s.t0)
	s.obs.Live.setGPU(s.gpu.latest)
	// The wall plug is read idle before anything is sent: the load's
	// own cost is what it draws above that.
	s.wall = watchWall(ctx, s.ep, s.obs, s.t0)
	return nil
}

// learnContext reads the server's context again when the endpoint check
// could not (Ollama says it only once the model is loaded, which the
// first chat request does), and holds the plan's prompts and answers to
// it as startup did: a *PlanError when they do not fit. first is what
// the first request took to its first token: a model loaded then is said,
// since its wait was before anything measured.
func (s *session) learnContext(ctx context.Context, input, output int, first time.Duration) error {
	s.learnPlacement(ctx)
	d := s.detection
	if d == nil || d.ContextLength > 0 || d.Family != results.FamilyOllama {
		return nil
	}
	c := checkClient(s.ep, s.base)
	defer c.CloseIdleConnections()
	n, ok := ollamaContext(ctx, c, s.ep, s.base, s.model)
	if !ok {
		return nil
	}
	d.ContextLength, d.ContextSource = n, ollamaContextSource
	s.warn("the model was not loaded when the run began: the first request loaded it (its first token came after %s), before warmup and every measured request",
		results.Seconds(float64(first)/float64(time.Millisecond)))
	if input+output > 0 {
		if ce := FitContext(input, output, d); ce != nil {
			return &PlanError{Err: ce}
		}
	}
	return nil
}

// learnPlacement reads where the server put the model, once it is
// loaded (after the first request): Ollama's /api/ps (issue #50). A
// server that does not say leaves it unknown, said nowhere.
func (s *session) learnPlacement(ctx context.Context) {
	d := s.detection
	if d == nil || d.Placement != nil || d.Family != results.FamilyOllama || s.model == "" {
		return
	}
	c := checkClient(s.ep, s.base)
	defer c.CloseIdleConnections()
	if p, ok := ollamaPlacement(ctx, c, s.ep, s.base, s.model); ok {
		d.Placement = p
		if t, _ := d.PlacementWords(); t != "" {
			s.obs.logf("%s", t)
		}
	}
}

// release stops the /metrics scraper and the GPU sampler.
func (s *session) release() {
	if s.metrics != nil {
		s.metrics.stop()
	}
	s.gpu.stop()
	s.wall.stop()
}

// gpuWindow records one measured stage's window for its energy: key names
// the stage in local.telemetry.levels (a Kovara or speculative-decoding
// level's concurrency, a three-stage plan's stage number).
func (s *session) gpuWindow(key, concurrency int, start, end time.Duration, outputTokens int64) {
	s.gpu.level(key, concurrency, s.t0.Add(start), s.t0.Add(end), outputTokens)
	s.wall.level(key, concurrency, s.t0.Add(start), s.t0.Add(end), outputTokens)
}

// telemetry stops the GPU sampler and returns what it saw for the
// document's local.telemetry (nil without a source); its warnings are
// logged now and kept in it, or, without telemetry, become the run's.
func (s *session) telemetry() *results.Telemetry {
	t, warns := s.gpu.finish()
	s.sourceWarnings(warns, t != nil)
	return t
}

// sourceWarnings says a telemetry source's warnings: logged when its
// record keeps them (kept), else the run's own.
func (s *session) sourceWarnings(warns []string, kept bool) {
	for _, w := range warns {
		if kept {
			s.obs.logf("warning: %s", w)
			continue
		}
		s.warn("%s", w)
	}
}

// settle stamps what every plan's result records as its run ends: the
// finish time, the server's /metrics readings and the GPU telemetry
// (stopping the sampler, whose warnings may join the run's), and returns
// a copy of the run's warnings, taken after them.
func (s *session) settle(local *results.PlanLocal) []string {
	local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	local.ServerMetrics = s.metrics.snapshot()
	local.Telemetry = s.telemetry()
	local.Wall = s.wallTelemetry()
	return slices.Clone(s.warnings)
}

// wallTelemetry stops the wall plug's readings and returns what it saw
// for the document's local.wall (nil without a plug); its warnings are
// logged and kept in it, or, without it, become the run's.
func (s *session) wallTelemetry() *results.WallTelemetry {
	t, warns := s.wall.finish()
	s.sourceWarnings(warns, t != nil)
	return t
}

// newConn is a slot's client for this session.
func (s *session) newConn() *conn {
	c := newConn(s.ep, s.base, s.t0)
	c.closes = &s.closes
	c.flight = &s.flight
	c.reached = s.served != nil // the endpoint check listed the models
	return c
}
