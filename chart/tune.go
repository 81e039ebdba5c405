package chart

import (
	"fmt"

	"github.com/kovara/desktop/engine/results"
)

// TuneChartMetrics are the metrics a settings comparison draws, one chart
// each.
var TuneChartMetrics = []string{"output_throughput", "ttft_p95", "itl_p50", "latency_p50"}

// TuneCharts are a settings comparison's charts at concurrency c: for
// each metric of TuneChartMetrics, every setting's runs as dots over the
// setting's place (1 is the first setting), and for each setting after
// the first the interval of its paired change, drawn on the first
// setting's value as a vertical line.
func TuneCharts(r *results.TuneResult, c int, p Palette) []Spec {
	var out []Spec
	for _, id := range TuneChartMetrics {
		label, unit := id, ""
		var series []Series
		for s := range r.Settings {
			dots := Series{Name: r.Settings[s].Name, Kind: Scatter, Color: s}
			for _, run := range r.Runs {
				if v, ok := run.Value(c, id); ok && run.Setting == s {
					dots.X, dots.Y = append(dots.X, float64(s+1)), append(dots.Y, v)
				}
			}
			if len(dots.X) > 0 {
				series = append(series, dots)
			}
		}
		for _, v := range r.Verdicts {
			if v.Metric != id || v.Concurrency != c {
				continue
			}
			label, unit = v.Label, v.Unit
			if v.Verdict == results.TuneUnknown {
				continue
			}
			x := float64(v.Setting + 1)
			series = append(series, Series{X: []float64{x, x}, Y: []float64{v.Base * (1 + v.Low), v.Base * (1 + v.High)}, Kind: Line, Color: v.Setting})
		}
		if len(series) == 0 {
			continue
		}
		ticks := make([]float64, len(r.Settings))
		for i := range ticks {
			ticks[i] = float64(i + 1)
		}
		out = append(out, Spec{
			Title: fmt.Sprintf("%s at %d %s", label, c, results.Plural(c, "user", "users")), XLabel: "setting (dots: its rounds; line: the change's interval)",
			YLabel: unit, YFromZero: true, XTicks: ticks, XInteger: true, Series: series, Palette: p,
		})
	}
	return out
}
