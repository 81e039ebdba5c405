package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
)

// The rate plan (docs/plans.md, "The rate plan"): open-loop load. At each
// offered rate the requests leave on a seeded schedule (engine/pace.go),
// through at most MaxInFlight slots, whatever the server does with the
// ones before; each request's latency is taken from its intended send
// time, so a wait for a slot, or the client's own lateness, counts and
// cannot hide (no coordinated omission).

// rateSweepHalvings is how many times a sweep halves its rate when it
// did not keep up with its first.
const rateSweepHalvings = 3

// rateFailShare is the share of failed requests a rate may have and still
// count as kept up with.
const rateFailShare = 0.05

// rateRun carries one rate plan run.
type rateRun struct {
	*runner
	rp     setup.RatePlan
	wl     *workload
	replay *replay // the trace sent, when the plan replays one
	res    *results.RateResult
	used   int64 // measured requests so far, for the prompt numbers
	base   *results.RateLevel
}

// RunRate runs the rate plan against ep. Like the other plans, it returns
// the result with an error only for an unusable plan or endpoint
// (*PlanError, *EndpointError, *StageError), or, with the rates measured
// so far marked incomplete, for a stop wrapping ErrInterrupted.
func RunRate(ctx context.Context, plan setup.RatePlan, ep setup.Endpoint, obs Observer) (_ *results.RateResult, err error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	plan = plan.WithDefaults()
	schedSeed := plan.Seed
	// A trace is read before the server is touched, like a prompts file:
	// its requests are the plan's one level, the median prompt what
	// calibration sizes and the longest prompt and answer what the
	// context must hold.
	var rp *replay
	if plan.Replay != nil {
		if rp, err = loadReplay(*plan.Replay); err != nil {
			return nil, err
		}
		plan.Requests, plan.InputTokens, plan.OutputTokens = len(rp.reqs), rp.medianIn, max(rp.maxOut, 2)
		plan.Rates = []float64{rp.rate}
	}
	// A prompts file is read and sampled before the server is touched:
	// the same seed samples the same prompts.
	levels := len(plan.Rates)
	if plan.Sweep {
		levels = 16
	}
	wl, err := loadPrompts(ctx, obs.Live, plan.Workload, schedSeed, levels*plan.Requests)
	if err != nil {
		return nil, err
	}
	kp := setup.KovaraPlan{Model: plan.Model, InputTokens: plan.InputTokens, OutputTokens: plan.OutputTokens, Concurrency: []int{plan.MaxInFlight},
		Requests: plan.Requests, Warmup: max(plan.Warmup, 0), Seed: plan.Seed, FixedSeed: plan.FixedSeed, Timeout: plan.Timeout,
		Simulated: plan.Simulated, MetricsInterval: plan.MetricsInterval}
	// Prompts fresh unless the seed is fixed (startRunner); the schedule
	// keeps the plan's seed, so the same seed sends at the same times.
	ctx, rn, done, err := startRunner(ctx, kp, ep, obs, results.PlanRate)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	r := &rateRun{runner: rn, rp: plan, wl: wl, replay: rp}
	r.extra = plan.Workload.ExtraTokens(plan.InputTokens, plan.OutputTokens)
	if rp != nil {
		r.extra = rp.maxIn - plan.InputTokens
	}
	r.warmUsers = 1 // warmup one by one: the rates are the load
	if plan.Sweep {
		obs.Live.start(r.clock, 0, 0)
	} else {
		obs.Live.start(r.clock, len(plan.Rates), len(plan.Rates)*plan.Requests)
	}
	checks := r.expectPrep(wl)
	defer r.release()
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	// The system prompts take the prompts' seed, fresh unless --seed is
	// given, as the questions do: a server's cache has not seen them from
	// an earlier run.
	wl.seed = r.plan.Seed
	wl.prepare(r.tokensPerWord())
	if rp != nil {
		tpw, overhead, turn, ok := r.replayProbe(ctx)
		if !ok {
			tpw, overhead, turn = r.tokensPerWord(), 0, 0
		}
		rp.prepare(r.plan.Seed, tpw, overhead, turn)
		if rp.counter = r.newTokenCounter(); rp.counter != nil {
			defer rp.counter.close()
		}
		if rp.wantsAnthropic() {
			rp.anthropic, rp.noAnthropic = r.anthropicProbe(ctx)
		}
		r.obs.logf("replaying %d requests of the trace over %s: its prompts made at %.2f tokens a word, with %d tokens of chat template and %d more a turn", len(rp.reqs), results.Seconds(rp.spanS*1000/rp.r.SpeedOr1()), tpw, overhead, turn)
	}
	r.res = r.newResult(schedSeed)
	if checks > 0 {
		first := prompt.FirstWarmupRequest + int64(r.plan.Warmup) + r.used
		pc, next, err := r.prefixCheck(ctx, wl, first, plan.Timeout)
		r.used += next - first
		if err != nil {
			r.obs.Live.setPhase(PhaseStopped)
			return r.finish(false), err
		}
		r.res.Prefix = pc
		r.res.Settings.Workload = wl.settings() // the words, as the check settled them
		r.obs.Live.prepared(checks)
		r.obs.logf("%s", pc.Words())
	}
	if det := r.detection; det != nil && det.ParallelSlots > 0 && plan.MaxInFlight > det.ParallelSlots {
		r.obs.logf("the server serves %d requests at a time (%s); up to %d may be in flight, so the rest queue inside the server",
			det.ParallelSlots, det.ParallelSource, plan.MaxInFlight)
	}
	if plan.Sweep {
		err = r.sweep(ctx)
	} else {
		for i, rate := range plan.Rates {
			if _, err = r.level(ctx, i, len(plan.Rates), rate); err != nil {
				break
			}
		}
	}
	if err != nil {
		r.obs.Live.setPhase(PhaseStopped)
		return r.finish(false), err
	}
	r.obs.Live.setPhase(PhaseDone)
	return r.finish(true), nil
}

