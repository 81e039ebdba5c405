// Package stats turns samples into the distributions of a results file:
// exact type-7 percentiles on the full sample, with the sample-size
// thresholds and rounding rules of the Kovara method.
package stats

import (
	"math"
	"slices"

	"github.com/kovara/desktop/engine/results"
)

// Minimum sample sizes before a tail percentile may be reported (the
// median needs one sample). Below them the tail is left out rather than
// filled with the maximum.
// They live in results, whose tables and notes say them.
const (
	MinP95 = results.MinP95
	MinP99 = results.MinP99
)

// Quantile returns the Hyndman–Fan type 7 quantile (numpy's "linear") of a
// sorted sample: h = (n-1)q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
func Quantile[T float32 | float64](sorted []T, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return float64(sorted[n-1])
	}
	a, b := float64(sorted[lo]), float64(sorted[lo+1])
	return a + (h-float64(lo))*(b-a)
}

// Round3 rounds to three decimals (0.001 ms, 0.001 per second), half away
// from zero.
func Round3(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return math.Round(v*1000) / 1000
}

// Summarize sorts xs in place and returns its distribution, or nil for an
// empty sample. Every value is rounded to 0.001. Inter-token gaps, the
// biggest samples, come as float32 to halve their memory.
func Summarize[T float32 | float64](xs []T) *results.Dist {
	n := len(xs)
	if n == 0 {
		return nil
	}
	slices.Sort(xs)
	// Kahan-free sum is fine here: samples are milliseconds, n is at most
	// a few million, and the result is rounded to 0.001.
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	d := &results.Dist{
		N:    n,
		Mean: Round3(sum / float64(n)),
		Min:  Round3(float64(xs[0])),
		P50:  Round3(Quantile(xs, 0.50)),
		Max:  Round3(float64(xs[n-1])),
	}
	if n >= MinP95 {
		v := Round3(Quantile(xs, 0.95))
		d.P95 = &v
	}
	if n >= MinP99 {
		v := Round3(Quantile(xs, 0.99))
		d.P99 = &v
	}
	return d
}
