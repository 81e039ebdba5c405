package chart

import (
	"math"

	"github.com/kovara/desktop/engine/results"
)

// TuneChartMetrics are the metrics a settings comparison draws, one chart
// each (those its runs have).
var TuneChartMetrics = []string{"output_throughput", "ttft_p50", "ttft_p95", "itl_p50", "latency_p50", "tokens_per_joule", "wall_tokens_per_joule"}

// intervalOffset is how far right of its setting's dots, in settings, an
// interval's line stands.
const intervalOffset = 0.15

// TuneCharts are a settings comparison's charts at concurrency c: for
// each metric of TuneChartMetrics its runs have, every setting's runs as
// dots over the setting's name, and for each setting after the first the
// interval of its paired change, drawn on the first setting's value as a
// vertical line just right of the setting's dots. An interval far wider
// than the dots' spread (two rounds give such) is left out rather than
// squash the dots flat; the table has it.
func TuneCharts(r *results.TuneResult, c int, p Palette) []Spec {
	names := make([]string, len(r.Settings))
	ticks := make([]float64, len(r.Settings))
	for i, s := range r.Settings {
		names[i], ticks[i] = s.Name, float64(i+1)
	}
	var out []Spec
	for _, id := range TuneChartMetrics {
		label, unit := r.MetricLabel(id)
		var series []Series
		lo, hi := math.Inf(1), math.Inf(-1)
		for s := range r.Settings {
			dots := Series{Name: r.Settings[s].Name, Kind: Scatter, Color: s}
			for _, run := range r.Runs {
				if v, ok := run.Value(c, id); ok && run.Setting == s {
					dots.X, dots.Y = append(dots.X, float64(s+1)), append(dots.Y, v)
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
			}
			if len(dots.X) > 0 {
				series = append(series, dots)
			}
		}
		if len(series) == 0 {
			continue
		}
		drawn, wide := 0, 0
		for _, v := range r.Verdicts {
			if v.Metric != id || v.Concurrency != c || v.Verdict == results.TuneUnknown {
				continue
			}
			a, b := v.Base*(1+v.Low), v.Base*(1+v.High)
			if span := math.Max(hi-lo, 0.1*hi); a < lo-2*span || b > hi+2*span {
				wide++
				continue
			}
			drawn++
			// Beside the setting's dots, not on them: in their colour and
			// inside their spread it was hidden behind them.
			x := float64(v.Setting+1) + intervalOffset
			series = append(series, Series{X: []float64{x, x}, Y: []float64{a, b}, Kind: Line, Color: v.Setting})
		}
		// The axis says what is drawn: after two rounds every interval
		// was left out and the label still promised a line.
		xLabel := "setting (dots: its rounds)"
		switch {
		case drawn > 0 && wide > 0:
			xLabel = "setting (dots: its rounds; line: its change's interval, the widest only in the table)"
		case drawn > 0:
			xLabel = "setting (dots: its rounds; line: its change's interval)"
		case wide > 0:
			xLabel = "setting (dots: its rounds; the intervals are too wide to draw: the table has them)"
		}
		out = append(out, Spec{
			Title: label + " " + results.TuneAtLevel(c), XLabel: xLabel,
			YLabel: unit, YFromZero: true, XTicks: ticks, XTickLabels: names, XPad: 0.5, Series: series, Palette: p,
		})
	}
	if spec, ok := TuneTradeOff(r, c, p); ok {
		out = append(out, spec)
	}
	return out
}

// TuneTradeOff is throughput against energy per output token at
// concurrency c, one dot per setting and round (issue #49): a power
// limit's trade reads at a glance — right is dearer per token, up is
// faster. The energy is the wall's where the runs read a plug (the
// bill), else the GPUs'. ok is false when no run has both figures.
func TuneTradeOff(r *results.TuneResult, c int, p Palette) (Spec, bool) {
	energy, where := "wall_tokens_per_joule", "at the wall"
	if !tuneHas(r, c, energy) {
		energy, where = "tokens_per_joule", "of the GPUs"
	}
	var series []Series
	for s := range r.Settings {
		dots := Series{Name: r.Settings[s].Name, Kind: Scatter, Color: s}
		for _, run := range r.Runs {
			tpj, ok1 := run.Value(c, energy)
			tps, ok2 := run.Value(c, "output_throughput")
			if run.Setting == s && ok1 && ok2 && tpj > 0 {
				dots.X, dots.Y = append(dots.X, 1/tpj), append(dots.Y, tps)
			}
		}
		if len(dots.X) > 0 {
			series = append(series, dots)
		}
	}
	if len(series) == 0 {
		return Spec{}, false
	}
	return Spec{
		Title:  "Throughput against energy per token " + results.TuneAtLevel(c),
		XLabel: "joules per output token " + where + " (dots: each setting's rounds)", YLabel: "tok/s",
		YFromZero: true, Series: series, Palette: p,
	}, true
}

// tuneHas says some run has metric id at concurrency c.
func tuneHas(r *results.TuneResult, c int, id string) bool {
	for _, run := range r.Runs {
		if _, ok := run.Value(c, id); ok {
			return true
		}
	}
	return false
}
