package chart

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func contextResult() *results.ContextResult {
	sp := func(v float64) *results.Spread {
		return &results.Spread{Min: v * 0.95, P10: v * 0.96, P50: v, P90: v * 1.04, Max: v * 1.05}
	}
	tok := func(n int) *int { return &n }
	r := &results.ContextResult{}
	for _, d := range []struct {
		depth, got                    int
		prefill, decode, ttft, cached float64
	}{
		{0, 24, 0, 60, 40, 30},
		{1024, 1030, 2000, 55, 515, 45},
		{8192, 8200, 1500, 40, 5466, 80},
	} {
		cd := results.ContextDepth{Depth: d.depth, PromptTokens: tok(d.got), DecodeTPS: sp(d.decode), TTFTMs: sp(d.ttft), CachedTTFTMs: sp(d.cached)}
		if d.prefill > 0 {
			cd.PrefillTPS = sp(d.prefill)
		}
		r.Depths = append(r.Depths, cd)
	}
	return r
}

// Two charts against the prompt tokens each depth's prompt really had,
// on a log axis: prefill and decode; cold and cached TTFT.
func TestContextCharts(t *testing.T) {
	t.Parallel()
	specs := ContextCharts(contextResult(), Light())
	if len(specs) != 2 || specs[0].Title != ContextSpeedTitle || specs[1].Title != ContextTTFTTitle {
		t.Fatalf("got %d charts", len(specs))
	}
	for _, s := range specs {
		if !s.XLog || len(s.XTicks) != 3 || s.XTicks[0] != 24 || s.XTicks[2] != 8200 {
			t.Errorf("%s: log %v ticks %v, want the three depths' prompt tokens", s.Title, s.XLog, s.XTicks)
		}
		if _, err := Render(s); err != nil {
			t.Errorf("%s: %v", s.Title, err)
		}
	}
	speed, ttft := specs[0].Series, specs[1].Series
	if got, want := len(speed[0].X), 2; got != want { // depth 0 has no prefill rate
		t.Errorf("prefill points %d, want %d", got, want)
	}
	if speed[1].Y[2] != 40 || ttft[0].Y[2] != 5466 || ttft[1].Y[2] != 80 {
		t.Errorf("decode %v, cold %v, cached %v: want the medians", speed[1].Y, ttft[0].Y, ttft[1].Y)
	}
	if speed[0].Name != "prefill tok/s (cold)" || ttft[1].Name != "TTFT, cached follow-up" {
		t.Errorf("legends %q, %q", speed[0].Name, ttft[1].Name)
	}
}
