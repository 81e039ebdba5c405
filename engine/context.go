package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
)

// The context plan (docs/plans.md, "The context plan"): how fast the
// server reads a prompt and writes an answer as the context grows, and
// what its prompt cache saves a conversation that goes on. At each depth,
// for each repeat, every user sends a cold prompt of that many tokens
// (the Kovara generator, with a fresh seed and its own request number, so
// no cache has seen it) and, right after its answer, a follow-up: the
// same conversation with the answer and one short new turn, which a
// server with a prompt cache answers from it.

// Context plan defaults.
const (
	// contextFirstDepth is where the doubling of the default depths
	// starts, and contextMaxDepth where it stops when the server does not
	// say its context.
	contextFirstDepth = 1024
	contextMaxDepth   = 32768
	// ContextFollowUpTokens is the follow-up's answer: enough to see the
	// stream go on, short, since only its first token is measured.
	ContextFollowUpTokens = 16
	// contextTurnTokens is room, beyond the cold prompt and its answer,
	// for the follow-up's own turn: its text and the chat template's
	// marks around two more messages.
	contextTurnTokens = 64
)

// ContextFollowUp is every follow-up's new user turn.
const ContextFollowUp = "Thank you. Now, in one sentence, what was that story about?"

// ParseDepths reads depths as the CLI and the app take them: tokens,
// comma-separated, with k for 1,024 ("1k,8k,32k" or "0,1024,8192"; the
// plan measures the short prompt, 0, first all the same).
func ParseDepths(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		num, mult := part, 1
		if v, ok := strings.CutSuffix(strings.ToLower(part), "k"); ok {
			num, mult = v, 1024
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a depth: give tokens, like 0, 8192 or 8k", part)
		}
		if n > setup.MaxContextDepth/mult {
			return nil, fmt.Errorf("depth %s is more than %d tokens", part, setup.MaxContextDepth)
		}
		out = append(out, n*mult)
	}
	if len(out) == 0 {
		return nil, errors.New("give at least one depth, like 1k,8k")
	}
	return out, nil
}

// FormatDepths writes depths the way ParseDepths reads them.
func FormatDepths(depths []int) string {
	s := make([]string, len(depths))
	for i, d := range depths {
		s[i] = strconv.Itoa(d)
		if d > 0 && d%1024 == 0 {
			s[i] = strconv.Itoa(d/1024) + "k"
		}
	}
	return strings.Join(s, ",")
}

// fitDepth says whether depth d's conversation fits the context d
// reports: the cold prompt, its answer and the follow-up's turn as one
// prompt, and the follow-up's answer. nil when it fits or the context is
// unknown. lower names what to lower ("" for the CLI's flags).
func fitDepth(p setup.ContextPlan, depth int, det *results.Detection, lower string) error {
	ce := FitContext(depth+p.OutputTokens+contextTurnTokens, ContextFollowUpTokens, det)
	if ce == nil {
		return nil
	}
	ce.Lower = lower
	if lower == "" {
		ce.Lower = "the depths (--depths) or the answer (--output-tokens)"
	}
	return fmt.Errorf("depth %d does not fit: its follow-up sends the %d-token prompt, its %d-token answer and a new turn, so %w",
		depth, depth, p.OutputTokens, ce)
}

// ContextFit holds the plan's given depths to the context d reports: nil when
// every depth fits (or the depths are chosen, or the context is unknown),
// else why the deepest does not, with the family's fix; lower names what
// to lower in the caller's words ("" names the CLI's flags). The app calls
// it before Run with the endpoint's last check; RunContext with this
// run's.
func ContextFit(p setup.ContextPlan, det *results.Detection, lower string) error {
	p = p.WithDefaults()
	if len(p.Depths) == 0 {
		return nil
	}
	return fitDepth(p, p.Depths[len(p.Depths)-1], det, lower)
}

// ContextDepths are the depths the plan measures on a server whose
// context d reports: the plan's own, or 0 and then doubling from 1,024 to
// the deepest whose conversation fits (to 32,768 when d says no context).
func ContextDepths(p setup.ContextPlan, det *results.Detection) []int {
	p = p.WithDefaults()
	if p.Depths != nil {
		return slices.Clone(p.Depths)
	}
	out := []int{0}
	for d := contextFirstDepth; d <= setup.MaxContextDepth; d *= 2 {
		if fitDepth(p, d, det, "") != nil || (d > contextMaxDepth && (det == nil || det.ContextLength <= 0)) {
			break
		}
		out = append(out, d)
	}
	return out
}