func (r *rateRun) newResult(schedSeed int64) *results.RateResult {
	p := r.rp
	s := results.RateSettings{
		Rates: slices.Clone(p.Rates), Sweep: p.Sweep, Arrival: p.Arrival, Burstiness: p.Burstiness, MaxInFlight: p.MaxInFlight,
		Requests: p.Requests, InputTokens: p.InputTokens, OutputTokens: p.OutputTokens, Warmup: r.plan.Warmup,
		ScheduleSeed: schedSeed, PromptGenerator: prompt.Generator, Seed: r.plan.Seed, TimeoutS: p.Timeout.Seconds(),
		Client: ClientName, ClientVersion: Version,
	}
	if p.Sweep {
		s.SweepFrom, s.SweepMax = p.SweepFrom, p.SweepMax
	}
	s.SLO = sloOf(p.SLO)
	s.Workload = r.wl.settings()
	local := r.planLocal(p.Simulated)
	local.PromptsFile = p.Workload.PromptsFile
	if r.replay != nil {
		// A trace's own times, not a drawn schedule.
		s.Arrival, s.Burstiness = results.ArrivalTrace, 0
		local.TraceFile = p.Replay.File
	}
	return &results.RateResult{
		PlanHeader: results.RateDoc.Header(r.t0, r.model),
		Settings:   s,
		Engine:     r.detected(),
		Levels:     []results.RateLevel{},
		Warnings:   []string{},
		Local:      local,
	}
}

// finish settles what the run leaves beside its levels.
func (r *rateRun) finish(complete bool) *results.RateResult {
	res := r.res
	if res == nil {
		return nil
	}
	res.Complete = complete
	res.ServerModel = r.srvModel
	res.Engine = r.detected()
	res.Warnings = r.settlePlan(&res.Local, &res.Compat, &res.Settings.IgnoreEOS)
	for _, l := range res.Sorted() {
		if s := l.QueueWords(res.Settings.MaxInFlight); s != "" && l.QueueGrew {
			res.Warnings = append(res.Warnings, s)
		}
		if s := l.ServerQueueWords(res.Engine); s != "" {
			res.Warnings = append(res.Warnings, s)
		}
		if s := l.LateWords(); s != "" {
			res.Warnings = append(res.Warnings, s)
		}
	}
	return res
}

