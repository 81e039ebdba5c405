package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
	"github.com/kovara/desktop/internal/clip"
)

// The speculative-decoding mode (docs/plans.md): representative prompts that end
// when the model is done, and per concurrency level the server's own
// counters read before and after, which give the acceptance rate and the
// mean acceptance length. Natural stops make output lengths differ, so
// the spread travels with the numbers, and the result is its own document
// kind, kovara-desktop-specdec, which can never be published.

// specDecRequests is the number of requests of p at concurrency c.
func specDecRequests(p setup.SpecDecPlan, c int) int {
	if p.Requests > 0 {
		return max(p.Requests, c)
	}
	return max(len(SpecDecPrompts), 2*c)
}

func lengthSpread(xs []int) *results.LengthSpread {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	f := make([]float64, len(s))
	sum := 0.0
	for i, v := range s {
		f[i] = float64(v)
		sum += f[i]
	}
	return &results.LengthSpread{Min: s[0], Max: s[len(s)-1], P50: stats.Round3(stats.Quantile(f, 0.5)), Mean: stats.Round3(sum / float64(len(s)))}
}

// RunSpecDec runs the speculative-decoding mode against ep. Like
// RunStages, it returns the result with an error only for an unusable plan
// or endpoint, or (with the levels done so far, marked incomplete) for a
// stop wrapping ErrInterrupted.
func RunSpecDec(ctx context.Context, plan setup.SpecDecPlan, ep setup.Endpoint, obs Observer) (_ *results.SpecDecResult, err error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	plan = plan.WithDefaults()
	total := 0
	for _, c := range plan.Levels {
		total += specDecRequests(plan, c)
	}
	r, err := startPlanRun(ctx, ep, obs, plan.Model, plan.MaxTokens, len(plan.Levels), total, plan.MetricsInterval)
	if err != nil {
		return nil, err
	}
	defer r.release()
	ctx, done := r.bind(ctx)
	defer done(&err)
	res := newSpecDecResult(r, plan)
	finish := func(complete bool) *results.SpecDecResult {
		res.Complete = complete
		res.Local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
		res.Local.ServerMetrics = r.metrics.snapshot()
		res.Local.Telemetry, res.Local.Wall = r.telemetry(), r.wallTelemetry()
		res.Warnings = slices.Clone(r.warnings)
		return res
	}

	r.phase(PhaseProbe)
	cn := r.newConn()
	opts, pc, first, err := r.negotiate(ctx, cn, !plan.ServerThinking, 32, plan.Timeout)
	cn.close()
	res.Compat = pc
	res.ServerModel = r.srvModel
	if err != nil {
		if errors.Is(err, ErrInterrupted) {
			return finish(false), fmt.Errorf("%s: %w", PhaseProbe, ErrInterrupted)
		}
		return finish(false), err
	}
	opts.maxTokens = plan.MaxTokens
	if err := r.learnContext(ctx, 0, plan.MaxTokens, first.ttft); err != nil {
		return finish(false), err
	}
	res.Engine = r.detected()

	mc := metricsClient(ep, r.base)
	defer mc.CloseIdleConnections()
	if sc, ok := r.readSpec(ctx, mc); ok {
		res.Counters = fmt.Sprintf("%s /metrics counters (%s)", results.FamilyName(sc.Names.Family), sc.Names.Looked())
	} else {
		r.warn("%s", noSpecCounters(r.detection))
	}
	for i, c := range plan.Levels {
		lv := r.specLevel(ctx, mc, opts, plan, i, c, res.Counters != "")
		res.Levels = append(res.Levels, lv)
		if ctx.Err() != nil {
			return finish(false), fmt.Errorf("level %d of %d (concurrency %d): %w", i+1, len(plan.Levels), c, ErrInterrupted)
		}
		if i == 0 && len(plan.Levels) > 1 && lv.NotDrafting() {
			// Every further level would measure the same nothing: a
			// server without a draft model ran the whole plan to an
			// empty result before.
			return finish(false), &PlanError{Err: fmt.Errorf("the server drafted no tokens in level 1 (its counters and its answers say so): speculative decoding is off, so the plan stopped there (llama-server: start it with a draft model, -md DRAFT.gguf; vLLM: --speculative-config)")}
		}
	}
	if res.Counters != "" {
		if !slices.ContainsFunc(res.Levels, func(l results.SpecDecLevel) bool { return l.Spec != nil && l.Spec.Drafts > 0 }) {
			r.warn("the server drafted no tokens at any level, so there is no acceptance to report: speculative decoding looks off (llama-server: start it with a draft model, -md DRAFT.gguf; vLLM: --speculative-config)")
		} else {
			r.warn("the counters are server-wide: other traffic during a level would mix into its acceptance")
		}
	}
	r.obs.Live.setPhase(PhaseDone)
	return finish(true), nil
}

