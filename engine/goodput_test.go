package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestLevelGoodput: a Kovara level's goodput counts the requests that met
// the service level, each on its own TTFT and TPOT: a request at a limit
// meets it, one a microsecond over does not, a failure never does; the
// share is of every request the level finished and the rate over its
// window. Then the same on a seeded synthetic level of 2,000 requests,
// against a count made here from the generator's own figures.
func TestLevelGoodput(t *testing.T) {
	t.Parallel()
	// req is a request sent at start with its first text ttft µs later
	// and tokens more, one every tpot µs.
	req := func(start, ttft, tpot int64, tokens int, errClass string) results.RequestSample {
		return results.RequestSample{StartUs: start, TTFTUs: ttft, EndUs: start + ttft + tpot*int64(tokens-1), ChunkCount: tokens,
			Usage: true, CompletionTokens: tokens, Error: errClass}
	}
	level := func(qs ...results.RequestSample) *results.LevelSamples {
		return &results.LevelSamples{StartUs: 0, EndUs: 2_000_000, Slots: 1, Requests: qs}
	}
	slo := &results.RateSLO{TTFTMs: 500, TPOTMs: 20}
	tests := []struct {
		name  string
		slo   *results.RateSLO
		s     *results.LevelSamples
		met   int
		share float64
		rate  float64
	}{
		{"at both limits", slo, level(req(0, 500_000, 20_000, 11, "")), 1, 1, 0.5},
		{"TTFT a µs over", slo, level(req(0, 500_001, 20_000, 11, "")), 0, 0, 0},
		{"TPOT just over", slo, level(req(0, 500_000, 20_001, 11, "")), 0, 0, 0},
		{"user tok/s just under", &results.RateSLO{UserTPS: 50}, level(req(0, 1, 20_001, 11, "")), 0, 0, 0},
		{"user tok/s at the limit", &results.RateSLO{UserTPS: 50}, level(req(0, 1, 20_000, 11, "")), 1, 1, 0.5},
		{"a failure within the limits", slo, level(req(0, 1, 1, 11, ClassTimeout)), 0, 0, 0},
		{"one of four", slo, level(req(0, 100_000, 10_000, 11, ""), req(1, 600_000, 10_000, 11, ""), req(2, 100_000, 30_000, 11, ""),
			req(3, 1, 1, 11, ClassConnection)), 1, 0.25, 0.5},
		{"no service level", nil, level(req(0, 1, 1, 11, "")), -1, 0, 0},
	}
	for _, tt := range tests {
		g := levelGoodput(tt.s, tt.slo, true)
		if tt.met < 0 {
			if g != nil {
				t.Errorf("%s: goodput %+v, want none", tt.name, *g)
			}
			continue
		}
		if g == nil || g.Met != tt.met || g.Share != tt.share || g.Rate != tt.rate {
			t.Errorf("%s: goodput %+v, want %d met, share %v, %v req/s", tt.name, g, tt.met, tt.share, tt.rate)
		}
	}

	// Seeded synthetic samples: TTFT around the limit, TPOT around its.
	rng := rand.New(rand.NewPCG(36, 2))
	var qs []results.RequestSample
	want := 0
	const n = 2000
	for i := range n {
		ttft := int64(400_000 + rng.IntN(200_001)) // 400–600 ms
		tpot := int64(15_000 + rng.IntN(10_001))   // 15–25 ms
		class := ""
		if rng.IntN(20) == 0 {
			class = ClassTimeout
		}
		qs = append(qs, req(int64(i)*1000, ttft, tpot, 11, class))
		if class == "" && ttft <= 500_000 && tpot <= 20_000 {
			want++
		}
	}
	s := &results.LevelSamples{StartUs: 0, EndUs: 10_000_000, Slots: 8, Requests: qs}
	g := levelGoodput(s, slo, true)
	if g == nil || g.Met != want {
		t.Fatalf("synthetic level: goodput %+v, want %d met", g, want)
	}
	if got, wantShare := g.Share, float64(int(float64(want)/n*1000+0.5))/1000; got != wantShare {
		t.Errorf("synthetic level: share %v, want %v", got, wantShare)
	}
	if got, wantRate := g.Rate, float64(int(float64(want)/10*1000+0.5))/1000; got != wantRate {
		t.Errorf("synthetic level: rate %v req/s, want %v", got, wantRate)
	}
	if want < n/10 || want > n/2 {
		t.Errorf("synthetic level: %d of %d met: the sample does not straddle the limits", want, n)
	}
}
