package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestITLFromMergedChunksNotCompared: an ITL percentile of chunks read
// together is no figure, so a comparison has nothing there ("0.00,
// −100.0 %" was shown); a measured one is compared.
func TestITLFromMergedChunksNotCompared(t *testing.T) {
	t.Parallel()
	p95 := 7.5
	r := results.Run{Metrics: results.Metrics{ITLMs: &results.Dist{N: 200, P50: 0, P95: &p95}}}
	for _, tc := range []struct {
		id   string
		want bool
	}{{"itl_p50", false}, {"itl_p95", true}} {
		m, ok := MetricByID(tc.id)
		if !ok {
			t.Fatalf("no metric %s", tc.id)
		}
		if _, got := m.Get(r); got != tc.want {
			t.Errorf("%s present = %v, want %v", tc.id, got, tc.want)
		}
	}
}
