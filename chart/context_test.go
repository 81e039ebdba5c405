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
		{0, 24, 6000, 60, 40, 30},
		{1024, 1030, 2000, 55, 515, 45},
		{8192, 8200, 1500, 40, 5466, 80},
	} {
		cd := results.ContextDepth{Depth: d.depth, PromptTokens: tok(d.got), DecodeTPS: sp(d.decode), TTFTMs: sp(d.ttft), CachedTTFTMs: sp(d.cached)}
		cd.PrefillTPS = sp(d.prefill)
		r.Depths = append(r.Depths, cd)
	}
	return r
}

// Two charts against the prompt tokens each depth's prompt really had,
// on a log axis: prefill and decode; cold and cached TTFT.
func TestContextCharts(t *testing.T) {
	t.Parallel()
	specs := ContextCharts(contextResult(), Light())
	if len(specs) != 3 || specs[0].Title != ContextPrefillTitle || specs[1].Title != ContextDecodeTitle || specs[2].Title != ContextTTFTTitle {
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
	prefill, decode, ttft := specs[0].Series, specs[1].Series, specs[2].Series
	if got, want := len(prefill[0].X), 2; got != want { // the short prompt has no prefill point
		t.Errorf("prefill points %d, want %d", got, want)
	}
	if decode[0].Y[2] != 40 || ttft[0].Y[2] != 5466 || ttft[1].Y[2] != 80 {
		t.Errorf("decode %v, cold %v, cached %v: want the medians", decode[0].Y, ttft[0].Y, ttft[1].Y)
	}
	if prefill[0].Name != "prefill tok/s (cold)" || ttft[1].Name != "TTFT, cached follow-up" {
		t.Errorf("legends %q, %q", prefill[0].Name, ttft[1].Name)
	}
}
