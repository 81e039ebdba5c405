package compare

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/stats"
)

// rateDoc is a rate result at 2 and 4 req/s whose requests take a
// lognormal latency around median ms (times scale at 4 req/s), seeded.
func rateDoc(seed uint64, median, scale float64) *results.RateResult {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := &results.RateResult{PlanHeader: results.RateDoc.Header(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), "m"),
		Settings: results.RateSettings{Rates: []float64{2, 4}, Arrival: "poisson", Burstiness: 1, MaxInFlight: 8, Requests: 64, InputTokens: 256, OutputTokens: 128}}
	for _, rate := range []float64{2, 4} {
		m := median
		if rate == 4 {
			m *= scale
		}
		s := &results.RateSamples{LevelSamples: results.LevelSamples{Slots: 8}}
		var lat, ttft []float64
		for k := range 64 {
			due := int64(float64(k) / rate * 1e6)
			l := m * math.Exp(0.2*rng.NormFloat64())
			s.Requests = append(s.Requests, results.RequestSample{Slot: k % 8, StartUs: due, EndUs: due + int64(l*1000), TTFTUs: int64(l * 100), ChunkCount: 128})
			s.DueUs = append(s.DueUs, due)
			lat, ttft = append(lat, l), append(ttft, l/10)
		}
		r.Levels = append(r.Levels, results.RateLevel{Rate: rate, Requests: 64, OK: 64, AchievedRate: rate, LatencyMs: stats.Summarize(lat), TTFTMs: stats.Summarize(ttft),
			Samples: s, Sustained: true})
	}
	return r
}

func TestRateTableJudgesNoiseFromSamples(t *testing.T) {
	t.Parallel()
	cell := func(rows []Row, id string) Cell {
		for _, r := range rows {
			if r.Metric.ID == id {
				return r.Cells[1]
			}
		}
		t.Fatalf("no row %s", id)
		return Cell{}
	}
	tests := []struct {
		name      string
		other     *results.RateResult
		id        string
		wantNoise Noise
		better    int
	}{
		{"the same server again, latency at 2 req/s", rateDoc(2, 1000, 1), "latency_p50@2", WithinNoise, 0},
		{"the same server again, latency at 4 req/s", rateDoc(2, 1000, 1), "latency_p50@4", WithinNoise, 0},
		{"30 % slower at 4 req/s", rateDoc(3, 1000, 1.3), "latency_p50@4", BeyondNoise, -1},
		{"30 % slower at 4 req/s, TTFT", rateDoc(3, 1000, 1.3), "ttft_p50@4", BeyondNoise, -1},
		{"30 % slower at 4 req/s, not at 2", rateDoc(3, 1000, 1.3), "latency_p50@2", WithinNoise, 0},
		{"achieved rate: one figure, not judged", rateDoc(3, 1000, 1.3), "achieved_rate@4", NoiseUnknown, 0},
	}
	for _, tc := range tests {
		rows := RateTable([]*results.RateResult{rateDoc(1, 1000, 1), tc.other}, nil)
		c := cell(rows, tc.id)
		if c.Noise != tc.wantNoise || c.Better != tc.better {
			t.Errorf("%s: %s, better %d (change %+.3f, CI %+.3f … %+.3f); want %s, better %d", tc.name, c.Noise, c.Better, c.Delta, c.Low, c.High, tc.wantNoise, tc.better)
		}
	}
	like, diffs := RateVerdict([]*results.RateResult{rateDoc(1, 1000, 1), rateDoc(2, 1000, 1)})
	if !like || len(diffs) != 0 {
		t.Errorf("like %v, %q; want like for like", like, diffs)
	}
	other := rateDoc(2, 1000, 1)
	other.Settings.MaxInFlight = 1
	if like, _ := RateVerdict([]*results.RateResult{rateDoc(1, 1000, 1), other}); like {
		t.Error("a run with another in-flight cap was called like for like")
	}
}

// TestRateWorkloadCompared: the share of prompt tokens from the server's
// cache is a row where a run has it and none where no run does, and runs
// of different workloads are not like for like.
func TestRateWorkloadCompared(t *testing.T) {
	t.Parallel()
	has := func(rows []Row, id string) (Cell, bool) {
		for _, r := range rows {
			if r.Metric.ID == id {
				return r.Cells[1], true
			}
		}
		return Cell{}, false
	}
	if _, ok := has(RateTable([]*results.RateResult{rateDoc(1, 1000, 1), rateDoc(2, 1000, 1)}, nil), "cached_share@2"); ok {
		t.Error("a cache row with no cache figure in either run")
	}
	cached := func(seed uint64, tokens int64) *results.RateResult {
		r := rateDoc(seed, 1000, 1)
		r.Settings.Workload = &results.Workload{SharedPrefix: 2000, SharedPrefixWords: int(seed) * 100}
		for i := range r.Levels {
			r.Levels[i].Cache = &results.PromptCache{CachedTokens: tokens, PromptTokens: 1000, Requests: 10, Source: results.CacheFromUsage}
		}
		return r
	}
	rows := RateTable([]*results.RateResult{cached(1, 500), cached(2, 800)}, nil)
	c, ok := has(rows, "cached_share@4")
	if !ok || !c.Present || c.Value != 80 {
		t.Fatalf("cache row %+v (present %v), want 80 %%", c, ok)
	}
	if like, diffs := RateVerdict([]*results.RateResult{cached(1, 500), cached(2, 800)}); !like {
		t.Errorf("the same shared prefix (words aside) not like for like: %q", diffs)
	}
	if like, diffs := RateVerdict([]*results.RateResult{rateDoc(1, 1000, 1), cached(2, 800)}); like || len(diffs) == 0 {
		t.Error("a shared-prefix run and a synthetic one called like for like")
	}
}