// depthStage is how the live view says depth index (from 0) of depths,
// depth tokens deep: "Context depth 8k (4 of 5), repeat 1 of 3: cold
// prompts — 2 of 6 requests", "depth 8k" in a title. The plan changes its
// line as the depth goes on (depthLine).
func depthStage(index, depths, depth, users, repeats, tokens int) Stage {
	return Stage{Measured: true, Index: index + 1, Users: users, Requests: 2 * users * repeats, TokensEach: tokens,
		Name: "depth " + results.DepthName(depth), NameInWait: true, Line: depthLine(index, depths, depth, 1, repeats, false)}
}

// depthLine is a depth's words at its repeat (from 1) of repeats, in its
// cold prompts or their follow-ups.
func depthLine(index, depths, depth, repeat, repeats int, followUp bool) func(done, total int) string {
	what := "cold prompt"
	if followUp {
		what = "cached follow-up"
	}
	head := fmt.Sprintf("Context depth %s (%d of %d), repeat %d of %d: %s", results.DepthName(depth), index+1, depths, repeat, repeats, what)
	return func(done, total int) string { return fmt.Sprintf("%ss — %d of %d requests", head, done, total) }
}

// contextRun carries one context plan run.
type contextRun struct {
	*runner
	cp  setup.ContextPlan
	res *results.ContextResult
	// pts are every prompt measured so far, words against the server's
	// prompt tokens: the line each depth's word count is read from.
	pts  []point
	next int64 // the next cold request's number
}

// RunContext runs the context plan against ep. Like the other plans, it
// returns the result with an error only for an unusable plan or endpoint
// (*PlanError, *EndpointError, *StageError), or, with the depths measured
// so far marked incomplete, for a stop wrapping ErrInterrupted. A depth
// the server could not hold ends the plan there, said in Limit.
func RunContext(ctx context.Context, plan setup.ContextPlan, ep setup.Endpoint, obs Observer) (_ *results.ContextResult, err error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	plan = plan.WithDefaults()
	if !plan.FixedSeed {
		plan.Seed = FreshSeed()
	}
	sess, err := newSession(ep, obs)
	if err != nil {
		return nil, err
	}
	ctx, done := sess.bind(ctx)
	defer done(&err)
	kp := setup.KovaraPlan{Model: plan.Model, OutputTokens: plan.OutputTokens, Concurrency: []int{plan.Users}, Requests: plan.Users,
		Seed: plan.Seed, FixedSeed: plan.FixedSeed, Timeout: plan.Timeout, Simulated: plan.Simulated, MetricsInterval: plan.MetricsInterval}
	cr := &contextRun{runner: &runner{session: sess, plan: kp}, cp: plan, next: prompt.FirstWarmupRequest}
	cr.file = cr.newFile()
	obs.Live.start(cr.clock, 0, 0)
	defer cr.release()

	// The endpoint check; the depths are held to the context it found
	// before any request.
	if err := cr.startup(ctx, plan.Model, 0, 0, plan.MetricsInterval); err != nil {
		return nil, err
	}
	knownAtStart := cr.detection != nil && cr.detection.ContextLength > 0
	if err := ContextFit(plan, cr.detection, ""); err != nil {
		return nil, &PlanError{Err: err}
	}
	cr.res = cr.newResult()
	res := cr.res
	if err := cr.probe(ctx); err != nil {
		return nil, cr.stop(ctx, err)
	}
	res.ServerModel = cr.srvModel
	// The probe loaded the model: a server that only then says its
	// context (Ollama) has the depths fitted to it.
	if err := cr.learnContext(ctx, 0, 0, cr.probeOut.ttft); err != nil {
		return nil, err
	}
	res.Engine = cr.detected()
	depths := ContextDepths(plan, cr.detection)
	if !knownAtStart && plan.Depths != nil {
		// Learned only now: keep the depths that fit and say why the
		// rest are left out, as a server that cuts prompts is treated.
		for len(depths) > 0 && fitDepth(plan, depths[len(depths)-1], cr.detection, "") != nil {
			depths = depths[:len(depths)-1]
		}
		if len(depths) < len(plan.Depths) {
			res.Limit = fmt.Sprintf("the server's context of %d tokens (%s, known only once the model was loaded) holds no deeper conversation with its answer and follow-up than %s",
				cr.detection.ContextLength, cr.detection.ContextSource, depthOrNone(depths))
			cr.warn("the plan stops at %s: %s", depthOrNone(depths), res.Limit)
		}
	}
	if det := cr.detection; plan.Depths == nil && det != nil && det.ContextLength > 0 && len(depths) > 0 && depths[len(depths)-1] < setup.MaxContextDepth {
		next := max(2*depths[len(depths)-1], contextFirstDepth)
		res.Limit = fmt.Sprintf("the next depth, %d tokens, would not fit with its answer and follow-up in the server's context of %d tokens (%s)",
			next, det.ContextLength, det.ContextSource)
	}
	res.Settings.Depths = depths
	if det := cr.detection; det != nil && det.ParallelSlots > 0 && plan.Users > det.ParallelSlots {
		cr.warn("the server serves %d %s at a time (%s), and each round sends %d at once: the rest wait for a slot, so their TTFT and prefill include that wait; %s",
			det.ParallelSlots, results.Plural(det.ParallelSlots, "request", "requests"), det.ParallelSource, plan.Users, results.ParallelFix(det.Family, plan.Users))
	}
	total := len(depths) * plan.Repeats * plan.Users * 2
	obs.Live.start(cr.clock, len(depths), total)
	if len(depths) == 0 {
		cr.obs.Live.setPhase(PhaseDone)
		return cr.finish(true), nil
	}

	if err := cr.calibrateAt(ctx, depths); err != nil {
		return cr.finish(false), cr.stop(ctx, err)
	}
	if err := cr.warm(ctx); err != nil {
		return cr.finish(false), cr.stop(ctx, err)
	}
	for i, d := range depths {
		stop, err := cr.depth(ctx, i, d, len(depths))
		if err != nil {
			cr.obs.Live.setPhase(PhaseStopped)
			return cr.finish(false), fmt.Errorf("depth %s (%d of %d): %w", results.DepthName(d), i+1, len(depths), err)
		}
		if stop {
			break
		}
	}
	cr.obs.Live.setPhase(PhaseDone)
	return cr.finish(true), nil
}

