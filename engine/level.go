package engine

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// messagesPerClass bounds how many distinct error messages a level keeps.
const messagesPerClass = 3

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// record turns a level's outcomes into its published run record and its
// local detail. Only successes enter distributions and throughput.
func (r *runner) record(lv *levelRun) (results.Run, results.LevelLocal) {
	loc := results.LevelLocal{
		Concurrency: lv.concurrency,
		Errors:      map[string]int{},
		Messages:    map[string][]string{},
		StartedAt:   r.t0.Add(lv.start).UTC().Format(time.RFC3339),
	}
	var (
		ok, errs, timeouts   int
		ttft, lat, tpot, tta []float64
		itl                  []float32
		allUsage             = true
		honoured             = true
		outSum, inSum        float64
		reasoningFirst       int
		sameRead             int
	)
	// The merged gaps are the level's biggest sample: size it once.
	gaps := 0
	for _, s := range lv.slots {
		gaps += len(s.itl)
	}
	itl = make([]float32, 0, gaps)
	var oks []*outcome
	for si := range lv.slots {
		s := &lv.slots[si]
		for i := range s.outs {
			o := &s.outs[i]
			switch {
			case o.interrupted:
				continue
			case o.ok():
				ok++
				oks = append(oks, o)
				if !o.hasUsage {
					allUsage = false
				}
				ttft = append(ttft, ms(o.ttft))
				lat = append(lat, ms(o.end-o.start))
				itl = append(itl, s.itl[o.itlFrom:o.itlTo]...)
				sameRead += o.sameRead
				if o.reasoning {
					reasoningFirst++
					if o.ttfa >= 0 {
						tta = append(tta, ms(o.ttfa))
					}
				}
			case o.class == ClassTimeout:
				timeouts++
				loc.Errors[o.class]++
				addMessage(loc.Messages, o.class, o.msg)
			default:
				errs++
				loc.Errors[o.class]++
				addMessage(loc.Messages, o.class, o.msg)
			}
		}
	}
	// server_usage only when every success carried usage; with no
	// success, say what the server would have given.
	method := results.TokenCountServerUsage
	if (ok > 0 && !allUsage) || (ok == 0 && !r.usage) {
		method = results.TokenCountStreamChunks
	}
	for _, o := range oks {
		n := o.chunks
		if method == results.TokenCountServerUsage {
			n = o.complTok
			inSum += float64(o.promptTok)
			if o.complTok != r.plan.OutputTokens {
				honoured = false
			}
		}
		outSum += float64(n)
		if n >= 2 {
			tpot = append(tpot, ms(o.end-o.start-o.ttft)/float64(n-1))
		}
	}
	dur := (lv.end - lv.start).Seconds()
	m := results.Metrics{
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
		if method == results.TokenCountServerUsage {
			in := stats.Round3(inSum / float64(ok))
			m.InputTokensMean = &in
		}
	}
	var h *bool
	if ok > 0 && method == results.TokenCountServerUsage && r.opts.ignoreEOS {
		h = &honoured
	}
	if reasoningFirst > 0 {
		loc.ReasoningFirst = reasoningFirst
		loc.TTFAMs = stats.Summarize(tta)
	}
	if len(loc.Messages) == 0 {
		loc.Messages = nil
	}
	loc.Gaps, loc.MergedGaps = len(itl), sameRead
	loc.Samples = lv.samples()
	loc.PromptCache = requestCache(oks)
	if loc.PromptCache == nil && lv.prefixOK {
		loc.PromptCache = &results.PromptCache{CachedTokens: lv.prefixCached, PromptTokens: lv.prefixPrompt,
			Source: results.CacheFromMetrics, Metrics: lv.prefixNames}
	}
	r.stamps.KernelStamped += lv.conns.KernelStamped
	r.stamps.ReadStamped += lv.conns.ReadStamped
	if c := lv.conns; c.Reconnects+c.Resent+c.ServerClosed > 0 {
		loc.Connections = &results.Connections{Reconnects: c.Reconnects, Resent: c.Resent, ServerClosed: c.ServerClosed, Requests: ok + errs + timeouts}
	}
	run := r.conditions(lv.concurrency)
	run.Requests = lv.requests
	run.Metrics = m
	lv.tpot = tpot
	run.Environment = r.environment(h)
	return run, loc
}

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
	var usage, timings results.PromptCache
	usage.Source, timings.Source = results.CacheFromUsage, results.CacheFromTimings
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
	}
	switch {
	case usage.Requests > 0 && usage.Requests >= timings.Requests:
		return &usage
	case timings.Requests > 0:
		return &timings
	}
	return nil
}

// us is a duration in whole microseconds, the samples' unit.
func us(d time.Duration) int64 { return d.Round(time.Microsecond).Microseconds() }

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
			rs := results.RequestSample{
				Slot: si, StartUs: us(o.start), EndUs: us(o.end), TTFTUs: -1,
				ChunkCount: o.chunks, Error: o.class,
			}
			if o.ttft >= 0 {
				rs.TTFTUs = us(o.ttft)
			}
			if o.hasUsage {
				rs.Usage, rs.CompletionTokens, rs.PromptTokens = true, o.complTok, o.promptTok
			}
			switch {
			case o.hasCached:
				rs.CachedTokens = o.cachedTok
			case o.hasCacheN:
				rs.CachedTokens = o.timingsCache
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
