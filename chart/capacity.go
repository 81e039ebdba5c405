package chart

import (
	"fmt"
	"math"
	"strconv"

	"github.com/kovara/desktop/engine/results"
)

// A capacity search's charts, drawn by the app's result view and the
// HTML report alike.

// CapacityCharts are a capacity result's two charts: per-user speed and
// TTFT p95 against concurrency.
func CapacityCharts(r *results.CapacityResult, p Palette) []Spec {
	return []Spec{CapacitySpeedSpec(r, p), CapacityTTFTSpec(r, p)}
}

// gapIfNil is the value, or NaN (a gap in a chart) when it is missing.
func gapIfNil(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// capacityPoints splits one number of every probe into two series' points:
// each level's first probe (joined by a line) and its repeats (dots), so a
// repeat that disagrees with its level's first probe is seen; top is the
// largest value, for the answer's line.
func capacityPoints(r *results.CapacityResult, get func(results.CapacityProbe) *float64) (firstX, firstY, againX, againY []float64, top float64) {
	for _, l := range r.Levels() {
		for i, p := range l.Probes {
			v := get(p)
			if i == 0 {
				firstX, firstY = append(firstX, float64(l.Concurrency)), append(firstY, gapIfNil(v))
			} else if v != nil {
				againX, againY = append(againX, float64(l.Concurrency)), append(againY, *v)
			}
			if v != nil {
				top = math.Max(top, *v)
			}
		}
	}
	return firstX, firstY, againX, againY, top
}

// capacitySeries is a number's two series: a line through each level's
// first probe and dots at its repeats, in their own colour and named so in
// the legend (no dots series when nothing was repeated).
func capacitySeries(r *results.CapacityResult, name string, first, again int, get func(results.CapacityProbe) *float64) (line Series, dots []Series, top float64) {
	fx, fy, ax, ay, top := capacityPoints(r, get)
	line = Series{Name: name + ", first probe", X: fx, Y: fy, Kind: Line, Color: first}
	if len(ax) > 0 {
		dots = []Series{{Name: name + ", repeat", X: ax, Y: ay, Kind: Scatter, Color: again}}
	}
	return line, dots, top
}

// capacityFrame is what both charts share: the probed levels on a log2
// x axis, a horizontal limit line across them and a vertical line at the
// answer, from 0 to top, under the probes' series.
func capacityFrame(r *results.CapacityResult, title, ylabel string, p Palette, series []Series, limitName string, limit, top float64) Spec {
	levels := r.Levels()
	spec := Spec{Title: title, XLabel: "concurrent users", YLabel: ylabel, XLog: true, YFromZero: true, Palette: p}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range levels {
		c := float64(l.Concurrency)
		spec.XTicks = append(spec.XTicks, c)
		lo, hi = math.Min(lo, c), math.Max(hi, c)
	}
	if len(levels) > 0 {
		if lo == hi {
			hi = lo * 2
		}
		spec.Series = append(spec.Series, Series{Name: limitName, X: []float64{lo, hi}, Y: []float64{limit, limit}, Kind: Line, Color: 3})
	}
	if c := r.Answer.Capacity; c > 0 {
		spec.Series = append(spec.Series, Series{Name: fmt.Sprintf("capacity: %d", c), X: []float64{float64(c), float64(c)}, Y: []float64{0, math.Max(top, limit)}, Kind: Line, Color: 2})
	}
	// The probes come last, so the limit and the answer's line never hide
	// a probe's dot (the answer's line runs through every probe of its
	// level).
	spec.Series = append(spec.Series, series...)
	return spec
}

// CapacitySpeedSpec is per-user tok/s (p50 and p5) of every probe against
// concurrency, with the floor. The repeats' dots come after the lines, so
// one that lands on a line is drawn over it.
func CapacitySpeedSpec(r *results.CapacityResult, p Palette) Spec {
	p50, again50, top50 := capacitySeries(r, "p50", 0, 4, func(q results.CapacityProbe) *float64 { return q.UserTPSP50 })
	p5, again5, top5 := capacitySeries(r, "slowest 5 %", 1, 5, func(q results.CapacityProbe) *float64 { return q.UserTPSP5 })
	series := append(append([]Series{p50, p5}, again50...), again5...)
	return capacityFrame(r, "Per-user speed by concurrency", "tok/s per user", p, series,
		"floor "+strconv.FormatFloat(r.Settings.UserTPS, 'f', -1, 64)+" tok/s", r.Settings.UserTPS, math.Max(top50, top5))
}

// CapacityTTFTSpec is TTFT p95 of every probe against concurrency, with
// the ceiling.
func CapacityTTFTSpec(r *results.CapacityResult, p Palette) Spec {
	line, again, top := capacitySeries(r, "TTFT p95", 0, 4, func(q results.CapacityProbe) *float64 { return q.TTFTP95Ms })
	return capacityFrame(r, "Time to first token p95 by concurrency", "ms", p, append([]Series{line}, again...),
		"ceiling "+strconv.FormatFloat(r.Settings.TTFTP95Ms, 'f', -1, 64)+" ms", r.Settings.TTFTP95Ms, top)
}