// noSpecCounters says that /metrics had no speculative-decoding counters,
// naming the ones looked for: the detected family's, else every family's.
func noSpecCounters(d *results.Detection) string {
	family := ""
	if d != nil {
		family = d.Family
	}
	if family == results.FamilyOllama {
		return "Ollama reports no speculative-decoding counters (it has no /metrics at all), so acceptance cannot be measured on it; lengths and rates are still reported"
	}
	if n, ok := SpecNamesFor(family); ok {
		return fmt.Sprintf("the server's /metrics has none of %s's speculative-decoding metrics (%s); the answers' own counts are used where they carry them, and lengths and rates are still reported",
			results.FamilyName(family), n.Looked())
	}
	var all []string
	for _, n := range specNames {
		all = append(all, results.FamilyName(n.Family)+": "+n.Looked())
	}
	return "the server's /metrics has no speculative-decoding metrics this app knows (" + strings.Join(all, "; ") +
		"); the answers' own counts are used where they carry them, and lengths and rates are still reported"
}

func newSpecDecResult(r *session, plan setup.SpecDecPlan) *results.SpecDecResult {
	thinking := "off"
	if plan.ServerThinking {
		thinking = "server default"
	}
	kinds := make([]string, len(SpecDecPrompts))
	for i, p := range SpecDecPrompts {
		kinds[i] = p.Kind
	}
	return &results.SpecDecResult{
		PlanHeader: results.SpecDecDoc.Header(r.t0, r.model),
		Settings: results.SpecDecSettings{
			Levels: slices.Clone(plan.Levels), MaxTokens: plan.MaxTokens, NaturalStop: true, Thinking: thinking,
			PromptSet: SpecDecPromptSet, Prompts: kinds, TimeoutS: plan.Timeout.Seconds(),
			SpecDecode: clip.Line(plan.SpecDecode, 120), Client: ClientName, ClientVersion: Version,
		},
		Engine:   r.detected(),
		Levels:   []results.SpecDecLevel{},
		Warnings: []string{},
		Local:    r.planLocal(plan.Simulated),
	}
}

// specDecStage is how the live view says level index (from 0) of levels,
// c users and total requests of up to tokens each: "Speculative decoding,
// level 2 of 3 — concurrency 4 — 6 of 16 requests", "level 2" in a title.
func specDecStage(index, levels, c, total, tokens int) Stage {
	return Stage{Measured: true, Index: index + 1, Users: c, Requests: total, TokensEach: tokens, Name: fmt.Sprintf("level %d", index+1),
		Line: func(done, total int) string {
			return fmt.Sprintf("Speculative decoding, level %d of %d — concurrency %d — %d of %d requests", index+1, levels, c, done, total)
		}}
}

