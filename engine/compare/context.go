package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// ContextMetrics are the context plan's figures at one depth, each the
// median of the depth's conversations.
func ContextMetrics(depth int) []DocMetric[results.ContextResult] {
	at := func(get func(*results.ContextDepth) *results.Spread) func(*results.ContextResult) (float64, bool) {
		return func(r *results.ContextResult) (float64, bool) {
			for i := range r.Depths {
				if d := &r.Depths[i]; d.Depth == depth {
					if s := get(d); s != nil {
						return s.P50, true
					}
				}
			}
			return 0, false
		}
	}
	name := results.DepthName(depth)
	id := fmt.Sprintf("@%d", depth)
	var out []DocMetric[results.ContextResult]
	if depth > 0 {
		// The short prompt is the baseline prefill is measured above: it
		// has none of its own.
		out = append(out, DocMetric[results.ContextResult]{"prefill_tps" + id, "prefill, " + name, "tok/s", HigherBetter, at(func(d *results.ContextDepth) *results.Spread { return d.PrefillTPS })})
	}
	return append(out, []DocMetric[results.ContextResult]{
		{"decode_tps" + id, "decode, " + name, "tok/s", HigherBetter, at(func(d *results.ContextDepth) *results.Spread { return d.DecodeTPS })},
		{"ttft" + id, "TTFT cold, " + name, "ms", LowerBetter, at(func(d *results.ContextDepth) *results.Spread { return d.TTFTMs })},
		{"cached_ttft" + id, "TTFT cached follow-up, " + name, "ms", LowerBetter, at(func(d *results.ContextDepth) *results.Spread { return d.CachedTTFTMs })},
	}...)
}

// ContextTable is a metric × run table of context results: every depth
// any of them measured, shallowest first, with the change against the
// first run (a gap where a run has no such depth).
func ContextTable(docs []*results.ContextResult, labels []string) []Row {
	var depths []int
	for _, r := range docs {
		if r == nil {
			continue
		}
		for _, d := range r.Depths {
			if !slices.Contains(depths, d.Depth) {
				depths = append(depths, d.Depth)
			}
		}
	}
	slices.Sort(depths)
	var metrics []DocMetric[results.ContextResult]
	for _, d := range depths {
		metrics = append(metrics, ContextMetrics(d)...)
	}
	rows := docTable(docs, labels, metrics)
	judgeContext(rows, docs)
	return rows
}

// contextSamples are one figure's values at one depth, a value per
// conversation, for the metric id names ("decode_tps@2048"); nil where the
// document has no such depth.
func contextSamples(r *results.ContextResult, id string) []float64 {
	name, at, _ := strings.Cut(id, "@")
	depth, err := strconv.Atoi(at)
	if r == nil || err != nil {
		return nil
	}
	var out []float64
	for i := range r.Depths {
		d := &r.Depths[i]
		if d.Depth != depth {
			continue
		}
		for _, c := range d.Runs {
			var v *float64
			switch name {
			case "prefill_tps":
				v = c.Cold.PrefillTPS
			case "decode_tps":
				v = c.Cold.DecodeTPS
			case "ttft":
				v = c.Cold.TTFTMs
			case "cached_ttft":
				v = c.FollowUp.TTFTMs
			}
			if v != nil && *v > 0 {
				out = append(out, *v)
			}
		}
	}
	return out
}

// judgeContext judges each change of a context comparison against the
// spread of the conversations behind it, as a Kovara comparison does
// from its requests (docs/method.md §12): Welch's t on the logarithms of
// the two runs' conversations, an interval wide enough for every judged
// change of the table at once, and a change only where that interval
// leaves out no change and the change is at least NoiseMargin. With three
// conversations a depth the interval is wide: few changes are called,
// and none on noise. A figure with fewer than two conversations in either
// run cannot be bounded and is never called a change.
func judgeContext(rows []Row, docs []*results.ContextResult) {
	type judged struct {
		cell        *Cell
		dir         Direction
		est, se, df float64
	}
	var todo []judged
	for r := range rows {
		row := &rows[r]
		if len(docs) == 0 {
			return
		}
		base := logs(contextSamples(docs[0], row.Metric.ID))
		for i := 1; i < len(row.Cells); i++ {
			c := &row.Cells[i]
			if !c.HasDelta {
				continue
			}
			other := logs(contextSamples(docs[i], row.Metric.ID))
			if len(base) < 2 || len(other) < 2 {
				c.Noise, c.Better, c.Low, c.High = WithinNoise, 0, -1, math.Inf(1)
				continue
			}
			ma, va := meanVar(base)
			mb, vb := meanVar(other)
			va, vb = va/float64(len(base)), vb/float64(len(other))
			todo = append(todo, judged{c, row.Metric.Dir, mb - ma, math.Sqrt(va + vb), welch(va, float64(len(base)-1), vb, float64(len(other)-1))})
		}
	}
	p := 1 - (1-Confidence)/(2*float64(len(todo)))
	for _, j := range todo {
		c := j.cell
		half := 0.0
		if j.se > 0 {
			half = studentT(p, j.df) * j.se
		}
		c.Low, c.High = math.Expm1(j.est-half), math.Expm1(j.est+half)
		c.Noise, c.Better = WithinNoise, 0
		if change := math.Expm1(j.est); math.Abs(change) >= NoiseMargin && (c.Low > 0 || c.High < 0) {
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
		if r.PrefillBaseline == nil {
			prefill = "over the whole TTFT"
		}
		return []setting{{"model", r.Model}, {"answer tokens", fmt.Sprint(s.OutputTokens)}, {"users", fmt.Sprint(s.Users)}, {"prefill measured", prefill}}
	})
}
