package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
)

// messagesPerClass bounds how many distinct error messages a level keeps.
const messagesPerClass = 3

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// record turns a level's outcomes into its published run record and its
// local detail. The metrics come from the level's samples (levelMetrics),
// as a merge of shards computes them; the outcomes give what the samples
// do not keep (messages, reasoning, merged reads, connections).
func (r *runner) record(lv *levelRun) (results.Run, results.LevelLocal) {
	loc := results.LevelLocal{
		Concurrency: lv.concurrency,
		Errors:      map[string]int{},
		Messages:    map[string][]string{},
		StartedAt:   r.t0.Add(lv.start).UTC().Format(time.RFC3339),
	}
	var (
		tta            []float64
		reasoningFirst int
		sameRead       int
		gaps           int
	)
	var oks []*outcome
	for si := range lv.slots {
		s := &lv.slots[si]
		for i := range s.outs {
			o := &s.outs[i]
			switch {
			case o.interrupted:
				continue
			case o.ok():
				oks = append(oks, o)
				gaps += o.itlTo - o.itlFrom
				sameRead += o.sameRead
				if o.reasoning {
					reasoningFirst++
					if o.ttfa >= 0 {
						tta = append(tta, ms(o.ttfa))
					}
				}
			default:
				loc.Errors[o.class]++
				addMessage(loc.Messages, o.class, o.msg)
			}
		}
	}
	loc.Samples = lv.samples()
	// The samples were encoded just now: they always decode.
	m, honoured, tpot, _ := levelMetrics(loc.Samples, r.plan.OutputTokens, r.usage)
	var h *bool
	if m.RequestsOK > 0 && m.TokenCountMethod == results.TokenCountServerUsage && r.opts.ignoreEOS {
		h = &honoured
	}
	if reasoningFirst > 0 {
		loc.ReasoningFirst = reasoningFirst
		loc.TTFAMs = stats.Summarize(tta)
	}
	if len(loc.Messages) == 0 {
		loc.Messages = nil
	}
	loc.Gaps, loc.MergedGaps = gaps, sameRead
	loc.PromptCache = requestCache(oks)
	if loc.PromptCache == nil && lv.prefixOK {
		loc.PromptCache = &results.PromptCache{CachedTokens: lv.prefixCached, PromptTokens: lv.prefixPrompt,
			Requests: len(loc.Samples.Requests), Source: results.CacheFromMetrics, Metrics: lv.prefixNames}
	}
	if pc := loc.PromptCache; pc != nil && r.sharedOK {
		s := r.shared
		pc.SharedTokens = &s
	}
	r.stamps.KernelStamped += lv.conns.KernelStamped
	r.stamps.ReadStamped += lv.conns.ReadStamped
	if c := lv.conns; c.Reconnects+c.Resent+c.ServerClosed+c.Connected > 0 {
		loc.Connections = &results.Connections{Reconnects: c.Reconnects, Resent: c.Resent, ServerClosed: c.ServerClosed, Requests: len(loc.Samples.Requests), Connected: c.Connected}
	}
	loc.Goodput = levelGoodput(loc.Samples, sloOf(r.plan.SLO), m.TokenCountMethod == results.TokenCountServerUsage)
	loc.ByTurn = byTurn(&lv.loadRun)
	run := r.conditions(lv.concurrency)
	run.Requests = lv.requests
	run.Metrics = m
	lv.tpot = tpot
	run.Environment = r.environment(h)
	return run, loc
}

