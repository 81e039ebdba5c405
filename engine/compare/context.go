package compare

import (
	"fmt"
	"slices"

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
	return docTable(docs, labels, metrics)
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
