package ui

import (
	"testing"

	"github.com/kovara/desktop/chart"
)

// A percentage chart's axis reaches 100: a KV cache 0.3 % full on an axis
// of 0–1.0 under "%" read like a ratio.
func TestPercentChartsReachAHundred(t *testing.T) {
	t.Parallel()
	var d liveData
	for name, spec := range map[string]chart.Spec{"kv": d.kvSpec(chart.Light()), "gpu util": d.utilSpec(chart.Light())} {
		if got, want := spec.YAtLeast, 100.0; got != want {
			t.Errorf("%s chart: YAtLeast %v, want %v", name, got, want)
		}
	}
}
