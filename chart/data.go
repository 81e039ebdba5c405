package chart

import (
	"math"
	"slices"
)

// The data shaping behind the charts, apart from chart.go's rendering seam:
// it never touches go-chart, so a change of chart library leaves it be.

// Thin reduces a series to at most max points for drawing. It keeps the first
// and the last point and, in each of a number of equal index buckets in
// between, the lowest and the highest Y, so spikes survive. A gap (a NaN or
// infinite Y) between two kept points is kept as one gap point, so a thinned
// line is never drawn across a hole in the data. X is expected in ascending
// order. Series already within max are returned as copies. A max below 3 is
// treated as 3 (first, a gap, last).
func Thin(x, y []float64, max int) ([]float64, []float64) {
	n := min(len(x), len(y))
	if max < 3 {
		max = 3
	}
	if n <= max {
		return slices.Clone(x[:n]), slices.Clone(y[:n])
	}
	// nextGap[i] is the first gap index >= i (n when there is none).
	nextGap := make([]int, n+1)
	nextGap[n] = n
	for i := n - 1; i >= 0; i-- {
		if isGap(y[i]) {
			nextGap[i] = i
		} else {
			nextGap[i] = nextGap[i+1]
		}
	}
	buckets := (max - 2) / 2
	for {
		ox, oy := thinBuckets(x[:n], y[:n], nextGap, buckets)
		if len(ox) <= max || buckets == 0 {
			return ox, oy
		}
		next := buckets * max / len(ox)
		if next >= buckets {
			next = buckets - 1
		}
		buckets = next
	}
}

func thinBuckets(x, y []float64, nextGap []int, buckets int) ([]float64, []float64) {
	n := len(x)
	sel := make([]int, 0, 2*buckets+2)
	sel = append(sel, 0)
	inner := n - 2
	for b := 0; b < buckets; b++ {
		lo := 1 + b*inner/buckets
		hi := 1 + (b+1)*inner/buckets
		iMin, iMax := -1, -1
		for i := lo; i < hi; i++ {
			if isGap(y[i]) {
				continue
			}
			if iMin < 0 || y[i] < y[iMin] {
				iMin = i
			}
			if iMax < 0 || y[i] > y[iMax] {
				iMax = i
			}
		}
		switch {
		case iMin < 0:
		case iMin == iMax:
			sel = append(sel, iMin)
		case iMin < iMax:
			sel = append(sel, iMin, iMax)
		default:
			sel = append(sel, iMax, iMin)
		}
	}
	sel = append(sel, n-1)

	ox := make([]float64, 0, 2*len(sel))
	oy := make([]float64, 0, 2*len(sel))
	lastGap := false
	for k, i := range sel {
		if k > 0 {
			prev := sel[k-1]
			if g := nextGap[prev+1]; g < i && !lastGap {
				ox, oy = append(ox, x[g]), append(oy, y[g])
				lastGap = true
			}
		}
		if isGap(y[i]) {
			if lastGap {
				if i != n-1 {
					continue
				}
				// Keep the true last point rather than the earlier gap marker.
				ox, oy = ox[:len(ox)-1], oy[:len(oy)-1]
			}
			lastGap = true
		} else {
			lastGap = false
		}
		ox, oy = append(ox, x[i]), append(oy, y[i])
	}
	return ox, oy
}

// Histogram counts values into bins for a bar chart, returning each bin's
// centre and count. NaN and infinite values are ignored. When the largest
// values lie far out, the first bins-1 bins run from the smallest value up to
// the 99.5th percentile (taken as the sample at rank ⌊0.995·(n−1)⌋, without
// interpolation, so one far outlier in a small sample cannot move it) and
// everything above goes into one overflow bin placed just right of them, so
// a single outlier does not squash the plot. When even the maximum would fit
// in that overflow bin's width, all bins simply span minimum to maximum.
// With no finite values it returns nil slices.
func Histogram(values []float64, bins int) (centers, counts []float64) {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !isGap(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return nil, nil
	}
	if bins < 1 {
		bins = 1
	}
	slices.Sort(v)
	lo, top := v[0], v[len(v)-1]
	hi := v[int(math.Floor(0.995*float64(len(v)-1)))]

	if bins >= 2 && hi > lo && top > hi+(hi-lo)/float64(bins-1) {
		regular := bins - 1
		width := (hi - lo) / float64(regular)
		centers = make([]float64, bins)
		counts = make([]float64, bins)
		for i := range regular {
			centers[i] = lo + (float64(i)+0.5)*width
		}
		centers[regular] = hi + 0.5*width
		for _, x := range v {
			if x > hi {
				counts[regular]++
				continue
			}
			counts[min(int((x-lo)/width), regular-1)]++
		}
		return centers, counts
	}

	width := (top - lo) / float64(bins)
	if width == 0 {
		// Every value is the same: centre it in a row of narrow bins.
		width = math.Abs(lo) * 0.02 / float64(bins)
		if width == 0 {
			width = 1.0 / float64(bins)
		}
		lo -= width * float64(bins) / 2
	}
	centers = make([]float64, bins)
	counts = make([]float64, bins)
	for i := range bins {
		centers[i] = lo + (float64(i)+0.5)*width
	}
	for _, x := range v {
		counts[max(0, min(int((x-lo)/width), bins-1))]++
	}
	return centers, counts
}
