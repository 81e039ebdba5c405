// Package stats turns samples into the distributions of a results file:
// exact type-7 percentiles on the full sample, with the sample-size
// thresholds and rounding rules of the Kovara method.
package stats

import (
	"math"
	"slices"

	"github.com/kovara/desktop/engine/results"
)

// Minimum sample sizes before a percentile may be reported. Below them the
// tail is left out rather than filled with the maximum.
const (
	MinP50 = 1
	MinP95 = 20
	MinP99 = 100
)

// Quantile returns the Hyndman–Fan type 7 quantile (numpy's "linear") of a
// sorted sample: h = (n-1)q, x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * q
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
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
// empty sample. Every value is rounded to 0.001.
func Summarize(xs []float64) *results.Dist {
	n := len(xs)
	if n == 0 {
		return nil
	}
	slices.Sort(xs)
	// Kahan-free sum is fine here: samples are milliseconds, n is at most
	// a few million, and the result is rounded to 0.001.
	var sum float64
	for _, x := range xs {
		sum += x
	}
	d := &results.Dist{
		N:    n,
		Mean: Round3(sum / float64(n)),
		Min:  Round3(xs[0]),
		P50:  Round3(Quantile(xs, 0.50)),
		Max:  Round3(xs[n-1]),
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

// Summarize32 is Summarize for compactly stored samples (inter-token gaps
// are kept as float32 milliseconds to stay small at scale). It sorts xs in
// place and never widens the whole sample, so a level's gaps are held
// once: 25.6 million gaps take 102 MB, not 307.
func Summarize32(xs []float32) *results.Dist {
	n := len(xs)
	if n == 0 {
		return nil
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	q := func(p float64) float64 {
		h := float64(n-1) * p
		lo := int(math.Floor(h))
		if lo >= n-1 {
			return float64(xs[n-1])
		}
		a, b := float64(xs[lo]), float64(xs[lo+1])
		return a + (h-float64(lo))*(b-a)
	}
	d := &results.Dist{
		N:    n,
		Mean: Round3(sum / float64(n)),
		Min:  Round3(float64(xs[0])),
		P50:  Round3(q(0.50)),
		Max:  Round3(float64(xs[n-1])),
	}
	if n >= MinP95 {
		v := Round3(q(0.95))
		d.P95 = &v
	}
	if n >= MinP99 {
		v := Round3(q(0.99))
		d.P99 = &v
	}
	return d
}
