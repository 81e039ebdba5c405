package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/clip"
)

// The three-stage plan: Kovara Desktop's own plan after the cmp.wiki
// benchmark protocol (docs/plans.md), with this project's prompts and texts. It
// measures what a single user feels (decode speed on three kinds of
// prompt), how fast a long prompt is read (cold prefill), and what the
// server gives many users at once (aggregate decode), and prints the
// numbers as a wiki-ready block. Its result is its own document kind,
// kovara-desktop-stages, never a Kovara record.

// StagesPlanName and StagesPlanVersion identify the plan in its results.
const (
	StagesPlanName    = "kovara-desktop three-stage plan"
	StagesPlanVersion = 1
)

// The three stages' names, in the log, the live view and a stop's error.
const (
	stageDecode  = "single-user decode"
	stagePrefill = "cold prefill"
	stageUsers   = "many users"
)

// How the live view says the three stages: each measured stage is named
// "stage 1 (single-user decode)" in a title, the many-user warmup
// "warmup".

// stagesDecode is stage 1, prompts answers of up to tokens each: "Stage 1
// of 3: single-user decode — answer 2 of 3".
func stagesDecode(prompts, tokens int) Stage {
	return Stage{Measured: true, Index: 1, Users: 1, Requests: prompts, TokensEach: tokens, Name: "stage 1 (" + stageDecode + ")",
		Line: func(done, total int) string {
			return fmt.Sprintf("Stage 1 of 3: single-user decode — answer %d of %d", min(done+1, total), total)
		}}
}

// stagesPrefill is stage 2, its calibration probe and its long prompt,
// one token each: "Stage 2 of 3: cold prefill — the long prompt (2 of 2
// requests)".
func stagesPrefill() Stage {
	return Stage{Measured: true, Index: 2, Users: 1, Requests: 2, TokensEach: 1, Name: "stage 2 (" + stagePrefill + ")",
		Line: func(done, total int) string {
			what := "calibration probe"
			if done > 0 {
				what = "the long prompt"
			}
			return fmt.Sprintf("Stage 2 of 3: cold prefill — %s (%d of %d requests)", what, min(done+1, total), total)
		}}
}

// stagesWarmup is stage 3's warmup round of users: "Stage 3 of 3: warmup
// at 8 users (not measured) — 3 of 8 requests".
func stagesWarmup(users, tokens int) Stage {
	return Stage{Index: 3, Users: users, Requests: users, TokensEach: tokens, Name: "warmup",
		Line: func(done, total int) string {
			return fmt.Sprintf("Stage 3 of 3: warmup at %d users (not measured) — %d of %d requests", users, done, total)
		}}
}

// stagesUsers is stage 3's measured round of users: "Stage 3 of 3: 8
// users at once — 5 of 8 answers finished".
func stagesUsers(users, tokens int) Stage {
	return Stage{Measured: true, Index: 3, Users: users, Requests: users, TokensEach: tokens, Name: "stage 3 (" + stageUsers + ")",
		Line: func(done, total int) string {
			return fmt.Sprintf("Stage 3 of 3: %d users at once — %d of %d answers finished", users, done, total)
		}}
}

// stagesProfile holds the lengths, in tokens, of a full or a quick run.
type stagesProfile struct {
	decode  int // each single-user answer's max_tokens
	prefill int // the cold prefill's prompt
	probe   int // the calibration probe's prompt
	users   int // each many-user answer's max_tokens
	warm    int // the warmup request's and the many-user warmup round's max_tokens
}

// The cmp.wiki protocol's lengths in both modes, exactly (docs/plans.md;
// TestStagesProfilesFollowTheProtocol holds them): a quick run's numbers
// are a smoke test, but its many-user figure is still made the protocol's
// way.
var (
	stagesFull  = stagesProfile{decode: 1024, prefill: 8000, probe: 1000, users: 512, warm: 32}
	stagesQuick = stagesProfile{decode: 128, prefill: 2000, probe: 500, users: 64, warm: 16}
)

// StagesLengths are p's lengths in tokens, by its mode: each
// single-user answer, the cold prefill and each many-user answer (the
// form says them).
func StagesLengths(p setup.StagesPlan) (decode, prefill, users int) {
	prof := stagesFull
	if p.Quick {
		prof = stagesQuick
	}
	return prof.decode, prof.prefill, prof.users
}

