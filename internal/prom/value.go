// Package prom holds what the engine (a server's /metrics) and the GPU
// telemetry (dcgm-exporter, nvidia_gpu_exporter) both need from a parsed
// Prometheus text page.
package prom

import (
	"math"

	dto "github.com/prometheus/client_model/go"
)

// Value is a gauge's, counter's or untyped metric's value. Other kinds,
// NaN and infinities count as missing.
func Value(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.GetGauge() != nil:
		v = m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		v = m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}