func depthOrNone(depths []int) string {
	if len(depths) == 0 {
		return "no depth at all"
	}
	d := depths[len(depths)-1]
	if d == 0 {
		return "the short prompt"
	}
	return strconv.Itoa(d) + " tokens"
}

func (cr *contextRun) newResult() *results.ContextResult {
	p := cr.cp
	return &results.ContextResult{
		PlanHeader:    results.ContextDoc.Header(cr.t0, cr.model),
		PrefillMethod: results.PrefillAboveShortPrompt,
		Settings: results.ContextSettings{
			DepthsChosen: p.Depths == nil, OutputTokens: p.OutputTokens,
			FollowUp: ContextFollowUp, FollowUpTokens: ContextFollowUpTokens,
			Repeats: p.Repeats, Users: p.Users, PromptGenerator: prompt.Generator, Seed: p.Seed,
			TimeoutS: p.Timeout.Seconds(), Client: ClientName, ClientVersion: Version,
		},
		Engine:   cr.detected(),
		Depths:   []results.ContextDepth{},
		Warnings: []string{},
		Local:    cr.planLocal(p.Simulated),
	}
}

// finish settles what the run leaves beside its depths.
func (cr *contextRun) finish(complete bool) *results.ContextResult {
	res := cr.res
	res.Complete = complete
	res.Warnings = cr.settlePlan(&res.Local, &res.Compat, &res.Settings.IgnoreEOS)
	return res
}

