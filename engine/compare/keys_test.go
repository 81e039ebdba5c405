package compare

import (
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestKeysOf: the rates a rate comparison's rows go over are every rate
// any run measured whole, each once, lowest first; a run missing or
// stopped part way through a rate adds none.
func TestKeysOf(t *testing.T) {
	t.Parallel()
	rate := func(levels ...results.RateLevel) *results.RateResult { return &results.RateResult{Levels: levels} }
	tests := []struct {
		name string
		docs []*results.RateResult
		want []float64
	}{
		{"none", nil, nil},
		{"one run, in the order a sweep ran", []*results.RateResult{rate(results.RateLevel{Rate: 4}, results.RateLevel{Rate: 0.5}, results.RateLevel{Rate: 2})}, []float64{0.5, 2, 4}},
		{"two runs, shared and not", []*results.RateResult{rate(results.RateLevel{Rate: 2}, results.RateLevel{Rate: 1}), rate(results.RateLevel{Rate: 8}, results.RateLevel{Rate: 2})}, []float64{1, 2, 8}},
		{"a missing run", []*results.RateResult{nil, rate(results.RateLevel{Rate: 3})}, []float64{3}},
		{"a partial rate", []*results.RateResult{rate(results.RateLevel{Rate: 1}, results.RateLevel{Rate: 16, Partial: true})}, []float64{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := keysOf(tc.docs, func(r *results.RateResult) []results.RateLevel { return r.Levels },
				func(l results.RateLevel) (float64, bool) { return l.Rate, !l.Partial })
			if !slices.Equal(got, tc.want) {
				t.Errorf("keysOf = %v, want %v", got, tc.want)
			}
		})
	}
}