// sweep finds the highest sustainable rate: doubling from SweepFrom until
// a rate is not kept up with (or SweepMax), then RateSweepRefine
// bisections between the last rate kept up with and the first that was
// not (docs/plans.md, "The sweep").
func (r *rateRun) sweep(ctx context.Context) error {
	p := r.rp
	from := p.SweepFrom
	if from == 0 {
		var err error
		if from, err = r.sweepStart(ctx); err != nil {
			return err
		}
		r.res.Settings.SweepFrom = from
	}
	doubling := 0
	for x := from; x <= p.SweepMax*1.0001; x *= 2 {
		doubling++
	}
	sw := &results.RateSweep{}
	r.res.Sweep = sw
	index := 0
	for x := from; x <= p.SweepMax*1.0001; x *= 2 {
		r.obs.Live.expectStages(index, doubling-index+setup.RateSweepRefine)
		lv, err := r.level(ctx, index, 0, x)
		index++
		if err != nil {
			return err
		}
		if !lv.Sustained {
			sw.Limit, sw.Reason = x, lv.Verdict
			break
		}
		sw.Sustainable = x
	}
	// Not even the first rate: halve down, a few times, to one it keeps
	// up with, so the curve has a rate below the limit.
	for halve := 0; sw.Sustainable == 0 && sw.Limit > 0 && halve < rateSweepHalvings; halve++ {
		x := roundRate(sw.Limit / 2)
		if x < setup.RateMinRate {
			break
		}
		r.obs.Live.expectStages(index, 1+setup.RateSweepRefine)
		lv, err := r.level(ctx, index, 0, x)
		index++
		if err != nil {
			return err
		}
		if lv.Sustained {
			sw.Sustainable = x
		} else {
			sw.Limit, sw.Reason = x, lv.Verdict
		}
	}
	if sw.Limit == 0 || sw.Sustainable == 0 {
		return nil
	}
	for step := range setup.RateSweepRefine {
		r.obs.Live.expectStages(index, setup.RateSweepRefine-step)
		mid := roundRate((sw.Sustainable + sw.Limit) / 2)
		if mid <= sw.Sustainable || mid >= sw.Limit {
			break
		}
		lv, err := r.level(ctx, index, 0, mid)
		index++
		if err != nil {
			return err
		}
		if lv.Sustained {
			sw.Sustainable = mid
		} else {
			sw.Limit, sw.Reason = mid, lv.Verdict
		}
	}
	return nil
}

// sweepStart times one request alone, unmeasured, and gives half the
// rate one request at a time keeps up with: a server that serves one
// request at a time (Ollama's default) keeps up with it, and one with
// more slots is found above it in a few doublings.
func (r *rateRun) sweepStart(ctx context.Context) (float64, error) {
	p := r.rp
	cn := r.newConn()
	defer cn.close()
	n := prompt.FirstWarmupRequest + int64(r.plan.Warmup) + r.used
	r.used++
	o := cn.do(ctx, r.opts, n, p.Timeout)
	if ctx.Err() != nil {
		return 0, fmt.Errorf("timing one request for the sweep's start: %w", ErrInterrupted)
	}
	if !o.ok() || o.end <= o.start {
		r.warn("the request timed to choose the sweep's start failed (%s): the sweep starts at %s", failure(&o), results.RateName(setup.RateSweepFrom))
		return min(setup.RateSweepFrom, p.SweepMax/2), nil
	}
	from := roundRate(0.5 / (o.end - o.start).Seconds())
	from = min(max(from, setup.RateMinRate), p.SweepMax/2)
	r.obs.logf("one request alone took %s: the sweep starts at %s", results.Seconds(ms(o.end-o.start)), results.RateName(from))
	return from, nil
}

// roundRate keeps a bisected rate to three significant figures.
func roundRate(x float64) float64 {
	if x <= 0 {
		return x
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(x)))
	return math.Round(x*p) / p
}