// specWindow is what the counters moved by, as the documents record it.
func specWindow(d SpecDelta) *results.SpecWindow {
	w := &results.SpecWindow{Drafts: d.Drafts, DraftTokens: d.DraftTokens, Accepted: d.Accepted}
	if v, ok := d.AcceptanceRate(); ok {
		w.AcceptanceRate = ptr(math.Round(v*10000) / 10000)
	}
	if v, ok := d.MeanAcceptanceLength(); ok {
		w.MeanAcceptanceLength = ptr(math.Round(v*1000) / 1000)
	}
	if d.Drafts > 0 && len(d.PerPosition) > 0 {
		for _, a := range d.PerPosition {
			w.PerPosition = append(w.PerPosition, math.Round(float64(a)/float64(d.Drafts)*10000)/10000)
		}
	}
	return w
}

// stagesRun carries one three-stage run.
type stagesRun struct {
	*session
	sp   setup.StagesPlan
	prof stagesProfile
	opts requestOpts
	res  *results.StagesResult
}

// RunStages runs the three-stage plan against ep. It returns the result
// even when a stage failed (that stage holds the error; Failed lists it);
// the error is for a plan or endpoint that could not be used
// (*PlanError, *EndpointError, *StageError) and, with the partial result
// marked incomplete, for a stop (wrapping ErrInterrupted).
func RunStages(ctx context.Context, plan setup.StagesPlan, ep setup.Endpoint, obs Observer) (_ *results.StagesResult, err error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	plan = plan.WithDefaults()
	prof := stagesFull
	if plan.Quick {
		prof = stagesQuick
	}
	r, err := startPlanRun(ctx, ep, obs, plan.Model, prof.decode, 3, len(DecodePrompts)+2+plan.Users, plan.MetricsInterval)
	if err != nil {
		return nil, err
	}
	defer r.release()
	ctx, done := r.bind(ctx)
	defer done(&err)
	s := &stagesRun{session: r, sp: plan, prof: prof}
	s.res = s.newResult()
	res := s.res

	// Warmup and negotiation: one short request, dropping what is refused.
	r.phase(PhaseProbe)
	cn := r.newConn()
	defer cn.close()
	opts, pc, first, err := r.negotiate(ctx, cn, !plan.ServerThinking, prof.warm, plan.Timeout)
	res.Compat = pc
	if err != nil {
		if errors.Is(err, ErrInterrupted) {
			return s.finish(false), fmt.Errorf("%s: %w", PhaseProbe, ErrInterrupted)
		}
		return s.finish(false), err
	}
	s.opts = opts
	res.ServerModel = r.srvModel
	// The first request loaded the model: a server that only then says
	// its context (Ollama) has the prefill fitted to it.
	if err := r.learnContext(ctx, 0, prof.decode, first.ttft); err != nil {
		return s.finish(false), err
	}
	res.Engine = r.detected()

	mc := metricsClient(ep, r.base)
	defer mc.CloseIdleConnections()
	before, hasSpec := r.readSpec(ctx, mc)
	s.decodeStage(ctx, cn)
	if hasSpec {
		if after, ok := r.readSpec(ctx, mc); ok {
			if d, ok := after.Since(before); ok {
				res.SpecObserved = specWindow(d)
			}
		}
	}
	if err := planStop(ctx, stageDecode); err != nil {
		return s.finish(false), err
	}
	s.prefillStage(ctx, cn)
	if err := planStop(ctx, stagePrefill); err != nil {
		return s.finish(false), err
	}
	s.usersStage(ctx)
	if err := planStop(ctx, stageUsers); err != nil {
		return s.finish(false), err
	}
	r.obs.Live.setPhase(PhaseDone)
	return s.finish(true), nil
}

func (s *stagesRun) newResult() *results.StagesResult {
	thinking := "off"
	if s.sp.ServerThinking {
		thinking = "server default"
	}
	d := results.StagesResult{
		Format:        results.StagesDoc.Format,
		FormatVersion: 1,
		Plan:          StagesPlanName,
		PlanVersion:   StagesPlanVersion,
		About:         results.StagesDoc.About,
		Quick:         s.sp.Quick,
		CreatedAt:     s.t0.UTC().Format(time.RFC3339),
		TestedOn:      s.t0.UTC().Format(time.DateOnly),
		Model:         s.model,
		Settings: results.StagesSettings{
			DecodeTokens: s.prof.decode, PrefillTargetTokens: s.prof.prefill, ProbeTargetTokens: s.prof.probe,
			UsersTokens: s.prof.users, WarmupTokens: s.prof.warm, Users: s.sp.Users,
			Thinking: thinking, NaturalStop: true, TimeoutS: s.sp.Timeout.Seconds(),
			SpecDecode: clip.Line(s.sp.SpecDecode, 120), Note: clip.Line(s.sp.Note, 300),
			Client: ClientName, ClientVersion: Version,
		},
		Engine:   s.detected(),
		Decode:   []results.DecodeStage{},
		Warnings: []string{},
		Local:    s.planLocal(s.sp.Simulated),
	}
	return &d
}

