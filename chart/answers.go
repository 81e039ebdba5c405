package chart

import (
	"github.com/kovara/desktop/engine/results"
)

// AnswersCharts are an answers comparison's charts: the KL divergence
// prompt kind by prompt kind, the other setting's beside the floor's
// (the baseline read against itself), and the same along the answers,
// position by position, averaged over the prompts — where in an answer
// a setting parts from the baseline. None when nothing was compared.
func AnswersCharts(r *results.AnswersResult, p Palette) []Spec {
	if r.Figures == nil {
		return nil
	}
	var out []Spec
	if len(r.Kinds) > 0 {
		names := make([]string, len(r.Kinds))
		ticks := make([]float64, len(r.Kinds))
		other := Series{Name: results.ModelName(r.Other.Model), Kind: Bars}
		floor := Series{Name: "floor (" + results.ModelName(r.Baseline.Model) + " against itself)", Kind: Bars, Color: 1}
		for i, k := range r.Kinds {
			names[i], ticks[i] = k.Kind, float64(i+1)
			other.X, other.Y = append(other.X, ticks[i]), append(other.Y, k.KLMean)
			if fl, ok := meanOf(r.Local.Positions, func(q results.AnswersPosition) bool { return q.Kind == k.Kind }); ok {
				floor.X, floor.Y = append(floor.X, ticks[i]), append(floor.Y, fl)
			}
		}
		series := []Series{other}
		if len(floor.X) > 0 {
			series = append(series, floor)
		}
		out = append(out, Spec{Title: "KL divergence by prompt kind", XLabel: "prompt kind", YLabel: "nats a token", YFromZero: true,
			XTicks: ticks, XTickLabels: names, XPad: 0.5, Series: series, Palette: p})
	}
	if len(r.Local.Positions) > 0 {
		at := map[int][2]float64{}
		n := map[int]int{}
		last := 0
		for _, q := range r.Local.Positions {
			v := at[q.At]
			v[0], v[1] = v[0]+q.KL, v[1]+q.FloorKL
			at[q.At], n[q.At] = v, n[q.At]+1
			last = max(last, q.At)
		}
		other := Series{Name: results.ModelName(r.Other.Model), Kind: Line}
		floor := Series{Name: "floor", Kind: Line, Color: 1}
		for i := 1; i <= last; i++ {
			if n[i] == 0 {
				continue
			}
			x := float64(i)
			other.X, other.Y = append(other.X, x), append(other.Y, at[i][0]/float64(n[i]))
			floor.X, floor.Y = append(floor.X, x), append(floor.Y, at[i][1]/float64(n[i]))
		}
		out = append(out, Spec{Title: "KL divergence along the answers (mean over the prompts)", XLabel: "token of the answer",
			YLabel: "nats a token", YFromZero: true, XInteger: true, Series: []Series{other, floor}, Palette: p})
	}
	return out
}

// meanOf is the floor's mean KL divergence over the positions keep
// takes, and whether it took any.
func meanOf(ps []results.AnswersPosition, keep func(results.AnswersPosition) bool) (float64, bool) {
	sum, n := 0.0, 0
	for _, q := range ps {
		if keep(q) {
			sum += q.FloorKL
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