// rateStage is how the live view says rate index (from 0) of n (0 in a
// sweep): "Rate 2 of 3 — 4 req/s offered, poisson, up to 64 in flight —
// 10 of 64 requests", "4 req/s" in a title.
func rateStage(index, n int, rate float64, p setup.RatePlan) Stage {
	where := fmt.Sprintf("Rate %d of %d", index+1, n)
	if n == 0 {
		where = fmt.Sprintf("Sweep, rate %d", index+1)
	}
	head := fmt.Sprintf("%s — %s offered, %s, up to %d in flight", where, results.RateName(rate), p.Arrival, p.MaxInFlight)
	if p.Replay != nil {
		head = fmt.Sprintf("Replaying a trace — %s offered on average, at its recorded times, up to %d in flight", results.RateName(rate), p.MaxInFlight)
	}
	return Stage{Measured: true, Index: index + 1, Users: p.MaxInFlight, Requests: p.Requests, TokensEach: p.OutputTokens,
		Name: results.RateName(rate), Line: func(done, total int) string { return fmt.Sprintf("%s — %d of %d requests", head, done, total) }}
}

// level measures one offered rate and keeps it in the result; err wraps
// ErrInterrupted on a stop (the level kept as partial).
func (r *rateRun) level(ctx context.Context, index, n int, rate float64) (*results.RateLevel, error) {
	p := r.rp
	if r.replay != nil {
		r.obs.logf("the trace: %d requests at their recorded times, %s on average, up to %d in flight", p.Requests, results.RateName(rate), p.MaxInFlight)
	} else {
		r.obs.logf("rate %s: %d requests, %s arrivals, up to %d in flight", results.RateName(rate), p.Requests, p.Arrival, p.MaxInFlight)
	}
	sched := NewSchedule(p.Arrival, rate, p.Burstiness, p.Requests, r.res.Settings.ScheduleSeed)
	var pace Pacer = sched
	var ended func(int, *outcome, []byte)
	if r.replay != nil {
		pace, ended = r.replay.pacer(), r.replay.ended
	}
	// Slots connect on their first request, as an open-loop client's
	// users do (vLLM's bench serve, guidellm): opened ahead, the cap's
	// 64 idle connections each held one of llama-server's few HTTP
	// threads (b4748 -np 4: 46 of 64 not opened, its /metrics unread
	// for 16 s). The connecting is counted in the latency from the
	// intended send and said apart (ConnectMs).
	set := r.openSlots(ctx, r.obs.Live.beginStage(rateStage(index, n, rate, p)), false)
	defer set.close()
	if r.replay != nil {
		for _, c := range set.conns {
			c.details = true // a turn's answer is the next turn's history
		}
	}
	first := prompt.FirstWarmupRequest + int64(r.plan.Warmup) + r.used
	r.used += int64(p.Requests)
	opts := r.opts
	before, _ := r.readPrefix(ctx)
	lr := set.run(ctx, loadSpec{total: p.Requests, timeout: p.Timeout, pace: pace, ended: ended, shape: r.wl.loop(set), request: func(k int) (requestOpts, int64) {
		if r.replay != nil {
			return r.replay.opts(opts, k), first + int64(k)
		}
		return opts, first + int64(k)
	}})
	if r.replay != nil {
		r.res.Replay = r.replay.match(&lr, first)
	}
	lv := rateLevel(rate, &lr, p.Requests, r.res.Settings.SLO)
	if lv.Cache == nil {
		lv.Cache = r.counterCache(ctx, before, lv.Requests)
	}
	finished := lv.Requests
	r.obs.Live.endLevel(finished)
	if lv.Partial || ctx.Err() != nil {
		lv.Partial = true
		r.res.Levels = append(r.res.Levels, lv)
		return &r.res.Levels[len(r.res.Levels)-1], fmt.Errorf("rate %s: %w", results.RateName(rate), ErrInterrupted)
	}
	if !lv.Partial && lr.end > lr.start {
		var tokens int64
		for _, o := range lr.outcomes() {
			if o.ok() {
				tokens += int64(countTokens(o).tokens)
			}
		}
		r.gpuWindow(index+1, p.MaxInFlight, lr.start, lr.end, tokens)
	}
	if index == 0 {
		// The model is loaded now: where the server put it.
		r.learnPlacement(ctx)
	}
	lv.Sustained, lv.Verdict = judgeRate(&lv, r.base)
	if n := lv.Requests - lv.OK; n > 0 && len(lv.Failures) > 0 {
		r.obs.logf("at %s, %d of %d requests failed (first: %s)", results.RateName(rate), n, lv.Requests, lv.Failures[0])
	}
	r.res.Levels = append(r.res.Levels, lv)
	out := &r.res.Levels[len(r.res.Levels)-1]
	// The lowest rate measured is the baseline; found again each time,
	// since append may move Levels.
	r.base = r.res.Sorted()[0]
	return out, nil
}