// calibrateAt fits the prompts to the server's tokenizer: the method's
// calibration at the first depth above 0, with the probe's prompt as a
// free first point; every later depth's words are read off the line
// through every prompt measured so far (nextWords).
func (cr *contextRun) calibrateAt(ctx context.Context, depths []int) error {
	if !cr.usage {
		cr.warn("the server does not report prompt tokens: each depth is sent as one word a token, so how deep the prompts really were is unknown")
		return nil
	}
	if p := cr.probeOut.promptTok; p > 0 {
		cr.pts = append(cr.pts, point{probeWords, p})
	}
	target := 0
	for _, d := range depths {
		if d > 0 {
			target = d
			break
		}
	}
	if target == 0 {
		return nil
	}
	cr.plan.InputTokens = target
	if err := cr.calibrate(ctx); err != nil {
		return err
	}
	cal := cr.file.Local.Calibration
	out := &results.ContextCalibration{TargetTokens: target, Words: cal.Words, Converged: cal.Converged, Attempts: cal.Attempts}
	if cal.PromptTokens != nil {
		out.PromptTokens = *cal.PromptTokens
	}
	for _, a := range cal.Attempts {
		cr.pts = append(cr.pts, point{a.Words, a.PromptTokens})
	}
	if len(cr.pts) >= 2 {
		slope, icept := fitLine(cr.pts)
		out.TokensPerWord = math.Round(slope*10000) / 10000
		out.BaseTokens = int(math.Round(icept))
	}
	if !cal.Converged && cal.PromptTokens != nil {
		cr.warn("calibration at %d tokens did not converge: its prompts came out at %d tokens; each depth says how far off it landed", target, *cal.PromptTokens)
	}
	cr.res.Calibration = out
	return nil
}

