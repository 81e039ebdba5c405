package compare

import (
	"fmt"
	"slices"

	"github.com/kovara/desktop/engine/results"
)

// rateFigure is one figure a rate comparison shows at each offered rate;
// sample, when set, is its value for each request, which the judgement
// against noise resamples (judgeContext). A figure without one is a
// single measurement of the level and is shown, never judged.
type rateFigure struct {
	id, label, unit string
	dir             Direction
	get             func(*results.RateLevel) (float64, bool)
	sample          func(results.RateRequest) (float64, bool)
	// optional: the figure is left out where no run has it at the rate
	// (a cache share of runs whose server said nothing of its cache).
	optional bool
}

var rateFigures = []rateFigure{
	{"latency_p50", "latency p50 from intended send", "ms", LowerBetter,
		func(l *results.RateLevel) (float64, bool) { return l.LatencyMs.At(50) },
		func(q results.RateRequest) (float64, bool) { return q.LatencyMs(), q.Error == "" && q.LatencyMs() > 0 }, false},
	{"latency_p95", "latency p95 from intended send", "ms", LowerBetter,
		func(l *results.RateLevel) (float64, bool) { return l.LatencyMs.At(95) }, nil, false},
	{"ttft_p50", "TTFT p50 from intended send", "ms", LowerBetter,
		func(l *results.RateLevel) (float64, bool) { return l.TTFTMs.At(50) },
		func(q results.RateRequest) (float64, bool) { return q.TTFTMs(), q.Error == "" && q.TTFTMs() > 0 }, false},
	{"achieved_rate", "achieved", "req/s", HigherBetter,
		func(l *results.RateLevel) (float64, bool) { return l.AchievedRate, l.OK > 0 }, nil, false},
	{"goodput_share", "goodput", "%", HigherBetter,
		func(l *results.RateLevel) (float64, bool) {
			if l.Goodput == nil {
				return 0, false
			}
			return 100 * l.Goodput.Share, true
		}, nil, false},
	{"cached_share", "prompt tokens from the server's cache", "%", HigherBetter,
		func(l *results.RateLevel) (float64, bool) {
			if l.Cache == nil || l.Cache.PromptTokens <= 0 {
				return 0, false
			}
			return 100 * l.Cache.Share(), true
		}, nil, true},
}

// rateLevelOf is r's whole level at rate, or nil.
func rateLevelOf(r *results.RateResult, rate float64) *results.RateLevel {
	if r == nil {
		return nil
	}
	if l := r.LevelAt(rate); l != nil && !l.Partial {
		return l
	}
	return nil
}

// RateTable is a metric × run table of rate results: at every offered
// rate any of them measured, lowest first, the latency (from the intended
// send), TTFT, achieved rate and goodput, with the change against the
// first run. The medians are judged against noise from each request's
// raw sample; the rest are one figure a level (SingleFigureLegend).
func RateTable(docs []*results.RateResult, labels []string) []Row {
	rates := keysOf(docs, func(r *results.RateResult) []results.RateLevel { return r.Levels },
		func(l results.RateLevel) (float64, bool) { return l.Rate, !l.Partial })
	var metrics []DocMetric[results.RateResult]
	var judged []int
	var samples []func(*results.RateResult) []float64
	for _, rate := range rates {
		for _, f := range rateFigures {
			if f.optional && !slices.ContainsFunc(docs, func(r *results.RateResult) bool {
				if l := rateLevelOf(r, rate); l != nil {
					_, ok := f.get(l)
					return ok
				}
				return false
			}) {
				continue
			}
			metrics = append(metrics, DocMetric[results.RateResult]{fmt.Sprintf("%s@%s", f.id, results.RateNumber(rate)), f.label + ", " + results.RateName(rate), f.unit, f.dir,
				func(r *results.RateResult) (float64, bool) {
					if l := rateLevelOf(r, rate); l != nil {
						return f.get(l)
					}
					return 0, false
				}})
			if f.sample != nil {
				judged = append(judged, len(metrics)-1)
				samples = append(samples, func(r *results.RateResult) []float64 { return rateSamples(rateLevelOf(r, rate), f.sample) })
			}
		}
	}
	rows := docTable(docs, labels, metrics)
	sub := make([]Row, len(judged))
	for i, j := range judged {
		sub[i] = rows[j] // shares its cells: the judgement lands in rows
	}
	judgeContext(sub, docs, samples)
	singleFigures(rows)
	return rows
}

// rateSamples are a figure's values for each successful request of a
// level; nil without raw samples.
func rateSamples(l *results.RateLevel, f func(results.RateRequest) (float64, bool)) []float64 {
	if l == nil || l.Samples == nil {
		return nil
	}
	var out []float64
	for _, q := range l.Samples.Each() {
		if v, ok := f(q); ok {
			out = append(out, v)
		}
	}
	return out
}

// RateVerdict says whether rate results measured the same thing: the
// same model, lengths, arrivals, cap and service level. Rates only some
// runs measured show as gaps.
func RateVerdict(docs []*results.RateResult) (bool, []string) {
	return likeForLike(docs, func(r *results.RateResult) []setting {
		s := r.Settings
		arr := s.Arrival
		if arr == "gamma" {
			arr += fmt.Sprintf(" (burstiness %g)", s.Burstiness)
		}
		return []setting{{"model", r.Model}, {"prompt tokens", fmt.Sprint(s.InputTokens)}, {"answer tokens", fmt.Sprint(s.OutputTokens)},
			{"arrivals", arr}, {"most in flight", fmt.Sprint(s.MaxInFlight)}, {"service level", s.SLO.Words()}, {"requests", workloadSetting(s.Workload)}}
	})
}

// workloadSetting is what a run's requests asked, as a verdict compares
// it: a prompts file by its hash (not the share of it sampled), the
// shared prefix and the turns; "the synthetic prompt" without any.
func workloadSetting(w *results.Workload) string {
	if w == nil {
		return "the synthetic prompt"
	}
	c := *w
	c.SharedPrefixWords = 0 // the words its tokens took on the server, not a choice
	if p := c.Prompts; p != nil {
		c.Prompts = &results.PromptsSource{Shape: p.Shape, SHA256: p.SHA256, Bytes: p.Bytes, Lines: p.Lines, Records: p.Records, Skipped: p.Skipped}
	}
	return c.Words()
}