// specLevel runs one level: total requests over c slots, closed loop, each
// request a representative prompt behind its own reference line (so no
// two requests share a cached prefix), the counters read on both sides.
func (r *session) specLevel(ctx context.Context, mc *http.Client, opts requestOpts, plan setup.SpecDecPlan, index, c int, counters bool) results.SpecDecLevel {
	total := specDecRequests(plan, c)
	r.obs.logf("level %d of %d: concurrency %d, %d requests", index+1, len(plan.Levels), c, total)
	live := r.obs.Live.beginStage(specDecStage(index, len(plan.Levels), c, total, opts.maxTokens))
	lv := results.SpecDecLevel{Concurrency: c, Requests: total}
	slots := r.openSlots(ctx, live, true)
	defer slots.close()
	if slots.openFailed > 0 {
		r.warn("at concurrency %d, %d of %d connections could not be opened ahead of the level", c, slots.openFailed, c)
	}
	var before SpecCounters
	beforeOK := false
	if counters {
		before, beforeOK = r.readSpec(ctx, mc)
	}
	lr := slots.run(ctx, loadSpec{total: total, timeout: plan.Timeout, request: func(k int) (requestOpts, int64) {
		// Each prompt behind its own reference line: no two requests
		// share a cached prefix.
		p := SpecDecPrompts[k%len(SpecDecPrompts)]
		o := opts
		o.text = "[ref " + newRef() + "] " + p.Text
		return o, int64(k)
	}})
	start, end := lr.start, lr.end
	lv.Samples = lr.samples()
	var per requestAcceptance
	var (
		lengths         []int
		rates, ttfts    []float64
		tokens, done    int
		src             string
		firstFailureMsg = map[string]bool{}
	)
	for _, o := range lr.outcomes() {
		if o.interrupted {
			lv.Partial = true
			continue
		}
		done++
		if !o.ok() {
			lv.Errors++
			if msg := failure(o); len(lv.Failures) < 3 && !firstFailureMsg[msg] {
				firstFailureMsg[msg] = true
				lv.Failures = append(lv.Failures, msg)
			}
			continue
		}
		lv.OK++
		cnt := countTokens(o)
		per.add(o, cnt.tokens)
		lengths = append(lengths, cnt.tokens)
		tokens += cnt.tokens
		src = worseSource(src, cnt.source)
		if v, ok := cnt.decodeRate(o); ok {
			rates = append(rates, v)
		}
		ttfts = append(ttfts, ms(o.ttft))
	}
	r.obs.Live.endLevel(done)
	if !lv.Partial && end > start {
		r.gpuWindow(c, c, start, end, int64(tokens))
	}
	lv.DurationS = stats.Round3((end - start).Seconds())
	if d := (end - start).Seconds(); d > 0 && lv.OK > 0 {
		lv.OutputTPS = ptr(round1(float64(tokens) / d))
	}
	if len(rates) > 0 {
		sum := 0.0
		for _, v := range rates {
			sum += v
		}
		lv.MeanDecodeTPS = ptr(round1(sum / float64(len(rates))))
	}
	if len(ttfts) > 0 {
		slices.Sort(ttfts)
		lv.TTFTMsP50 = ptr(stats.Round3(stats.Quantile(ttfts, 0.5)))
	}
	lv.OutputTokens = lengthSpread(lengths)
	lv.TokenSource = src
	if lv.Errors > 0 {
		r.warn("at concurrency %d, %d of %d requests failed (first: %s)", c, lv.Errors, done, lv.Failures[0])
	}
	lv.PerRequest = per.result()
	if !counters || ctx.Err() != nil {
		return lv
	}
	defer func() {
		if lv.Spec == nil || lv.Spec.AcceptanceRate == nil || lv.PerRequest == nil || lv.PerRequest.AcceptanceRate == nil {
			return
		}
		a, b := *lv.Spec.AcceptanceRate, *lv.PerRequest.AcceptanceRate
		if math.Abs(a-b) > 0.02 {
			r.warn("at concurrency %d the server's counters say acceptance %.1f %% and the answers' own counts %.1f %%: other traffic on the server during the level, or counters that count otherwise", c, 100*a, 100*b)
		}
	}()
	if !beforeOK {
		lv.Note = "the counters could not be read before the level"
		return lv
	}
	m, err := fetchMetrics(ctx, mc, r.ep, r.base, 5*time.Second)
	if err != nil || !m.Spec.Present {
		lv.Note = "the counters could not be read after the level"
		return lv
	}
	lv.AcceptLengthGauge, lv.AcceptRateGauge = m.Spec.AcceptLength, m.Spec.AcceptRate
	d, ok := m.Spec.Since(before)
	switch {
	case !ok:
		lv.Note = "the counters went backwards (a server restart?), so this level has no acceptance"
	case d.Drafts == 0:
		lv.Spec = specWindow(d)
		lv.Note = "no drafts during the level: speculative decoding looks off"
	default:
		lv.Spec = specWindow(d)
	}
	return lv
}

// requestAcceptance gathers what each answer said about its drafts.
type requestAcceptance struct {
	n                     int
	draftTokens, accepted int64
	drafts                int64
	rates, lengths        []float64
}

// add counts one successful answer of tokens tokens, when it carried
// llama.cpp's draft counts.
func (a *requestAcceptance) add(o *outcome, tokens int) {
	if !o.hasDraft {
		return
	}
	a.n++
	steps := int64(tokens-1) - int64(o.draftAccepted)
	a.draftTokens += int64(o.draftN)
	a.accepted += int64(o.draftAccepted)
	if steps > 0 {
		a.drafts += steps
		a.lengths = append(a.lengths, 1+float64(o.draftAccepted)/float64(steps))
	}
	if o.draftN > 0 {
		a.rates = append(a.rates, float64(o.draftAccepted)/float64(o.draftN))
	}
}

func (a *requestAcceptance) result() *results.RequestAcceptance {
	if a.n == 0 {
		return nil
	}
	out := &results.RequestAcceptance{Source: "timings.draft_n", Requests: a.n, DraftTokens: a.draftTokens, Accepted: a.accepted, Drafts: a.drafts,
		RateSpread: spreadOf(a.rates), LengthSpread: spreadOf(a.lengths)}
	if a.draftTokens > 0 {
		out.AcceptanceRate = ptr(math.Round(float64(a.accepted)/float64(a.draftTokens)*10000) / 10000)
	}
	if a.drafts > 0 {
		out.MeanAcceptanceLength = ptr(math.Round((1+float64(a.accepted)/float64(a.drafts))*1000) / 1000)
	}
	return out
}
