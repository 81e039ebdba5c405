package chart

import (
	"github.com/kovara/desktop/engine/results"
)

// Titles of a context result's two charts (docs/plans.md, the context
// plan), which also name their PNG files.
const (
	ContextPrefillTitle = "Cold prefill speed by context depth"
	ContextDecodeTitle  = "Decode speed by context depth"
	ContextTTFTTitle    = "Time to first token, cold and cached"
)

// ContextCharts are what a context result shows against depth, on a log
// axis of the prompt tokens each depth's prompt really had: the cold
// requests' prefill and decode tok/s, each on its own chart (prefill runs
// at thousands of tokens a second where decode runs at tens: on one axis
// decode would lie flat on the floor), and TTFT cold against the cached
// follow-up. Each point is the median of the depth's repeats (the table
// gives their spread). The short prompt has no prefill point: it is the
// baseline prefill is measured above, and in files written before that a
// few dozen tokens over a TTFT that is mostly the request's own overhead
// is no prefill speed.
func ContextCharts(r *results.ContextResult, p Palette) []Spec {
	series := func(s results.ContextSeries, color int) Series {
		out := Series{Name: s.String(), Kind: Line, Color: color}
		for _, pt := range r.Points(s) {
			if s == results.SeriesPrefill && pt.Depth == 0 {
				continue
			}
			out.X, out.Y = append(out.X, pt.X), append(out.Y, pt.Y)
		}
		return out
	}
	var ticks []float64
	for _, pt := range r.Points(results.SeriesColdTTFT) {
		ticks = append(ticks, pt.X)
	}
	frame := func(title, ylabel string, s ...Series) Spec {
		return Spec{Title: title, XLabel: "prompt tokens (context depth)", YLabel: ylabel, XLog: true, YFromZero: true,
			XTicks: ticks, Series: s, Palette: p}
	}
	return []Spec{
		frame(ContextPrefillTitle, "tok/s", series(results.SeriesPrefill, 0)),
		frame(ContextDecodeTitle, "tok/s", series(results.SeriesDecode, 1)),
		frame(ContextTTFTTitle, "ms", series(results.SeriesColdTTFT, 0), series(results.SeriesCachedTTFT, 2)),
	}
}
