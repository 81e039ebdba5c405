package stats

import (
	"math"
	"testing"
)

func TestQuantileType7(t *testing.T) {
	t.Parallel()
	// Expected values computed by hand with h = (n-1)q, and match
	// numpy.percentile(x, 100*q) (method="linear").
	tests := []struct {
		name string
		xs   []float64
		q    float64
		want float64
	}{
		{"single", []float64{5}, 0.99, 5},
		{"two median", []float64{1, 3}, 0.5, 2},
		{"four p50", []float64{1, 2, 3, 4}, 0.5, 2.5},
		{"four p95", []float64{1, 2, 3, 4}, 0.95, 3.85},
		{"ten p90", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9, 9.1},
		{"ten p99", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.99, 9.91},
		{"q0", []float64{2, 4, 8}, 0, 2},
		{"q1", []float64{2, 4, 8}, 1, 8},
	}
	for _, tc := range tests {
		if got := Quantile(tc.xs, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: Quantile(%v, %v) = %v, want %v", tc.name, tc.xs, tc.q, got, tc.want)
		}
	}
	if !math.IsNaN(Quantile([]float64(nil), 0.5)) {
		t.Errorf("Quantile(nil) should be NaN")
	}
}

func TestSummarizeThresholds(t *testing.T) {
	t.Parallel()
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i) // unsorted on purpose
		}
		return xs
	}
	tests := []struct {
		n            int
		wantP95      bool
		wantP99      bool
		wantP50, max float64
	}{
		{1, false, false, 1, 1},
		{19, false, false, 10, 19},
		{20, true, false, 10.5, 20},
		{99, true, false, 50, 99},
		{100, true, true, 50.5, 100},
	}
	for _, tc := range tests {
		d := Summarize(seq(tc.n))
		if d.N != tc.n {
			t.Errorf("n=%d: got N %d", tc.n, d.N)
		}
		if (d.P95 != nil) != tc.wantP95 {
			t.Errorf("n=%d: p95 present = %v, want %v", tc.n, d.P95 != nil, tc.wantP95)
		}
		if (d.P99 != nil) != tc.wantP99 {
			t.Errorf("n=%d: p99 present = %v, want %v", tc.n, d.P99 != nil, tc.wantP99)
		}
		if d.P50 != tc.wantP50 || d.Max != tc.max || d.Min != 1 {
			t.Errorf("n=%d: got p50 %v min %v max %v, want %v 1 %v", tc.n, d.P50, d.Min, d.Max, tc.wantP50, tc.max)
		}
	}
	// 100 values 1..100: p95 = 95.05, p99 = 99.01 (type 7).
	d := Summarize(seq(100))
	if *d.P95 != 95.05 || *d.P99 != 99.01 {
		t.Errorf("got p95 %v p99 %v, want 95.05 99.01", *d.P95, *d.P99)
	}
	if Summarize([]float64(nil)) != nil {
		t.Errorf("Summarize(nil) should be nil")
	}
}

func TestRound3(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want float64 }{
		{1.23449, 1.234},
		{1.2345, 1.235},
		{0.0004, 0},
		{-2.0005, -2.001},
		{12345.6789, 12345.679},
	}
	for _, tc := range tests {
		if got := Round3(tc.in); got != tc.want {
			t.Errorf("Round3(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSummarize32(t *testing.T) {
	t.Parallel()
	d := Summarize([]float32{20.5, 19.5, 20})
	if d.N != 3 || d.P50 != 20 || d.Mean != 20 || d.Min != 19.5 || d.Max != 20.5 {
		t.Errorf("got %+v", d)
	}
}

func TestSummarize32MatchesSummarize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 7, 20, 99, 100, 1000} {
		xs32 := make([]float32, n)
		xs64 := make([]float64, n)
		for i := range xs32 {
			v := float32((i*7919)%1000) / 10
			xs32[i], xs64[i] = v, float64(v)
		}
		a, b := Summarize(xs32), Summarize(xs64)
		if a.N != b.N || a.Mean != b.Mean || a.Min != b.Min || a.P50 != b.P50 || a.Max != b.Max ||
			(a.P95 == nil) != (b.P95 == nil) || (a.P99 == nil) != (b.P99 == nil) ||
			(a.P95 != nil && *a.P95 != *b.P95) || (a.P99 != nil && *a.P99 != *b.P99) {
			t.Errorf("n=%d: Summarize32 %+v, Summarize %+v", n, a, b)
		}
	}
}