// rateLevel is one offered rate's figures from its loop: every latency
// from the intended send, the wait for a slot and the client's own
// lateness apart, and goodput against slo (nil: none).
func rateLevel(rate float64, lr *loadRun, total int, slo *results.RateSLO) results.RateLevel {
	lv := results.RateLevel{Rate: rate}
	samples := lr.samples()
	due, tried := map[[2]int64]int64{}, map[[2]int64]int64{}
	seen := map[string]bool{}
	for si := range lr.slots {
		for i := range lr.slots[si].outs {
			o := &lr.slots[si].outs[i]
			if o.interrupted {
				lv.Partial = true
				continue
			}
			key := [2]int64{int64(si), us(o.start)}
			due[key] = us(o.due)
			if i < len(lr.slots[si].tried) {
				tried[key] = us(lr.slots[si].tried[i])
			}
			if !o.ok() {
				if msg := failure(o); len(lv.Failures) < 3 && !seen[msg] {
					seen[msg] = true
					lv.Failures = append(lv.Failures, msg)
				}
			}
		}
	}
	rs := &results.RateSamples{LevelSamples: *samples, DueUs: make([]int64, len(samples.Requests)), TriedUs: make([]int64, len(samples.Requests))}
	for i, q := range samples.Requests {
		key := [2]int64{int64(q.Slot), q.StartUs}
		rs.DueUs[i] = due[key]
		rs.TriedUs[i] = tried[key]
	}
	lv.Samples = rs
	if len(samples.Requests) < total {
		lv.Partial = true
	}
	rateFigures(&lv, slo)
	workloadFigures(&lv, lr)
	return lv
}

