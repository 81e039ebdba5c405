package compare

import (
	"math"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// The settings comparison's verdict (docs/method.md, "Comparing
// settings"). Every setting is run once a round, the rounds interleaved,
// so one round's runs share whatever the machine was doing then: the
// verdict takes each round's ratio of a setting's figure to the first
// setting's, and judges the mean of their logarithms by a Student t
// interval over the rounds. Drift that moves both runs of a round cancels
// in the ratio; what is left is the noise the interval holds.

// TuneMetrics are the headline metrics a settings comparison judges, in
// the order its table shows them; tokens per joule of the GPUs and at
// the wall join them when the runs read them.
var TuneMetrics = []string{"output_throughput", "per_user_throughput", "ttft_p50", "ttft_p95", "itl_p50", "latency_p50", "tokens_per_joule", "wall_tokens_per_joule"}

// TuneLeastChange is the smallest change a settings comparison calls,
// however narrow its interval: a guard against calling one of a dozen
// judged figures by chance, and against differences too small to matter.
// Tail latencies move most between runs, so theirs is widest.
var TuneLeastChange = map[string]float64{
	"output_throughput":     0.03,
	"per_user_throughput":   0.03,
	"ttft_p50":              0.05,
	"ttft_p95":              0.10,
	"itl_p50":               0.03,
	"latency_p50":           0.03,
	"tokens_per_joule":      0.03,
	"wall_tokens_per_joule": 0.03,
}

// TuneMetricList names the judged metrics for a comparison's document, in
// TuneMetrics' order.
func TuneMetricList() []results.TuneMetric {
	out := make([]results.TuneMetric, 0, len(TuneMetrics))
	for _, id := range TuneMetrics {
		m, _ := tuneMetric(id)
		out = append(out, results.TuneMetric{ID: m.ID, Label: m.Label, Unit: m.Unit, HigherBest: m.Dir == HigherBetter})
	}
	return out
}

// tuneMetric is the metric of this id among Metrics, EnergyMetrics and
// WallMetrics.
func tuneMetric(id string) (Metric, bool) {
	for _, ms := range [][]Metric{Metrics, EnergyMetrics, WallMetrics} {
		if i := slices.IndexFunc(ms, func(m Metric) bool { return m.ID == id }); i >= 0 {
			return ms[i], true
		}
	}
	return Metric{}, false
}

// TuneFigures are a run's headline figures per level, for its place in a
// settings comparison.
func TuneFigures(f *results.File) []results.TuneLevel {
	var out []results.TuneLevel
	for _, r := range f.Runs {
		lv := results.TuneLevel{Concurrency: r.Concurrency, Values: map[string]float64{}}
		for _, id := range TuneMetrics {
			m, _ := tuneMetric(id)
			var v float64
			var ok bool
			if m.Get != nil {
				v, ok = m.Get(r)
			} else if m.GetLocal != nil {
				v, ok = m.GetLocal(f, r)
			}
			if ok && v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				lv.Values[id] = v
			}
		}
		out = append(out, lv)
	}
	return out
}

// TuneReplayFigures are a trace replay's headline figures, for its
// place in a settings comparison: its one level (TuneReplayLevel) read
// as the Kovara plan's are, each request's times from when the trace
// sent it. ITL is left out: a rate plan keeps each answer's time per
// token (TPOT), not its gaps.
func TuneReplayFigures(r *results.RateResult) []results.TuneLevel {
	if len(r.Levels) == 0 {
		return nil
	}
	l := r.Levels[0]
	lv := results.TuneLevel{Concurrency: results.TuneReplayLevel, Values: map[string]float64{}}
	put := func(id string, v float64) {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			lv.Values[id] = v
		}
	}
	put("output_throughput", l.OutputTPS)
	if l.TTFTMs != nil && l.TTFTMs.N > 0 {
		put("ttft_p50", l.TTFTMs.P50)
		if l.TTFTMs.P95 != nil {
			put("ttft_p95", *l.TTFTMs.P95)
		}
	}
	if l.LatencyMs != nil && l.LatencyMs.N > 0 {
		put("latency_p50", l.LatencyMs.P50)
		if l.CompletionTokens != nil && l.LatencyMs.Mean > 0 {
			// As the Kovara plan's: mean answer over mean latency.
			put("per_user_throughput", l.CompletionTokens.Mean/(l.LatencyMs.Mean/1000))
		}
	}
	return []results.TuneLevel{lv}
}

