package chart

import (
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// rateResult is a rate result of 1, 2 and 4 req/s, the last not kept up
// with, and a partial 8 req/s; with a service level, goodput at each.
func rateResult(slo bool) *results.RateResult {
	p95 := func(v float64) *float64 { return &v }
	r := &results.RateResult{}
	for _, l := range []struct {
		rate, achieved, p50, p95, good float64
		partial                        bool
	}{
		{4, 2.6, 9000, 15000, 0.4, false}, // out of order: a sweep's bisection runs late
		{1, 0.98, 800, 1100, 0.95, false},
		{2, 1.97, 900, 1400, 1.9, false},
		{8, 1, 20000, 30000, 0, true},
	} {
		lv := results.RateLevel{Rate: l.rate, AchievedRate: l.achieved, Partial: l.partial,
			LatencyMs: &results.Dist{N: 64, P50: l.p50, P95: p95(l.p95)}}
		if slo {
			lv.Goodput = &results.Goodput{Rate: l.good}
		}
		r.Levels = append(r.Levels, lv)
	}
	return r
}

// A p95 needs more requests than a short run sends: without one, the
// latency chart has no p95 series, not an empty one in the legend.
func TestRateChartsLeaveOutEmptySeries(t *testing.T) {
	t.Parallel()
	r := rateResult(false)
	for i := range r.Levels {
		r.Levels[i].LatencyMs.P95 = nil
	}
	lat := RateCharts(r, Light())[0]
	if len(lat.Series) != 1 || lat.Series[0].Name != "latency p50 (from intended send)" {
		t.Errorf("latency series %+v, want p50 alone", lat.Series)
	}
}

// Latency p50 and p95 in ms, and achieved and goodput in req/s beside
// the offered rate, against the offered rate on a log axis; a partial
// rate is left out, and goodput only drawn with a service level.
func TestRateCharts(t *testing.T) {
	t.Parallel()
	rates := []float64{1, 2, 4}
	tests := []struct {
		name    string
		slo     bool
		legends []string
	}{
		{"with a service level", true, []string{RateOfferedName, "achieved req/s", "goodput req/s"}},
		{"without", false, []string{RateOfferedName, "achieved req/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			specs := RateCharts(rateResult(tt.slo), Light())
			if len(specs) != 2 || specs[0].Title != RateLatencyTitle || specs[1].Title != RateThroughputTitle {
				t.Fatalf("got %d charts", len(specs))
			}
			for _, s := range specs {
				if !s.XLog || !slices.Equal(s.XTicks, rates) || s.XLabel != "offered rate (req/s)" {
					t.Errorf("%s: log %v ticks %v x %q, want the measured rates on a log axis", s.Title, s.XLog, s.XTicks, s.XLabel)
				}
				if _, err := Render(s); err != nil {
					t.Errorf("%s: %v", s.Title, err)
				}
			}
			lat, thr := specs[0], specs[1]
			if got, want := lat.YLabel, "ms"; got != want {
				t.Errorf("latency unit %q, want %q", got, want)
			}
			if got, want := thr.YLabel, "req/s"; got != want {
				t.Errorf("rates unit %q, want %q", got, want)
			}
			if len(lat.Series) != 2 || !slices.Equal(lat.Series[0].Y, []float64{800, 900, 9000}) || !slices.Equal(lat.Series[1].Y, []float64{1100, 1400, 15000}) {
				t.Errorf("latency series %+v, want p50 and p95 by rate, the partial rate left out", lat.Series)
			}
			if lat.Series[0].Name != "latency p50 (from intended send)" {
				t.Errorf("latency legend %q", lat.Series[0].Name)
			}
			var legends []string
			for _, s := range thr.Series {
				legends = append(legends, s.Name)
				if !slices.Equal(s.X, rates) {
					t.Errorf("%s: x %v, want %v", s.Name, s.X, rates)
				}
			}
			if !slices.Equal(legends, tt.legends) {
				t.Errorf("legends %q, want %q", legends, tt.legends)
			}
			if got, want := thr.Series[0].Y, rates; !slices.Equal(got, want) {
				t.Errorf("offered line %v, want %v", got, want)
			}
			if got, want := thr.Series[1].Y, []float64{0.98, 1.97, 2.6}; !slices.Equal(got, want) {
				t.Errorf("achieved %v, want %v", got, want)
			}
			if tt.slo {
				if thr.Series[2].Kind != Scatter {
					t.Error("goodput is a line: it hides the achieved line it equals")
				}
				if got, want := thr.Series[2].Y, []float64{0.95, 1.9, 0.4}; !slices.Equal(got, want) {
					t.Errorf("goodput %v, want %v", got, want)
				}
			}
		})
	}
}