// cards are the GPUs the run read, for the document and the wiki block:
// only from nvidia-smi where the server may run (a local or ssh source;
// an exporter's page says too little of a card), with a caution when the
// source's machine is not the endpoint's.
func (s *stagesRun) cards(t *results.Telemetry) *results.StagesGPUs {
	if t == nil || len(t.Inventory) == 0 || (t.Source != results.GPUSourceLocal && t.Source != results.GPUSourceSSH) {
		return nil
	}
	g := &results.StagesGPUs{Source: t.Source, Cards: results.CardsFrom(t)}
	host := strings.ToLower(s.base.Host)
	switch {
	case t.Source == results.GPUSourceLocal && !loopbackHost(host):
		g.Caution = "the endpoint is another machine: these may not be the server's cards"
	case t.Source == results.GPUSourceSSH && !strings.EqualFold(sshHostName(t.Host), host):
		g.Caution = "read over ssh on another host than the endpoint's: these may not be the server's cards"
	}
	return g
}

// loopbackHost says whether host names this machine.
func loopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// sshHostName is the host of an ssh destination ("user@host" or "host").
func sshHostName(dest string) string {
	if i := strings.LastIndex(dest, "@"); i >= 0 {
		return dest[i+1:]
	}
	return dest
}

// finish settles the summary fields and returns the result.
func (s *stagesRun) finish(complete bool) *results.StagesResult {
	res := s.res
	res.Complete = complete
	res.Local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	res.Local.ServerMetrics = s.metrics.snapshot()
	res.Local.Telemetry, res.Local.Wall = s.telemetry(), s.wallTelemetry()
	res.GPUs = s.cards(res.Local.Telemetry)
	src := ""
	for _, d := range res.Decode {
		src = worseSource(src, d.TokenSource)
	}
	if res.Users != nil {
		src = worseSource(src, res.Users.TokenSource)
	}
	res.TokenSource = src
	if src == results.TokensChunks {
		s.warn("some token counts are stream chunks (the server sent neither usage nor llama.cpp timings): a chunk may hold more than one token")
	}
	if res.SpecObserved != nil && res.SpecObserved.Drafts > 0 {
		s.warn("the speculative-decoding counters are server-wide: other traffic during the run would mix in")
	}
	res.Warnings = slices.Clone(s.warnings)
	res.BenchNote = res.DefaultBenchNote()
	return res
}

// decodeStage is stage 1: one user, each fixed prompt in turn.
func (s *stagesRun) decodeStage(ctx context.Context, cn *conn) {
	s.obs.logf("%s", stageDecode)
	slots := s.obs.Live.beginStage(stagesDecode(len(DecodePrompts), s.prof.decode))
	cn.live = slots[0]
	var w stageWindow
	defer func() { cn.live = nil; w.record(s.session, 1, 1) }()
	for _, p := range DecodePrompts {
		if ctx.Err() != nil {
			return
		}
		s.obs.logf("1 user, %s prompt, up to %d tokens", p.Kind, s.prof.decode)
		o := s.opts
		o.maxTokens, o.text = s.prof.decode, p.Text
		out := cn.do(ctx, o, -1, s.sp.Timeout)
		cn.live.finish(&out, cn.itl[out.itlFrom:out.itlTo])
		if out.interrupted {
			return
		}
		d := results.DecodeStage{Prompt: p.Kind, MaxTokens: s.prof.decode, Chunks: out.chunks}
		if !out.ok() {
			d.Error = failure(&out)
			s.warn("single-user %s prompt failed: %s", p.Kind, d.Error)
			s.res.Decode = append(s.res.Decode, d)
			continue
		}
		c := countTokens(&out)
		w.add(&out, c.tokens)
		d.CompletionTokens, d.TokenSource = c.tokens, c.source
		d.TTFTMs = msPtr(out.ttft)
		if v, ok := c.decodeRate(&out); ok {
			d.DecodeTPS = ptr(round1(v))
			d.DecodeS = ptr(math.Round((c.last-c.first).Seconds()*1000) / 1000)
		}
		d.Reasoning = out.reasoning
		if float64(c.tokens) < results.ShortAnswerShare*float64(s.prof.decode) {
			d.Short = true
			s.warn("the %s answer stopped at %d tokens, short of %d: its decode rate is what was measured over a shorter answer", p.Kind, c.tokens, s.prof.decode)
		}
		if d.Reasoning {
			s.warn("the %s answer began with reasoning text; it is counted as decode tokens", p.Kind)
		}
		s.res.Decode = append(s.res.Decode, d)
	}
	s.obs.Live.endLevel(len(DecodePrompts))
}

