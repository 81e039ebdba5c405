package prom

import (
	"math"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		m      *dto.Metric
		want   float64
		wantOK bool
	}{
		{"gauge", &dto.Metric{Gauge: &dto.Gauge{Value: f64(2.5)}}, 2.5, true},
		{"counter", &dto.Metric{Counter: &dto.Counter{Value: f64(7)}}, 7, true},
		{"untyped", &dto.Metric{Untyped: &dto.Untyped{Value: f64(-3)}}, -3, true},
		{"NaN", &dto.Metric{Gauge: &dto.Gauge{Value: f64(math.NaN())}}, 0, false},
		{"infinity", &dto.Metric{Counter: &dto.Counter{Value: f64(math.Inf(1))}}, 0, false},
		{"histogram", &dto.Metric{Histogram: &dto.Histogram{}}, 0, false},
		{"empty", &dto.Metric{}, 0, false},
	}
	for _, tt := range tests {
		got, ok := Value(tt.m)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: got %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func f64(v float64) *float64 { return &v }
