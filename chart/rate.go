package chart

import (
	"github.com/kovara/desktop/engine/results"
)

// Titles of a rate result's two charts (docs/plans.md, the rate plan),
// which also name their PNG files.
const (
	RateLatencyTitle    = "Latency by offered rate"
	RateThroughputTitle = "Achieved rate and goodput by offered rate"
)

// RateOfferedName is the legend of the line where achieved equals
// offered: the rate a server that keeps up reaches.
const RateOfferedName = "offered req/s (all served)"

// RateCharts are what a rate result shows against the offered rate, on a
// log axis labelled at the rates measured (a sweep doubles): latency p50
// and p95 from each request's intended send, in ms; and, in req/s, the
// rate achieved and the goodput (with a service level) beside the offered
// rate itself, so where the server stops keeping up the achieved line
// falls away from it; goodput is drawn as dots. The two are apart because their units are: on one
// axis seconds of latency would flatten the rates.
func RateCharts(r *results.RateResult, p Palette) []Spec {
	series := func(s results.RateSeries, color int) Series {
		out := Series{Name: s.String(), Kind: Line, Color: color}
		for _, pt := range r.Points(s) {
			out.X, out.Y = append(out.X, pt.Rate), append(out.Y, pt.Y)
		}
		return out
	}
	achieved := series(results.RateAchieved, 0)
	// The offered line spans the rates with an achieved figure: a
	// partial rate has none, and no point of its own.
	offered := Series{Name: RateOfferedName, Kind: Line, Color: 3, X: achieved.X, Y: achieved.X}
	rates := []Series{offered, achieved}
	// Goodput as dots: where every request met the service level they
	// sit on the achieved line, which a second line would hide.
	g := series(results.RateGoodputRate, 2)
	g.Kind = Scatter
	rates = append(rates, g)
	frame := func(title, ylabel string, all ...Series) Spec {
		// A series with no point stays out of the legend: a p95 needs
		// more requests a rate than a short run sends.
		var s []Series
		for _, x := range all {
			if len(x.X) > 0 {
				s = append(s, x)
			}
		}
		return Spec{Title: title, XLabel: "offered rate (req/s)", YLabel: ylabel, XLog: true, YFromZero: true,
			XTicks: achieved.X, Series: s, Palette: p}
	}
	return []Spec{
		frame(RateLatencyTitle, "ms", series(results.RateLatencyP50, 0), series(results.RateLatencyP95, 1)),
		frame(RateThroughputTitle, "req/s", rates...),
	}
}
