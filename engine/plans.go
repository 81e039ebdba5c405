package engine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// Shared machinery of the plans beyond the Kovara method (the three-stage
// plan and the speculative-decoding mode): how they start (startPlanRun),
// the negotiation of optional request fields, token counting with its
// source, the speculative-decoding counters and the local section of their
// documents. Their requests, a many-user round released together included,
// go through the one request loop of every plan (load.go).

// worseSource returns the worse of two token sources ("" counts as none).
func worseSource(a, b string) string {
	rank := map[string]int{"": 0, results.TokensUsage: 1, results.TokensTimings: 2, results.TokensChunks: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// counted is one request's tokens and their sources.
type counted struct {
	tokens       int
	source       string
	promptTokens int // 0 when unknown
	promptSource string
	first, last  time.Duration // first and last text chunk, offsets from the run's start
}

func countTokens(o *outcome) counted {
	c := counted{tokens: o.chunks, source: results.TokensChunks, first: o.start + o.ttft, last: o.lastTok}
	switch {
	case o.hasUsage && o.complTok > 0:
		c.tokens, c.source = o.complTok, results.TokensUsage
	case o.hasTimings && o.timingsOut > 0:
		c.tokens, c.source = o.timingsOut, results.TokensTimings
	}
	switch {
	case o.hasUsage && o.promptTok > 0:
		c.promptTokens, c.promptSource = o.promptTok, results.TokensUsage
	case o.hasTimings && o.timingsIn > 0:
		c.promptTokens, c.promptSource = o.timingsIn, results.TokensTimings
	}
	return c
}

// decodeRate is tokens / (last − first) in tokens per second, the
// protocol's decode speed; ok is false with fewer than two chunks.
func (c counted) decodeRate(o *outcome) (float64, bool) {
	d := (c.last - c.first).Seconds()
	if o.chunks < 2 || d <= 0 {
		return 0, false
	}
	return float64(c.tokens) / d, true
}

// startPlanRun starts a plan beyond the Kovara method: its session, the
// live view's stages and requests, and the start-up every plan shares
// (session.startup). The caller releases the session. A start-up cut
// short by ctx is ErrInterrupted in the check phase (session.stop says
// so for every plan).
func startPlanRun(ctx context.Context, ep setup.Endpoint, obs Observer, model string, output, stages, total int, metricsEvery time.Duration) (*session, error) {
	s, err := newSession(ep, obs)
	if err != nil {
		return nil, err
	}
	obs.Live.start(s.clock, stages, total)
	if err := s.startup(ctx, model, 0, output, metricsEvery); err != nil {
		s.release()
		return nil, err
	}
	return s, nil
}

// detected is what the endpoint check and the run found of the server,
// for a plan's document: zero while nothing is known of it.
func (s *session) detected() results.Detection {
	if s.detection == nil {
		return results.Detection{}
	}
	return *s.detection
}

func (s *session) planLocal(simulated bool) results.PlanLocal {
	return results.PlanLocal{
		Endpoint:     s.base.Root,
		EndpointHost: s.base.Host,
		EndpointName: s.ep.Name,
		Simulated:    simulated,
		ServedModels: s.served,
		StartedAt:    s.t0.UTC().Format(time.RFC3339),
	}
}

// negotiate sends the plan's first request (a short warmup) and drops the
// optional fields the server refuses with 400 or 422: first
// chat_template_kwargs (when thinking off was asked for), then
// stream_options. It returns the settled options, with max_tokens left for
// the caller to set.
func (r *session) negotiate(ctx context.Context, cn *conn, thinkingOff bool, warmTokens int, timeout time.Duration) (requestOpts, results.PlanCompat, outcome, error) {
	var tries []requestOpts
	for _, th := range []bool{true, false} {
		if th && !thinkingOff {
			continue
		}
		for _, so := range []bool{true, false} {
			tries = append(tries, requestOpts{noThinking: th, streamOptions: so})
		}
	}
	var pc results.PlanCompat
	for i, t := range tries {
		t.model, t.maxTokens, t.text = r.model, warmTokens, warmupPrompt()
		cn.rememberModel = true
		out := cn.do(ctx, t, -1, timeout)
		pc.Attempts = i + 1
		if out.interrupted || ctx.Err() != nil {
			return t, pc, out, ErrInterrupted
		}
		if out.class == "http_400" || out.class == "http_422" {
			what := "stream_options"
			if t.noThinking {
				what = "chat_template_kwargs with stream_options"
				if !t.streamOptions {
					what = "chat_template_kwargs"
				}
			}
			pc.Refused = append(pc.Refused, fmt.Sprintf("%s: %s (%s)", what, out.class, out.msg))
			continue
		}
		if out.class != "" {
			return t, pc, out, &StageError{Stage: PhaseProbe, Err: r.probeFailure(out)}
		}
		r.srvModel = cn.seenModel
		pc.ThinkingOff, pc.StreamOptions = t.noThinking, t.streamOptions
		pc.Usage, pc.Timings = out.hasUsage, out.hasTimings
		if thinkingOff && !t.noThinking {
			r.warn("the server refused chat_template_kwargs, so thinking was left at the server's default")
		}
		if t.noThinking && out.reasoning {
			r.warn("thinking off was accepted, yet the answer began with reasoning: the model's chat template may not know enable_thinking; reasoning tokens are counted as decode tokens")
		}
		if !out.hasUsage && !out.hasTimings {
			r.warn("the server reports neither usage nor llama.cpp timings: tokens are counted as stream chunks, and prompt lengths are unknown")
		}
		return t, pc, out, nil
	}
	return requestOpts{}, pc, outcome{}, &StageError{Stage: PhaseProbe, Err: fmt.Errorf(
		"the server refused every form of streaming chat request: %s", strings.Join(pc.Refused, "; "))}
}

// readSpec reads the speculative-decoding counters; ok is false when the
// server has none (or no /metrics).
func (r *session) readSpec(ctx context.Context, mc *http.Client) (SpecCounters, bool) {
	m, err := fetchMetrics(ctx, mc, r.ep, r.base, 5*time.Second)
	if err != nil || !m.Spec.Present {
		return m.Spec, false
	}
	return m.Spec, true
}

// startRunner is the start the plans built on the runner share: fresh
// prompts unless the plan fixes its seed, the session for ep bound to ctx
// (done, deferred with the run's error, ends it), and the runner's
// results file for plan.
func startRunner(ctx context.Context, kp setup.KovaraPlan, ep setup.Endpoint, obs Observer, plan string) (context.Context, *runner, func(*error), error) {
	if !kp.FixedSeed {
		kp.Seed = FreshSeed()
	}
	sess, err := newSession(ep, obs)
	if err != nil {
		return ctx, nil, nil, err
	}
	ctx, done := sess.bind(ctx)
	r := &runner{session: sess, plan: kp}
	r.file = r.newFile()
	r.file.Local.Plan = plan
	r.file.Local.FreshSeed = !kp.FixedSeed
	return ctx, r, done, nil
}
