package compare

import (
	"math"
	"testing"
)

func TestFormatDelta(t *testing.T) {
	tests := []struct {
		cell Cell
		want string
	}{
		{Cell{Delta: 0.123, HasDelta: true}, "+12.3 %"},
		{Cell{Delta: -0.04, HasDelta: true}, "\u22124.0 %"},
		{Cell{Delta: 1.5, HasDelta: true}, "+150.0 %"},
		{Cell{Delta: 0, HasDelta: true}, "0.0 %"},
		{Cell{Delta: -0.0004, HasDelta: true}, "0.0 %"},
		{Cell{Delta: 0.0006, HasDelta: true}, "+0.1 %"},
		{Cell{Delta: 0.5, HasDelta: false}, ""},
		{Cell{}, ""},
		{Cell{Delta: math.NaN(), HasDelta: true}, ""},
	}
	for _, tt := range tests {
		if got := FormatDelta(tt.cell); got != tt.want {
			t.Errorf("FormatDelta(%+v) = %q, want %q", tt.cell, got, tt.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	m := func(id string) Metric {
		t.Helper()
		x, ok := MetricByID(id)
		if !ok {
			t.Fatalf("no metric %q", id)
		}
		return x
	}
	tests := []struct {
		metric Metric
		v      float64
		want   string
	}{
		{m("output_throughput"), 1234.56, "1234.6"},
		{m("output_throughput"), 5.678, "5.68"},
		{m("per_user_throughput"), 32, "32.0"},
		{m("request_throughput"), 0.4521, "0.452"},
		{m("request_throughput"), 12.3456, "12.35"},
		{m("request_throughput"), 123.456, "123.5"},
		{m("ttft_p50"), 4.567, "4.57"},
		{m("ttft_p50"), 45.678, "45.7"},
		{m("latency_p99"), 12345.6, "12346"},
		{m("itl_p50"), -0.001, "0.00"},
		{m("requests_ok"), 100, "100"},
		{m("error_rate"), 0, "0"},
		{m("error_rate"), 0.25, "0.25"},
		{m("error_rate"), 12.5, "12.5"},
		{m("output_tokens_mean"), 255.96, "256.0"},
		{m("ttft_p50"), math.NaN(), "—"},
		{m("output_throughput"), math.Inf(1), "—"},
		{Metric{Unit: "J/tok"}, 0.1234, "0.12"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.metric, tt.v); got != tt.want {
			t.Errorf("FormatValue(%s, %v) = %q, want %q", tt.metric.ID, tt.v, got, tt.want)
		}
	}
}

func TestFormatIntervalAndChange(t *testing.T) {
	tests := []struct {
		name           string
		cell           Cell
		interval, chng string
	}{
		{"beyond noise", Cell{HasDelta: true, Delta: -0.12, Noise: BeyondNoise, Better: -1, Low: -0.151, High: -0.088},
			"\u221215.1 \u2026 \u22128.8 %", "\u221212.0 % (\u221215.1 \u2026 \u22128.8 %)"},
		{"within noise: the delta alone", Cell{HasDelta: true, Delta: 0.031, Noise: WithinNoise, Low: -0.01, High: 0.07},
			"\u22121.0 \u2026 +7.0 %", "+3.1 %"},
		{"too few to bound", Cell{HasDelta: true, Delta: 0.4, Noise: WithinNoise, Low: -1, High: math.Inf(1)},
			"\u2212100.0 \u2026 \u221e %", "+40.0 %"},
		{"not judged", Cell{HasDelta: true, Delta: 0.2, Better: 1}, "", "+20.0 %"},
		{"no delta", Cell{Noise: BeyondNoise, Low: 0.1, High: 0.2}, "+10.0 \u2026 +20.0 %", ""},
	}
	for _, tt := range tests {
		if got := FormatInterval(tt.cell); got != tt.interval {
			t.Errorf("%s: FormatInterval = %q, want %q", tt.name, got, tt.interval)
		}
		if got := FormatChange(tt.cell); got != tt.chng {
			t.Errorf("%s: FormatChange = %q, want %q", tt.name, got, tt.chng)
		}
	}
}
