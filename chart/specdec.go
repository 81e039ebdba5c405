package chart

import (
	"fmt"

	"github.com/kovara/desktop/engine/results"
)

// A speculative-decoding result's chart, drawn by the app's result view
// and the HTML report alike.

// SpecDecPositionSpec charts acceptance by draft position, one line per level:
// the share of drafting steps whose draft was accepted at each position
// (the figure --spec-draft-n-max and num_speculative_tokens are tuned by).
func SpecDecPositionSpec(r *results.SpecDecResult, p Palette) Spec {
	spec := Spec{Title: "Accepted by draft position", XLabel: "draft position", YLabel: "% of steps", YFromZero: true, Palette: p}
	for i, l := range r.Levels {
		if l.Spec == nil || len(l.Spec.PerPosition) == 0 {
			continue
		}
		var x, y []float64
		for pos, v := range l.Spec.PerPosition {
			x = append(x, float64(pos+1))
			y = append(y, 100*v)
			if len(spec.XTicks) < len(l.Spec.PerPosition) {
				spec.XTicks = append(spec.XTicks, float64(pos+1))
			}
		}
		spec.Series = append(spec.Series, Series{Name: fmt.Sprintf("concurrency %d", l.Concurrency), X: x, Y: y, Kind: Line, Color: i})
	}
	return spec
}
