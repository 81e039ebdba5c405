package chart

import (
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// A run of conversations draws each kept rate's time to first token p50
// against the turn, labelled at every turn; a partial rate, a turn
// without a figure and a run without turns draw nothing.
func TestRateTurnsChart(t *testing.T) {
	t.Parallel()
	turns := func(p50s ...float64) []results.TurnFigures {
		var out []results.TurnFigures
		for i, v := range p50s {
			f := results.TurnFigures{Turn: i + 1, Requests: 4, OK: 4}
			if v > 0 {
				f.TTFTMs = &results.Dist{N: 4, P50: v}
			}
			out = append(out, f)
		}
		return out
	}
	r := rateResult(false) // 4, 1, 2 req/s and a partial 8
	r.Levels[0].ByTurn = turns(900, 0, 300)
	r.Levels[1].ByTurn = turns(400, 120, 110)
	r.Levels[3].ByTurn = turns(5000, 6000, 7000)
	spec, ok := RateTurnsChart(r, Light())
	if !ok {
		t.Fatal("no chart for a run of conversations")
	}
	type line struct {
		name string
		x, y []float64
	}
	want := []line{{"1 req/s", []float64{1, 2, 3}, []float64{400, 120, 110}}, {"4 req/s", []float64{1, 3}, []float64{900, 300}}}
	var got []line
	for _, s := range spec.Series {
		got = append(got, line{s.Name, s.X, s.Y})
	}
	if !slices.EqualFunc(got, want, func(a, b line) bool {
		return a.name == b.name && slices.Equal(a.x, b.x) && slices.Equal(a.y, b.y)
	}) {
		t.Errorf("series %+v, want %+v", got, want)
	}
	if !slices.Equal(spec.XTicks, []float64{1, 2, 3}) || spec.Title != RateTurnsTitle {
		t.Errorf("%q ticks %v, want 1, 2, 3", spec.Title, spec.XTicks)
	}
	if _, err := Render(spec); err != nil {
		t.Errorf("render: %v", err)
	}
	if _, ok := RateTurnsChart(rateResult(false), Light()); ok {
		t.Error("a chart by turn for a run without turns")
	}
}
