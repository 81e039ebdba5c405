package compare

import (
	"fmt"
	"math"
	"slices"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// contextFigure is one figure a context comparison shows at each depth:
// the median in the depth's summary, and its value in each conversation,
// which the judgement against noise resamples (judgeContext).
type contextFigure struct {
	id, label, unit string
	dir             Direction
	spread          func(*results.ContextDepth) *results.Spread
	value           func(*results.ContextConversation) *float64
}

var contextFigures = []contextFigure{
	{"prefill_tps", "prefill", "tok/s", HigherBetter,
		func(d *results.ContextDepth) *results.Spread { return d.PrefillTPS },
		func(c *results.ContextConversation) *float64 { return c.Cold.PrefillTPS }},
	{"decode_tps", "decode", "tok/s", HigherBetter,
		func(d *results.ContextDepth) *results.Spread { return d.DecodeTPS },
		func(c *results.ContextConversation) *float64 { return c.Cold.DecodeTPS }},
	{"ttft", "TTFT cold", "ms", LowerBetter,
		func(d *results.ContextDepth) *results.Spread { return d.TTFTMs },
		func(c *results.ContextConversation) *float64 { return c.Cold.TTFTMs }},
	{"cached_ttft", "TTFT cached follow-up", "ms", LowerBetter,
		func(d *results.ContextDepth) *results.Spread { return d.CachedTTFTMs },
		func(c *results.ContextConversation) *float64 { return c.FollowUp.TTFTMs }},
}

// figuresAt are the figures compared at a depth: the short prompt is the
// baseline prefill is measured above, with no prefill of its own.
func figuresAt(depth int) []contextFigure {
	if depth == 0 {
		return contextFigures[1:]
	}
	return contextFigures
}

// depthOf is the depth of r at depth tokens, or nil.
func depthOf(r *results.ContextResult, depth int) *results.ContextDepth {
	for i := range r.Depths {
		if d := &r.Depths[i]; d.Depth == depth {
			return d
		}
	}
	return nil
}

// ContextMetrics are the context plan's figures at one depth, each the
// median of the depth's conversations.
func ContextMetrics(depth int) []DocMetric[results.ContextResult] {
	var out []DocMetric[results.ContextResult]
	for _, f := range figuresAt(depth) {
		out = append(out, DocMetric[results.ContextResult]{f.id + fmt.Sprintf("@%d", depth), f.label + ", " + results.DepthName(depth), f.unit, f.dir,
			func(r *results.ContextResult) (float64, bool) {
				if d := depthOf(r, depth); d != nil {
					if s := f.spread(d); s != nil {
						return s.P50, true
					}
				}
				return 0, false
			}})
	}
	return out
}

// ContextTable is a metric × run table of context results: every depth
// any of them measured, shallowest first, with the change against the
// first run (a gap where a run has no such depth), each judged against
// the spread of the conversations behind it.
func ContextTable(docs []*results.ContextResult, labels []string) []Row {
	depths := keysOf(docs, func(r *results.ContextResult) []results.ContextDepth { return r.Depths },
		func(d results.ContextDepth) (int, bool) { return d.Depth, true })
	var metrics []DocMetric[results.ContextResult]
	var samples []func(*results.ContextResult) []float64 // one per metric, in the rows' order
	for _, d := range depths {
		metrics = append(metrics, ContextMetrics(d)...)
		for _, f := range figuresAt(d) {
			samples = append(samples, func(r *results.ContextResult) []float64 { return contextSamples(r, d, f) })
		}
	}
	rows := docTable(docs, labels, metrics)
	judgeContext(rows, docs, samples)
	return rows
}

// contextSamples are figure f's values at one depth of r: one a repeat,
// the median of its users' conversations when several went at once (they
// shared the server, so they are not apart), else its one conversation;
// nil where r has no such depth.
func contextSamples(r *results.ContextResult, depth int, f contextFigure) []float64 {
	if r == nil {
		return nil
	}
	d := depthOf(r, depth)
	if d == nil {
		return nil
	}
	byRepeat := map[int][]float64{}
	var repeats []int
	for i := range d.Runs {
		c := &d.Runs[i]
		if v := f.value(c); v != nil && *v > 0 {
			if _, seen := byRepeat[c.Repeat]; !seen {
				repeats = append(repeats, c.Repeat)
			}
			byRepeat[c.Repeat] = append(byRepeat[c.Repeat], *v)
		}
	}
	out := make([]float64, 0, len(repeats))
	for _, rep := range repeats {
		vs := byRepeat[rep]
		slices.Sort(vs)
		out = append(out, stats.Quantile(vs, 0.5))
	}
	return out
}

// judgeContext judges each change of a context comparison against the
// spread of the conversations behind it, as a Kovara comparison does
// from its requests (docs/method.md §12): Welch's t on the logarithms of
// the two runs' values, one a repeat (contextSamples), an interval wide
// enough for every judged change of the run at once (bonferroniT), and a change only
// where that interval leaves out no change and the change is at least
// NoiseMargin. With three repeats a depth the interval is wide: few
// changes are called, and none on noise. A figure with fewer than two
// repeats in either run cannot be bounded and is never called a change.
// samples gives each row's values of a run.
func judgeContext[D any](rows []Row, docs []*D, samples []func(*D) []float64) {
	type judged struct {
		cell        *Cell
		run         int
		dir         Direction
		est, se, df float64
	}
	var todo []judged
	perRun := map[int]int{} // the changes judged of each run: its family
	for r := range rows {
		row := &rows[r]
		if len(docs) == 0 {
			return
		}
		base := logs(samples[r](docs[0]))
		for i := 1; i < len(row.Cells); i++ {
			c := &row.Cells[i]
			if !c.HasDelta {
				continue
			}
			other := logs(samples[r](docs[i]))
			if len(base) < 2 || len(other) < 2 {
				c.Noise, c.Better, c.Low, c.High = WithinNoise, 0, -1, math.Inf(1)
				continue
			}
			ma, va := meanVar(base)
			mb, vb := meanVar(other)
			va, vb = va/float64(len(base)), vb/float64(len(other))
			perRun[i]++
			todo = append(todo, judged{c, i, row.Metric.Dir, mb - ma, math.Sqrt(va + vb), welch(va, float64(len(base)-1), vb, float64(len(other)-1))})
		}
	}
	for _, j := range todo {
		c := j.cell
		half := 0.0
		if j.se > 0 {
			half = bonferroniT(perRun[j.run], j.df) * j.se
		}
		c.Low, c.High = math.Expm1(j.est-half), math.Expm1(j.est+half)
		c.Noise, c.Better = WithinNoise, 0
		// The table shows the change of the medians, the interval that of
		// the conversations' geometric means: a change is called only
		// where both are at least NoiseMargin, one way, and the interval
		// leaves out no change.
		change := math.Expm1(j.est)
		if math.Abs(change) >= NoiseMargin && math.Abs(c.Delta) >= NoiseMargin && sign(change) == sign(c.Delta) && (c.Low > 0 || c.High < 0) {
			c.Noise, c.Better = BeyondNoise, better(j.dir, sign(change))
		}
	}
}

// logs are the natural logarithms of xs.
func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// meanVar is the mean of xs (two or more) and their sample variance
// (n − 1), for Welch's t.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// ContextVerdict says whether context results measured the same thing:
// the same model, answer length and users at once, and prefill taken the
// same way (files written before the short prompt's baseline took it over
// the whole TTFT). The server and its engine are what people compare, so
// they are not held against them; depths only some runs measured show as
// gaps.
func ContextVerdict(docs []*results.ContextResult) (bool, []string) {
	return likeForLike(docs, func(r *results.ContextResult) []setting {
		s := r.Settings
		prefill := "above the short prompt"
		if !r.PrefillAboveShort() {
			prefill = "over the whole TTFT"
		}
		return []setting{{"model", r.Model}, {"answer tokens", fmt.Sprint(s.OutputTokens)}, {"users", fmt.Sprint(s.Users)}, {"prefill measured", prefill}}
	})
}