// TuneVerdicts judges each setting after the first against the first,
// at every level and headline metric both have in some round, from the
// rounds in which both were measured.
func TuneVerdicts(runs []results.TuneRun, settings int) []results.TuneVerdict {
	type key struct{ setting, round int }
	byRound := map[key]*results.TuneRun{}
	var levels []int
	for i := range runs {
		r := &runs[i]
		if r.Error != "" && len(r.Levels) == 0 {
			continue
		}
		byRound[key{r.Setting, r.Round}] = r
		for _, l := range r.Levels {
			if !slices.Contains(levels, l.Concurrency) {
				levels = append(levels, l.Concurrency)
			}
		}
	}
	slices.Sort(levels)
	type cell struct {
		c                int
		m                Metric
		logs, base, this []float64
	}
	var out []results.TuneVerdict
	for s := 1; s < settings; s++ {
		var cells []cell
		for _, c := range levels {
			for _, id := range TuneMetrics {
				m, _ := tuneMetric(id)
				x := cell{c: c, m: m}
				for k, r := range byRound {
					if k.setting != s {
						continue
					}
					b, ok := byRound[key{0, k.round}]
					if !ok {
						continue
					}
					vb, okb := b.Value(c, id)
					vs, oks := r.Value(c, id)
					if !okb || !oks {
						continue
					}
					x.logs = append(x.logs, math.Log(vs/vb))
					x.base, x.this = append(x.base, vb), append(x.this, vs)
				}
				if len(x.logs) > 0 {
					cells = append(cells, x)
				}
			}
		}
		// The setting's intervals hold together (Bonferroni over the
		// cells judged): a dozen figures of two settings that are the
		// same then call none at 95 %, not one in twenty each.
		judged := 0
		for _, x := range cells {
			if len(x.logs) >= 2 {
				judged++
			}
		}
		for _, x := range cells {
			out = append(out, judgeTune(x.m, s, x.c, judged, x.logs, x.base, x.this))
		}
	}
	return out
}

// judgeTune is one verdict from the rounds' log ratios.
// judged is how many of the setting's cells are judged at once.
func judgeTune(m Metric, s, c, judged int, logs, base, this []float64) results.TuneVerdict {
	// byRound is a map: the order the rounds were gathered in is not
	// theirs, and sums should not depend on it.
	slices.Sort(logs)
	v := results.TuneVerdict{
		Setting: s, Concurrency: c, Metric: m.ID, Label: m.Label, Unit: m.Unit,
		HigherBest: m.Dir == HigherBetter, Rounds: len(logs),
		Base: geoMean(base), Value: geoMean(this), Verdict: results.TuneUnknown,
	}
	n := float64(len(logs))
	var sum float64
	for _, x := range logs {
		sum += x
	}
	mean := sum / n
	v.Change = math.Expm1(mean)
	if len(logs) < 2 {
		return v
	}
	var ss float64
	for _, x := range logs {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss/(n-1)) / math.Sqrt(n)
	half := bonferroniT(judged, n-1) * se
	v.Low, v.High = math.Expm1(mean-half), math.Expm1(mean+half)
	v.Verdict = results.TuneSame
	if (v.Low > 0 || v.High < 0) && math.Abs(v.Change) >= TuneLeastChange[m.ID] {
		if (v.Change > 0) == v.HigherBest {
			v.Verdict = results.TuneBetter
		} else {
			v.Verdict = results.TuneWorse
		}
	}
	return v
}

func geoMean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// TuneOrder is the order of the settings in round r (0-based): each round
// turns the first round's order by one place, so over as many rounds as
// settings every setting runs in every position once (A B, B A, A B …;
// A B C, B C A, C A B …) and a drift within rounds lands on each alike.
func TuneOrder(settings, round int) []int {
	out := make([]int, settings)
	for i := range out {
		out[i] = (i + round) % settings
	}
	return out
}

// AnswersAgainst compares a setting's answers to the fixed prompts with
// the first setting's, prompt by prompt: the same text, or the token
// (stream chunk) where it first differed. kinds name the prompts; an
// answer that is nil was not given.
func AnswersAgainst(setting int, kinds []string, base, these [][]string) results.TuneAnswers {
	out := results.TuneAnswers{Setting: setting, Differ: []results.TuneAnswerDiff{}}
	for i, kind := range kinds {
		if i >= len(base) || i >= len(these) || base[i] == nil || these[i] == nil {
			out.Missing++
			continue
		}
		out.Prompts++
		if after, same := firstDifference(base[i], these[i]); !same {
			out.Differ = append(out.Differ, results.TuneAnswerDiff{Prompt: kind, After: after})
		}
	}
	return out
}

// firstDifference is how many whole pieces of two answers are alike
// before their texts first differ; same when the texts are equal. Pieces
// are compared as text, so two servers that split the same text into
// different chunks still answer the same.
func firstDifference(a, b []string) (int, bool) {
	ta, tb := joinPieces(a), joinPieces(b)
	if ta == tb {
		return 0, true
	}
	at := 0
	for at < len(ta) && at < len(tb) && ta[at] == tb[at] {
		at++
	}
	// Whole pieces of a before the byte where they part.
	n, used := 0, 0
	for _, p := range a {
		if used+len(p) > at {
			break
		}
		used += len(p)
		n++
	}
	return n, false
}

func joinPieces(ps []string) string { return strings.Join(ps, "") }