// levelMetrics is a level's published metrics computed from its samples:
// the one place they are, for a run's own levels (record) and for shards'
// levels pooled (Merge). Only successes enter the distributions and the
// throughput, over the level's window. Tokens are the server's usage when
// every success carried it, else text chunks; with no success, usage says
// which the server would have given. honoured is whether every success's
// usage said exactly outputTokens; tpot is each success's time per output
// token after the first, ms.
func levelMetrics(s *results.LevelSamples, outputTokens int, usage bool) (m results.Metrics, honoured bool, tpot []float64, err error) {
	ok, errs, timeouts, gaps := 0, 0, 0, 0
	for _, q := range s.Requests {
		switch {
		case q.OK():
			ok++
			gaps += max(q.ChunkCount-1, 0)
		case q.Error == ClassTimeout:
			timeouts++
		default:
			errs++
		}
	}
	method := results.TokenCountServerUsage
	if (ok > 0 && !s.AllUsage()) || (ok == 0 && !usage) {
		method = results.TokenCountStreamChunks
	}
	byUsage := method == results.TokenCountServerUsage
	ttft, lat := make([]float64, 0, ok), make([]float64, 0, ok)
	// The level's gaps are its biggest sample: sized once, float32 to
	// halve it.
	itl := make([]float32, 0, gaps)
	var (
		buf           []int64
		outSum, inSum float64
	)
	honoured = true
	for i, q := range s.Requests {
		if !q.OK() {
			continue
		}
		ttft = append(ttft, usMs(q.TTFTUs))
		lat = append(lat, usMs(q.LatencyUs()))
		if buf, err = results.DecodeGaps(buf[:0], q.Gaps); err != nil {
			return m, false, nil, fmt.Errorf("request %d of the level: %w", i+1, err)
		}
		for _, g := range buf {
			itl = append(itl, float32(g)/1000)
		}
		n := q.OutputTokens(byUsage)
		if byUsage {
			inSum += float64(q.PromptTokens)
			if q.CompletionTokens != outputTokens {
				honoured = false
			}
		}
		outSum += float64(n)
		if n >= 2 {
			tpot = append(tpot, usMs(q.LatencyUs()-q.TTFTUs)/float64(n-1))
		}
	}
	dur := float64(s.EndUs-s.StartUs) / 1e6
	m = results.Metrics{
		RequestsOK:       ok,
		RequestsError:    errs,
		RequestsTimeout:  timeouts,
		DurationS:        stats.Round3(dur),
		TokenCountMethod: method,
		TTFTMs:           stats.Summarize(ttft),
		ITLMs:            stats.Summarize(itl),
		LatencyMs:        stats.Summarize(lat),
		TPOTMs:           stats.Summarize(tpot),
	}
	if dur > 0 {
		m.RequestThroughput = stats.Round3(float64(ok) / dur)
		m.OutputThroughput = stats.Round3(outSum / dur)
	}
	if ok > 0 {
		v := stats.Round3(outSum / float64(ok))
		m.OutputTokensMean = &v
		if byUsage {
			in := stats.Round3(inSum / float64(ok))
			m.InputTokensMean = &in
		}
	}
	return m, honoured, tpot, nil
}

// levelGoodput is how many of a level's requests met the service level,
// each judged on its own TTFT and TPOT (results.RateSLO.Met, the rate
// plan's rule), their share of the requests the level finished, failures
// included, and their rate over the level's window (as its request
// throughput); nil without a service level. byUsage counts tokens as
// levelMetrics does.
func levelGoodput(s *results.LevelSamples, slo *results.RateSLO, byUsage bool) *results.Goodput {
	if slo == nil || s == nil {
		return nil
	}
	g := &results.Goodput{}
	for _, q := range s.Requests {
		first := int64(-1)
		if q.TTFTUs >= 0 {
			first = q.StartUs + q.TTFTUs
		}
		// Closed loop: each request is due when it is sent.
		rq := results.RateRequest{IntendedUs: q.StartUs, FreeUs: q.StartUs, TriedUs: q.StartUs, SentUs: q.StartUs, FirstUs: first, EndUs: q.EndUs,
			Tokens: q.OutputTokens(byUsage), Error: q.Error}
		if slo.Met(rq) { // false for a failure
			g.Met++
		}
	}
	if n := len(s.Requests); n > 0 {
		g.Share = stats.Round3(float64(g.Met) / float64(n))
	}
	if dur := float64(s.EndUs-s.StartUs) / 1e6; dur > 0 {
		g.Rate = stats.Round3(float64(g.Met) / dur)
	}
	return g
}

// sloOf is a plan's service level as a results file keeps it, nil when
// none was given.
func sloOf(s setup.RateSLO) *results.RateSLO {
	if !s.Set() {
		return nil
	}
	return &results.RateSLO{TTFTMs: s.TTFTMs, TPOTMs: s.TPOTMs, UserTPS: s.UserTPS}
}

// usMs is a sample's µs in ms.
func usMs(us int64) float64 { return float64(us) / 1000 }

func addMessage(m map[string][]string, class, msg string) {
	if msg == "" {
		return
	}
	for _, x := range m[class] {
		if x == msg {
			return
		}
	}
	if len(m[class]) < messagesPerClass {
		m[class] = append(m[class], msg)
	}
}