// prefillStage is stage 2: a calibration probe of about probe tokens, then
// the cold prefill of about prefill tokens, both behind fresh reference
// lines and answered with one token.
func (s *stagesRun) prefillStage(ctx context.Context, cn *conn) {
	s.obs.logf("%s", stagePrefill)
	slots := s.obs.Live.beginStage(stagesPrefill())
	cn.live = slots[0]
	var w stageWindow
	defer func() { cn.live = nil; w.record(s.session, 2, 1) }()
	ps := &results.PrefillStage{TargetTokens: s.prof.prefill}
	s.res.Prefill = ps
	target := s.prof.prefill
	if ctxLen := s.res.Engine.ContextLength; ctxLen > 0 && float64(target) > 0.9*float64(ctxLen) {
		target = int(0.9 * float64(ctxLen))
		ps.TargetTokens = target
		// Said once the prefill is measured: its length as the server
		// counted it, the figure the table shows, where it did (#47: the
		// note said "about 1843" above the table's 1877).
		defer func() {
			s.warn("%s", s.res.PrefillCutWords(ctxLen, s.prof.prefill))
		}()
	}
	// send asks for one token after text; false when it was interrupted
	// or failed, which ps.Error then says of the request (what).
	send := func(text, what string) (outcome, bool) {
		o := s.opts
		o.maxTokens, o.text = 1, text
		out := cn.do(ctx, o, -1, s.sp.Timeout)
		cn.live.finish(&out, cn.itl[out.itlFrom:out.itlTo])
		w.add(&out, countTokens(&out).tokens)
		// One output token may be empty text (a special token); the
		// finish_reason chunk still marks the end of the prefill.
		usable := out.ok() || (out.class == ClassEmptyCompletion && out.firstEvent >= 0)
		if !usable && !out.interrupted {
			ps.Error = "the " + what + " request failed: " + failure(&out)
			s.warn("cold prefill: %s", ps.Error)
		}
		return out, usable && !out.interrupted
	}

	const assumedCharsPerToken = 4.0
	s.obs.logf("prefill calibration: about %d tokens", s.prof.probe)
	probe := PrefillText(newRef(), int(float64(s.prof.probe)*assumedCharsPerToken))
	ps.ProbeChars = len(probe)
	out, ok := send(probe, "calibration")
	if !ok {
		return
	}
	ratio := 1 / assumedCharsPerToken
	if c := countTokens(&out); c.promptTokens > 0 {
		ps.ProbePromptTokens = ptr(c.promptTokens)
		ratio = float64(c.promptTokens) / float64(len(probe))
		ps.TokensPerChar = ptr(math.Round(ratio*100000) / 100000)
		ps.Calibrated = true
	} else {
		s.warn("cold prefill: the server reports no prompt token counts, so the text length assumes 4 characters per token and prefill tok/s cannot be measured")
	}

	text := PrefillText(newRef(), int(float64(target)/ratio))
	ps.PromptChars = len(text)
	s.obs.logf("cold prefill: about %d tokens, 1 output token", target)
	out, ok = send(text, "prefill")
	if !ok {
		return
	}
	ps.TTFTMs = msPtr(out.firstEvent)
	c := countTokens(&out)
	if c.promptTokens > 0 {
		ps.PromptTokens, ps.TokenSource = ptr(c.promptTokens), c.promptSource
		if out.firstEvent > 0 {
			ps.PrefillTPS = ptr(math.Round(float64(c.promptTokens) / out.firstEvent.Seconds()))
		}
		if c.promptSource == results.TokensTimings {
			s.warn("cold prefill: prompt tokens are llama.cpp's prompt_n, the tokens it actually processed (a cached template prefix is left out)")
		}
	}
	s.obs.Live.endLevel(2)
}

