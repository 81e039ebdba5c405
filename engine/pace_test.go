package engine

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

func TestScheduleSameSeedSameTimes(t *testing.T) {
	t.Parallel()
	for _, arr := range setup.Arrivals {
		a := NewSchedule(arr, 4, 0.5, 500, 11)
		b := NewSchedule(arr, 4, 0.5, 500, 11)
		if !slices.Equal(a, b) {
			t.Errorf("%s: the same seed gave two schedules", arr)
		}
		if arr == setup.ArrivalConstant {
			continue
		}
		if c := NewSchedule(arr, 4, 0.5, 500, 12); slices.Equal(a, c) {
			t.Errorf("%s: another seed gave the same schedule", arr)
		}
	}
}

// gapStats are a schedule's gaps' mean (s) and coefficient of variation.
func gapStats(s Schedule) (mean, cv float64) {
	var sum, sq float64
	n := float64(len(s) - 1)
	for k := 1; k < len(s); k++ {
		g := (s[k] - s[k-1]).Seconds()
		sum += g
		sq += g * g
	}
	mean = sum / n
	return mean, math.Sqrt(sq/n-mean*mean) / mean
}

func TestScheduleRateAndSpread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		arrival    string
		rate       float64
		burstiness float64
		wantCV     float64
	}{
		{setup.ArrivalConstant, 10, 0, 0},
		{setup.ArrivalPoisson, 10, 0, 1},
		{setup.ArrivalGamma, 10, 1, 1},
		{setup.ArrivalGamma, 2, 0.25, 2}, // CV of gamma gaps is 1/sqrt(shape)
		{setup.ArrivalGamma, 50, 4, 0.5},
	}
	for _, tc := range tests {
		s := NewSchedule(tc.arrival, tc.rate, tc.burstiness, 40001, 3)
		if s[0] != 0 {
			t.Errorf("%s: the first request is due at %s, not at the release", tc.arrival, s[0])
		}
		mean, cv := gapStats(s)
		if got, want := 1/mean, tc.rate; math.Abs(got/want-1) > 0.03 {
			t.Errorf("%s shape %g: rate %.3f, want %.3f within 3 %%", tc.arrival, tc.burstiness, got, want)
		}
		if math.Abs(cv-tc.wantCV) > 0.05*max(tc.wantCV, 1) {
			t.Errorf("%s shape %g: CV of the gaps %.3f, want %.3f", tc.arrival, tc.burstiness, cv, tc.wantCV)
		}
	}
}

func TestScheduleEnds(t *testing.T) {
	t.Parallel()
	s := NewSchedule(setup.ArrivalConstant, 4, 0, 3, 1)
	for k, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond} {
		if got, ok := s.Due(k); !ok || got != want {
			t.Errorf("Due(%d) = %s, %v; want %s", k, got, ok, want)
		}
	}
	if _, ok := s.Due(3); ok {
		t.Error("a schedule of 3 went on to a fourth request")
	}
	if NewSchedule(setup.ArrivalPoisson, 0, 0, 3, 1) != nil {
		t.Error("a rate of 0 made a schedule")
	}
}
