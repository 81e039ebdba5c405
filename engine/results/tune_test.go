package results

import "testing"

func TestLeastChangeWords(t *testing.T) {
	t.Parallel()
	p := TunePlan{
		Metrics: []TuneMetric{{ID: "output_throughput", Label: "output tok/s"}, {ID: "ttft_p50", Label: "TTFT p50"},
			{ID: "ttft_p95", Label: "TTFT p95"}, {ID: "itl_p50", Label: "ITL p50"}},
		LeastChange: map[string]float64{"output_throughput": 0.03, "ttft_p50": 0.05, "ttft_p95": 0.10, "itl_p50": 0.03},
		Confidence:  0.95,
	}
	if got, want := p.LeastChangeWords(), "3 % for output tok/s and ITL p50, 5 % for TTFT p50, 10 % for TTFT p95"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := p.ConfidenceWords(); got != "95 %" {
		t.Errorf("confidence %q", got)
	}
}