// usersStage is stage 3: a warmup round and then a measured round of
// Users requests, each released together.
func (s *stagesRun) usersStage(ctx context.Context) {
	n := s.sp.Users
	s.obs.logf("%s", stageUsers)
	us := &results.UsersStage{Users: n, MaxTokens: s.prof.users, PerUser: []results.UserStage{}}
	s.res.Users = us
	// The warmup round shows as warmup; the measured round gets its own
	// slots, so its tokens and times start from zero.
	warm := s.obs.Live.beginStage(stagesWarmup(n, s.prof.warm))
	set := s.openSlots(ctx, warm, true)
	defer set.close()
	if set.openFailed > 0 {
		s.warn("%d of %d connections could not be opened ahead of the many-user stage; their first request includes connecting", set.openFailed, n)
	}
	var measured loadRun
	round := func(maxTokens int) []*outcome {
		o := s.opts
		o.maxTokens, o.text = maxTokens, usersPrompt()
		measured = set.run(ctx, loadSpec{oneEach: true, timeout: s.sp.Timeout, request: func(k int) (requestOpts, int64) {
			return o, int64(k)
		}})
		return measured.outcomes()
	}

	s.obs.logf("%d users: warmup at the same concurrency", n)
	wouts := round(s.prof.warm)
	if ctx.Err() != nil {
		return
	}
	for _, o := range wouts {
		if !o.ok() {
			us.Error = "the warmup failed: " + failure(o)
			s.warn("many users: %s", us.Error)
			return
		}
	}
	set.setLive(s.obs.Live.beginStage(stagesUsers(n, s.prof.users)))

	s.obs.logf("%d users together, up to %d tokens each", n, s.prof.users)
	outs := round(s.prof.users)
	s.obs.Live.endLevel(n)
	if ctx.Err() != nil {
		return
	}
	us.Samples = measured.samples()
	var w stageWindow
	for _, o := range outs {
		w.add(o, countTokens(o).tokens)
	}
	w.record(s.session, 3, n)
	release := time.Duration(math.MaxInt64)
	for _, o := range outs {
		release = min(release, o.start)
	}
	var (
		firsts, lasts []time.Duration
		rates         []float64
		total         int
		src           string
		ttftMax       time.Duration = -1
		firstErr      string
	)
	for _, o := range outs {
		u := results.UserStage{}
		if !o.ok() {
			u.Error = failure(o)
			us.Failed++
			if firstErr == "" {
				firstErr = u.Error
			}
			us.PerUser = append(us.PerUser, u)
			continue
		}
		c := countTokens(o)
		u.CompletionTokens = c.tokens
		u.TTFTMs = msPtr(o.ttft)
		u.FirstS = ptr(math.Round((c.first-release).Seconds()*1000) / 1000)
		u.LastS = ptr(math.Round((c.last-release).Seconds()*1000) / 1000)
		if v, ok := c.decodeRate(o); ok {
			u.DecodeTPS = ptr(round1(v))
			rates = append(rates, v)
		}
		total += c.tokens
		src = worseSource(src, c.source)
		firsts = append(firsts, c.first)
		lasts = append(lasts, c.last)
		ttftMax = max(ttftMax, o.ttft)
		us.PerUser = append(us.PerUser, u)
	}
	us.CompletionTokens, us.TokenSource = total, src
	us.TTFTMsMax = msPtr(ttftMax)
	if len(rates) > 0 {
		sum := 0.0
		for _, v := range rates {
			sum += v
		}
		us.PerUserMeanTPS = ptr(round1(sum / float64(len(rates))))
		us.PerUserMinTPS = ptr(round1(slices.Min(rates)))
	}
	if us.Failed > 0 {
		us.Error = fmt.Sprintf("%d of %d requests failed (first: %s), so there is no aggregate", us.Failed, n, firstErr)
		s.warn("many users: %s", us.Error)
		return
	}
	first, last := slices.Min(firsts), slices.Max(lasts)
	if w := (last - first).Seconds(); w > 0 {
		us.WindowS = ptr(math.Round(w*1000) / 1000)
		us.AggregateTPS = ptr(round1(float64(total) / w))
	}
	if n > 1 && slices.Min(lasts) < slices.Max(firsts) {
		us.Queued = true
		family := ""
		if s.detection != nil {
			family = s.detection.Family
		}
		us.QueueNote = fmt.Sprintf("Some of the %d requests got their first token only after another had finished: "+
			"the server ran fewer than %d at once, so the aggregate is not %d users decoding together; %s.", n, n, n, results.ParallelFix(family, n))
		s.warn("many users: %s", us.QueueNote)
	}
}