// rateFigures fills a level's figures from its samples.
func rateFigures(lv *results.RateLevel, slo *results.RateSLO) {
	reqs := lv.Samples.Each()
	lv.Requests = len(reqs)
	if len(reqs) == 0 {
		return
	}
	slices.SortStableFunc(reqs, func(a, b results.RateRequest) int { return int(a.IntendedUs - b.IntendedUs) })
	var lat, ttft, tpot, late, queue, connect, wait []float64
	var tokens, met int
	firstDue, lastEnd := reqs[0].IntendedUs, int64(0)
	firstSent, lastSent := reqs[0].SentUs, reqs[0].SentUs
	for _, q := range reqs {
		lastEnd = max(lastEnd, q.EndUs)
		firstSent, lastSent = min(firstSent, q.SentUs), max(lastSent, q.SentUs)
		late = append(late, q.LatenessMs())
		queue, connect, wait = append(queue, q.QueueMs()), append(connect, q.ConnectMs()), append(wait, q.WaitMs())
		if q.WaitMs() > results.RateQueuedMs {
			lv.Queued++
		}
		if q.ConnectMs() > results.RateQueuedMs {
			lv.Connecting++
		}
		if q.Error != "" {
			continue
		}
		lv.OK++
		tokens += q.Tokens
		lat = append(lat, q.LatencyMs())
		if v := q.TTFTMs(); v >= 0 {
			ttft = append(ttft, v)
		}
		if v := q.TPOTMs(); v >= 0 {
			tpot = append(tpot, v)
		}
		if slo != nil && slo.Met(q) {
			met++
		}
	}
	lv.QueueGrew = grows(reqs, results.RateRequest.WaitMs, 0, lv.Rate)
	lv.LatencyGrew = grows(reqs, results.RateRequest.LatencyMs, 2, lv.Rate)
	lv.PeakInFlight = peakInFlight(reqs)
	span := float64(lastEnd-firstDue) / 1e6
	if span > 0 {
		lv.AchievedRate = round3(float64(lv.OK) / span)
		lv.OutputTPS = round1(float64(tokens) / span)
	}
	if d := float64(lastSent-firstSent) / 1e6; d > 0 && len(reqs) > 1 {
		lv.SentRate = round3(float64(len(reqs)-1) / d)
	}
	lv.LatencyMs, lv.TTFTMs, lv.TPOTMs = stats.Summarize(lat), stats.Summarize(ttft), stats.Summarize(tpot)
	lv.LatenessMs, lv.QueueMs = stats.Summarize(late), stats.Summarize(queue)
	lv.ConnectMs, lv.WaitMs = stats.Summarize(connect), stats.Summarize(wait)
	if slo != nil {
		lv.Goodput = &results.Goodput{Met: met, Share: round3(float64(met) / float64(len(reqs)))}
		if span > 0 {
			lv.Goodput.Rate = round3(float64(met) / span)
		}
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// grows says whether a figure grew through a level: its median over the
// last quarter of the requests (by intended send) is above the first
// quarter's by RateGrowthMs and two intervals of the rate, and, with
// factor above 0, at least factor times it.
func grows(reqs []results.RateRequest, f func(results.RateRequest) float64, factor, rate float64) bool {
	a, b, ok := results.QuarterMedians(reqs, f)
	if !ok || b-a <= max(results.RateGrowthMs, 2000/rate) {
		return false
	}
	return factor <= 0 || b >= factor*a
}

// peakInFlight is the most requests in flight at once, each from its
// send to its end.
func peakInFlight(reqs []results.RateRequest) int {
	spans := make([][2]int64, len(reqs))
	for i, q := range reqs {
		spans[i] = [2]int64{q.SentUs, q.EndUs}
	}
	return results.MostAtOnce(spans)
}

// judgeRate says whether the server kept up with a level's rate, and
// why not in words: too many failures, a queue for the slots that kept
// growing, latency that kept growing through the level (a queue inside
// the server), a median latency twice the lowest rate's (base), or
// goodput under the service level.
func judgeRate(lv *results.RateLevel, base *results.RateLevel) (bool, string) {
	var why []string
	switch {
	case lv.OK == 0:
		why = append(why, "no request succeeded")
	case float64(lv.Requests-lv.OK) > rateFailShare*float64(lv.Requests):
		why = append(why, fmt.Sprintf("%d of %d requests failed", lv.Requests-lv.OK, lv.Requests))
	}
	if lv.QueueGrew && lv.WaitMs != nil {
		why = append(why, fmt.Sprintf("requests queued and the queue kept growing: they waited up to %s before they were sent", results.Seconds(lv.WaitMs.Max)))
	}
	if lv.LatencyGrew && !lv.QueueGrew {
		w := lv.GrowthWords()
		if w == "" {
			w = "latency kept growing through the level: requests queued inside the server"
		}
		why = append(why, w)
	}
	if base != nil && base != lv && base.Rate < lv.Rate && base.LatencyMs != nil && lv.LatencyMs != nil && lv.LatencyMs.P50 >= 2*base.LatencyMs.P50 {
		why = append(why, fmt.Sprintf("the median latency doubled against %s (%s to %s)", results.RateName(base.Rate), results.Seconds(base.LatencyMs.P50), results.Seconds(lv.LatencyMs.P50)))
	}
	if g := lv.Goodput; g != nil && g.Share < results.RateGoodputShare {
		why = append(why, fmt.Sprintf("only %.0f %% of requests met the service level (%.0f %% must)", g.Share*100, results.RateGoodputShare*100))
	}
	if len(why) == 0 {
		return true, ""
	}
	return false, strings.Join(why, "; ")
}