// conditions fills the run record's conditions: from the manifest for a
// hardware run, null for a protocol test.
func (r *runner) conditions(concurrency int) results.Run {
	run := results.Run{
		RunKind:      results.RunKindProtocol,
		Evidence:     results.EvidenceSelfReported,
		ModelID:      r.model,
		InputTokens:  r.plan.InputTokens,
		OutputTokens: r.plan.OutputTokens,
		Concurrency:  concurrency,
		Requests:     r.plan.Requests,
		Warmup:       r.plan.Warmup,
		Seed:         r.plan.Seed,
	}
	if c := r.plan.Conditions; c != nil {
		run.RunKind = results.RunKindHardware
		run.ModelID = c.ModelID
		run.ModelRevision = strPtr(c.ModelRevision)
		run.Engine = strPtr(c.Engine)
		run.EngineVersion = strPtr(c.EngineVersion)
		run.Accelerator = strPtr(c.Accelerator)
		if c.GPUCount > 0 {
			g := c.GPUCount
			run.GPUCount = &g
		}
		run.Precision = strPtr(c.Precision)
		run.Profile = strPtr(c.Profile)
	}
	return run
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// requestCache sums what the server said, request by request, about the
// prompt tokens it took from its cache: usage's cached_tokens where the
// successes carry it, else llama.cpp's timings.cache_n (whose prompt_n
// counts only the tokens it evaluated). Nil when no success said.
func requestCache(oks []*outcome) *results.PromptCache {
	var usage, timings, promptN results.PromptCache
	usage.Source, timings.Source, promptN.Source = results.CacheFromUsage, results.CacheFromTimings, results.CacheFromPromptN
	for _, o := range oks {
		if o.hasCached && o.promptTok > 0 {
			usage.Requests++
			usage.CachedTokens += int64(o.cachedTok)
			usage.PromptTokens += int64(o.promptTok)
		}
		if o.hasCacheN {
			timings.Requests++
			timings.CachedTokens += int64(o.timingsCache)
			timings.PromptTokens += int64(o.timingsCache + o.timingsIn)
		}
		if c, ok := o.cacheFromPromptN(); ok {
			promptN.Requests++
			promptN.CachedTokens += int64(c)
			promptN.PromptTokens += int64(o.promptTok)
		}
	}
	switch {
	case usage.Requests > 0 && usage.Requests >= timings.Requests:
		return &usage
	case timings.Requests > 0:
		return &timings
	case promptN.Requests > 0:
		return &promptN
	}
	return nil
}

// cacheFromPromptN is the prompt tokens an older llama.cpp build (b4748,
// no cached_tokens and no cache_n) took from its slot's cache: its usage's
// prompt_tokens less the timings.prompt_n it evaluated. ok is false when
// the answer said its cache another way, or not enough to tell.
func (o *outcome) cacheFromPromptN() (int, bool) {
	if o.hasCached || o.hasCacheN || !o.hasTimings || !o.hasUsage || o.promptTok <= 0 || o.timingsIn <= 0 || o.timingsIn > o.promptTok {
		return 0, false
	}
	return o.promptTok - o.timingsIn, true
}

// us is a duration in whole microseconds, the samples' unit.
func us(d time.Duration) int64 { return d.Round(time.Microsecond).Microseconds() }

// sampleTimes are a request's send and end offsets and its TTFT (-1 for
// none) in whole microseconds. The end is rounded as the send plus the
// latency, not on its own: rounded apart, a request whose last token came
// with its first (one packet) could end a microsecond before its first
// token, and its TPOT come out negative (seen on a loaded machine).
func sampleTimes(start, end, ttft time.Duration) (startUs, endUs, ttftUs int64) {
	startUs, endUs, ttftUs = us(start), us(start)+us(end-start), -1
	if ttft >= 0 {
		ttftUs = us(ttft)
	}
	return startUs, endUs, ttftUs
}

// samples keeps every finished request of the level, successes and
// failures, for the local part of the document (results.LevelSamples);
// a request the stop cut short is no measurement and is left out, as
// record leaves it out.
func (lv *loadRun) samples() *results.LevelSamples {
	out := &results.LevelSamples{StartUs: us(lv.start), EndUs: us(lv.end), Slots: len(lv.slots)}
	var gaps []int64
	for si := range lv.slots {
		s := &lv.slots[si]
		for i := range s.outs {
			o := &s.outs[i]
			if o.interrupted {
				continue
			}
			rs := results.RequestSample{Slot: si, ChunkCount: o.chunks, Error: o.class, Turn: o.turn}
			rs.CutShort = o.cutShort()
			rs.StartUs, rs.EndUs, rs.TTFTUs = sampleTimes(o.start, o.end, o.ttft)
			// The level's end, rounded on its own, may fall a microsecond
			// before its last request's.
			out.EndUs = max(out.EndUs, rs.EndUs)
			if o.hasUsage {
				rs.Usage, rs.CompletionTokens, rs.PromptTokens = true, o.complTok, o.promptTok
			}
			if c, ok := sharedTokens(*o); ok {
				rs.CachedTokens = c
			}
			// Gaps as differences of the rounded arrival times, so their
			// rounding never adds up along a long answer.
			gaps = gaps[:0]
			var sum float64
			var prev int64
			for _, g := range s.itl[o.itlFrom:o.itlTo] {
				sum += float64(g) * 1000
				at := int64(math.Round(sum))
				gaps = append(gaps, at-prev)
				prev = at
			}
			rs.Gaps = results.EncodeGaps(gaps)
			out.Requests = append(out.Requests, rs)
		}
	}
	// In the order they were sent: what a timeline and a merge read.
	slices.SortStableFunc(out.Requests, func(a, b results.RequestSample) int { return cmp.Compare(a.StartUs, b.StartUs) })
	return out
}