// fitLine is the least-squares line through pts, tokens against words:
// the slope nextWords uses, and where it meets 0 words.
func fitLine(pts []point) (slope, icept float64) {
	var n, sx, sy, sxx, sxy float64
	for _, p := range pts {
		x, y := float64(p.words), float64(p.tokens)
		n++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope = 1
	if d := n*sxx - sx*sx; d > 0 {
		if s := (n*sxy - sx*sy) / d; s > 0.05 {
			slope = s
		}
	}
	return slope, (sy - slope*sx) / n
}

// warm sends one unmeasured round, every user at once, of the short
// prompt and a whole answer: the first answers a llama-server b9749 gave
// after the calibration's one-token requests decoded at 15 to 110 tok/s
// against 450 to 650 for the rest, by its own timings too.
func (cr *contextRun) warm(ctx context.Context) error {
	p := cr.cp
	cr.phase(PhaseWarmup)
	st := warmupStage()
	st.Users, st.Requests, st.TokensEach = p.Users, p.Users, p.OutputTokens
	set := cr.openSlots(ctx, cr.obs.Live.beginStage(st), true)
	defer set.close()
	first := cr.next
	cr.next += int64(p.Users)
	opts := cr.opts
	opts.maxTokens, opts.words, opts.text = p.OutputTokens, 0, ""
	lr := set.run(ctx, loadSpec{oneEach: true, timeout: p.Timeout, request: func(k int) (requestOpts, int64) {
		return opts, first + int64(k)
	}})
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	cr.res.Settings.Warmup = p.Users
	for _, o := range lr.outcomes() {
		if !o.ok() {
			cr.warn("the warmup request failed (%s): the first depth's figures may include the server warming up", failure(o))
			break
		}
	}
	return nil
}

// wordsFor is the word count of a cold prompt of depth tokens.
func (cr *contextRun) wordsFor(depth int) int {
	switch {
	case depth == 0:
		return 0
	case len(cr.pts) == 0:
		return depth
	}
	return min(max(nextWords(cr.pts, depth), 1), 8*depth+64)
}

// depth measures one depth: its repeats, each a round of cold prompts
// (one per user, together) and then their follow-ups. stop is true when
// the server could not hold this depth: it is left out and Limit says
// why. err wraps ErrInterrupted on a stop.
func (cr *contextRun) depth(ctx context.Context, index, depth, depths int) (stop bool, err error) {
	p := cr.cp
	words := cr.wordsFor(depth)
	cr.obs.logf("depth %s: %d words a prompt, %d-token answers, %d %s × %d %s", results.DepthName(depth), words, p.OutputTokens,
		p.Users, results.Plural(p.Users, "user", "users"), p.Repeats, results.Plural(p.Repeats, "repeat", "repeats"))
	cd := results.ContextDepth{Depth: depth, Words: words}
	// One live stage for the whole depth, every cold request and
	// follow-up of its repeats: a stage of one request each would show
	// its counters at 0 and its progress at 0 % nearly all the time.
	set := cr.openSlots(ctx, cr.obs.Live.beginStage(depthStage(index, depths, depth, p.Users, p.Repeats, p.OutputTokens)), true)
	defer set.close()
	finished := 0
	defer func() { cr.obs.Live.endLevel(finished) }()
	if set.openFailed > 0 {
		cr.warn("%s, %d of %d connections could not be opened ahead; their first request includes connecting", results.AtDepth(depth), set.openFailed, p.Users)
	}
	for _, c := range set.conns {
		c.details = true
	}
	var w stageWindow
	defer func() { w.record(cr.session, depth, p.Users) }() // keyed by depth: results.ContextResult.EnergyKeys
	var firstMsgs []string
	for rep := range p.Repeats {
		cr.obs.Live.setLine(depthLine(index, depths, depth, rep+1, p.Repeats, false))
		first := cr.next
		cr.next += int64(p.Users)
		opts := cr.opts
		opts.maxTokens, opts.words, opts.text = p.OutputTokens, words, ""
		cold := set.run(ctx, loadSpec{oneEach: true, timeout: p.Timeout, request: func(k int) (requestOpts, int64) {
			return opts, first + int64(k)
		}})
		finished += p.Users
		answers := make([][]byte, len(set.conns))
		var okConns []*conn
		var okUsers []int
		for i, c := range set.conns {
			if o := cold.slots[i].outs; len(o) == 1 && o[0].ok() {
				answers[i] = bytes.Clone(c.answer)
				okConns = append(okConns, c)
				okUsers = append(okUsers, i)
			}
		}
		// Right after: each conversation again, with its answer and a new
		// turn, on the slot that sent it.
		var follow loadRun
		if len(okConns) > 0 && ctx.Err() == nil {
			fset := &slotSet{s: set.s, conns: okConns}
			cr.obs.Live.setLine(depthLine(index, depths, depth, rep+1, p.Repeats, true)) // on the depth's stage: its slots are the conns' own
			follow = fset.run(ctx, loadSpec{oneEach: true, timeout: p.Timeout, request: func(k int) (requestOpts, int64) {
				u := okUsers[k]
				o := opts
				o.maxTokens, o.answer, o.followUp = ContextFollowUpTokens, answers[u], ContextFollowUp
				return o, first + int64(u)
			}})
			finished += len(okConns)
		}
		cd.Samples = append(cd.Samples, results.ContextSamples{Repeat: rep + 1, Cold: cold.samples(), FollowUp: follow.samplesOrNil()})
		for i := range set.conns {
			conv := results.ContextConversation{Repeat: rep + 1, User: i + 1}
			co := cold.slots[i].outs
			if len(co) != 1 || co[0].interrupted {
				cd.Partial = true
				continue
			}
			cd.Conversations++
			conv.Cold = cr.turn(&co[0], &w)
			if j := slices.Index(okUsers, i); j >= 0 && j < len(follow.slots) && len(follow.slots[j].outs) == 1 {
				fo := &follow.slots[j].outs[0]
				if fo.interrupted {
					cd.Partial = true
				} else {
					conv.FollowUp = cr.turn(fo, &w)
				}
			} else if !co[0].ok() {
				conv.FollowUp.Error = "not sent: the cold request failed"
			}
			if conv.Cold.Error == "" && conv.FollowUp.Error == "" && conv.FollowUp.TTFTMs != nil {
				cd.OK++
			}
			for _, e := range []string{conv.Cold.Error, conv.FollowUp.Error} {
				if e != "" && !strings.HasPrefix(e, "not sent") && len(cd.Failures) < 3 && !slices.Contains(firstMsgs, e) {
					firstMsgs = append(firstMsgs, e)
					cd.Failures = append(cd.Failures, e)
				}
			}
			cd.Runs = append(cd.Runs, conv)
		}
		if ctx.Err() != nil {
			cd.Partial = true
			cr.res.Depths = append(cr.res.Depths, cr.summarize(cd))
			return false, ErrInterrupted
		}
		if rep == 0 {
			if why := cr.beyondContext(cd, depth, words); why != "" {
				cr.res.Limit = why
				cr.warn("the plan stops before depth %s: %s", results.DepthName(depth), why)
				return true, nil
			}
		}
	}
	sum := cr.summarize(cd)
	if sum.PromptTokens != nil && words > 0 {
		for _, r := range cd.Runs {
			if r.Cold.Error == "" && r.Cold.PromptTokens > 0 {
				cr.pts = append(cr.pts, point{words, r.Cold.PromptTokens})
			}
		}
	}
	cr.notes(sum)
	cr.res.Depths = append(cr.res.Depths, sum)
	return false, nil
}

// samplesOrNil is samples, or nil for a loop that never ran.
func (l *loadRun) samplesOrNil() *results.LevelSamples {
	if len(l.slots) == 0 {
		return nil
	}
	return l.samples()
}

// beyondContext says why a depth's first round shows the server could not
// hold it, or "": its prompts were cut without an error (prompt tokens
// that stopped growing with more words, or fell well short of the depth),
// or every cold request was refused.
func (cr *contextRun) beyondContext(cd results.ContextDepth, depth, words int) string {
	var got []int
	failed, refused := 0, ""
	for _, r := range cd.Runs {
		switch {
		case r.Cold.Error == "" && r.Cold.PromptTokens > 0:
			got = append(got, r.Cold.PromptTokens)
		case r.Cold.Error != "":
			failed++
			if refused == "" {
				refused = r.Cold.Error
			}
		}
	}
	if depth > 0 && failed == len(cd.Runs) && len(cd.Runs) > 0 && strings.HasPrefix(refused, "http_4") {
		return fmt.Sprintf("the server refused the %d-token prompts (%s): its context holds less; %s", depth, refused, contextFixOf(cr.detection))
	}
	if depth == 0 || len(got) == 0 {
		return ""
	}
	tokens := slices.Max(got)
	if len(cr.res.Depths) > 0 {
		prev := cr.res.Depths[len(cr.res.Depths)-1]
		if prev.PromptTokens != nil && prev.Words > 0 && float64(words) >= 1.1*float64(prev.Words) && float64(tokens) <= 1.01*float64(*prev.PromptTokens) {
			return fmt.Sprintf("the server cut the %d-token prompts to %d tokens without an error (%d words gave %d prompt tokens at depth %s, %d words %d), so about %d tokens is its context; %s",
				depth, tokens, prev.Words, *prev.PromptTokens, results.DepthName(prev.Depth), words, tokens, tokens, contextFixOf(cr.detection))
		}
	}
	if cr.usage && float64(tokens) < 0.9*float64(depth) {
		return fmt.Sprintf("the server cut the %d-token prompts to %d tokens without an error, so about %d tokens is its context; %s",
			depth, tokens, tokens, contextFixOf(cr.detection))
	}
	return ""
}

func contextFixOf(det *results.Detection) string {
	family := ""
	if det != nil {
		family = det.Family
	}
	if fix := results.ContextFix(family); fix != "" {
		return "start the server with a larger context (" + fix + ")"
	}
	return "start the server with a larger context"
}

// turn is one request's figures; w gathers the depth's energy window.
func (cr *contextRun) turn(o *outcome, w *stageWindow) results.ContextTurn {
	t := results.ContextTurn{}
	if !o.ok() {
		t.Error = failure(o)
		return t
	}
	c := countTokens(o)
	w.add(o, c.tokens)
	t.PromptTokens, t.CompletionTokens, t.TokenSource = c.promptTokens, c.tokens, c.source
	switch {
	case o.hasCached:
		t.CachedTokens = ptr(o.cachedTok)
	case o.hasCacheN:
		t.CachedTokens = ptr(o.timingsCache)
	}
	t.TTFTMs = msPtr(o.ttft)
	if v, ok := c.decodeRate(o); ok {
		t.DecodeTPS = ptr(round1(v))
	}
	if o.hasTimings {
		st := o.timings
		t.Server = &results.ServerTimings{PromptN: st.PromptN, CacheN: st.CacheN, PromptMs: st.PromptMs, PromptTPS: round1(st.PromptPerSecond),
			PredictedN: st.PredictedN, PredictedMs: st.PredictedMs, PredictedTPS: round1(st.PredictedPerSecond)}
	}
	return t
}

// summarize gives a depth its figures. The short prompt's cold requests
// are the baseline every deeper cold request's prefill is measured above
// (results.PrefillBaseline): the plan always measures the short prompt
// first (setup.ContextPlan.withDefaults).
func (cr *contextRun) summarize(cd results.ContextDepth) results.ContextDepth {
	if cd.Depth == 0 {
		cr.res.PrefillBaseline = baselineOf(cd.Runs)
		if cr.res.PrefillBaseline == nil && cd.Conversations > 0 {
			cr.warn("no depth has a prefill figure: every prefill is measured above the short prompt, and none of its requests came back with its prompt tokens counted")
		}
	} else {
		for i := range cd.Runs {
			cd.Runs[i].Cold.PrefillTPS = cr.res.PrefillBaseline.Above(cd.Runs[i].Cold)
		}
	}
	return summarizeDepth(cd)
}

// baselineOf is the prefill baseline of the short prompt's conversations:
// the medians of their cold requests' tokens read and TTFT; nil when none
// came back with both.
func baselineOf(runs []results.ContextConversation) *results.PrefillBaseline {
	var read, ttft []float64
	for _, r := range runs {
		if c := r.Cold; c.Error == "" && c.TTFTMs != nil && c.PromptTokens > 0 {
			read, ttft = append(read, float64(c.ReadTokens())), append(ttft, *c.TTFTMs)
		}
	}
	if len(read) == 0 {
		return nil
	}
	slices.Sort(read)
	slices.Sort(ttft)
	return &results.PrefillBaseline{ReadTokens: stats.Quantile(read, 0.5), TTFTMs: stats.Quantile(ttft, 0.5)}
}

// summarizeDepth gives a depth its figures from its conversations.
func summarizeDepth(cd results.ContextDepth) results.ContextDepth {
	var prompts, prefill, decode, ttft, cttft, cached, fprompts, sprefill, sdecode, outside []float64
	for _, r := range cd.Runs {
		if c := r.Cold; c.Error == "" {
			add := func(xs *[]float64, v *float64) {
				if v != nil {
					*xs = append(*xs, *v)
				}
			}
			if c.PromptTokens > 0 {
				prompts = append(prompts, float64(c.PromptTokens))
			}
			add(&prefill, c.PrefillTPS)
			add(&decode, c.DecodeTPS)
			add(&ttft, c.TTFTMs)
			if s := c.Server; s != nil {
				if s.PromptTPS > 0 {
					sprefill = append(sprefill, s.PromptTPS)
				}
				if s.PredictedTPS > 0 {
					sdecode = append(sdecode, s.PredictedTPS)
				}
				if s.PromptMs > 0 && c.TTFTMs != nil {
					outside = append(outside, *c.TTFTMs-s.PromptMs)
				}
			}
		}
		if f := r.FollowUp; f.Error == "" && f.TTFTMs != nil {
			cttft = append(cttft, *f.TTFTMs)
			if f.CachedTokens != nil {
				cached = append(cached, float64(*f.CachedTokens))
			}
			if f.PromptTokens > 0 {
				fprompts = append(fprompts, float64(f.PromptTokens))
			}
		}
	}
	if len(prompts) > 0 {
		slices.Sort(prompts)
		cd.PromptTokens = ptr(int(math.Round(stats.Quantile(prompts, 0.5))))
		if cd.Depth > 0 {
			cd.Off = ptr(math.Round((float64(*cd.PromptTokens)/float64(cd.Depth)-1)*10000) / 10000)
		}
	}
	if len(fprompts) > 0 {
		slices.Sort(fprompts)
		cd.FollowUpTokens = ptr(int(math.Round(stats.Quantile(fprompts, 0.5))))
	}
	cd.PrefillTPS, cd.DecodeTPS, cd.TTFTMs = spreadOf(prefill), spreadOf(decode), spreadOf(ttft)
	cd.CachedTTFTMs, cd.CachedTokens = spreadOf(cttft), spreadOf(cached)
	cd.ServerPrefillTPS, cd.ServerDecodeTPS, cd.OutsideTimerMs = spreadOf(sprefill), spreadOf(sdecode), spreadOf(outside)
	return cd
}

// notes warns about what a finished depth shows that its figures alone do
// not: answers that stopped short of their length.
func (cr *contextRun) notes(cd results.ContextDepth) {
	short := 0
	for _, r := range cd.Runs {
		if r.Cold.Error == "" && r.Cold.CompletionTokens > 0 && float64(r.Cold.CompletionTokens) < results.ShortAnswerShare*float64(cr.cp.OutputTokens) {
			short++
		}
	}
	if short > 0 {
		cr.warn("%s, %d of %d answers stopped short of %d tokens: their decode speed is over a shorter answer", results.AtDepth(cd.Depth), short, cd.Conversations, cr.cp.OutputTokens)
	}
	if why := cd.Disagreement(); why != "" {
		cr.warn("%s", why)
	}
	if n := cd.Conversations - cd.OK; n > 0 && len(cd.Failures) > 0 {
		cr.warn("%s, %d of %d conversations failed (first: %s)", results.AtDepth(cd.Depth), n, cd.Conversations, cd.Failures[0])
	}
}
