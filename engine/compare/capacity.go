package compare

import (
	"fmt"

	"github.com/kovara/desktop/engine/results"
)

// CapacityMetrics are the capacity plan's answers, side by side; the
// numbers at the capacity are those of its first probe.
var CapacityMetrics = []DocMetric[results.CapacityResult]{
	{"capacity", "capacity", "users", HigherBetter, func(r *results.CapacityResult) (float64, bool) {
		return float64(r.Answer.Capacity), true
	}},
	{"range_high", "capacity, upper end when uncertain", "users", HigherBetter, func(r *results.CapacityResult) (float64, bool) {
		return float64(r.Answer.RangeHigh), r.Answer.Uncertain
	}},
	{"knee", "throughput knee", "users", Neutral, func(r *results.CapacityResult) (float64, bool) {
		if r.Answer.Knee == nil {
			return 0, false
		}
		return float64(*r.Answer.Knee), true
	}},
	{"output_tps", "output at capacity", "tok/s", HigherBetter, atCapacity(func(p *results.CapacityProbe) (float64, bool) {
		return p.OutputTPS, true
	})},
	{"user_tps_p5", "per-user at capacity, p5", "tok/s", HigherBetter, atCapacity(func(p *results.CapacityProbe) (float64, bool) {
		return opt(p.UserTPSP5)
	})},
	{"ttft_p95", "TTFT p95 at capacity", "ms", LowerBetter, atCapacity(func(p *results.CapacityProbe) (float64, bool) {
		return opt(p.TTFTP95Ms)
	})},
}

func atCapacity(get func(*results.CapacityProbe) (float64, bool)) func(*results.CapacityResult) (float64, bool) {
	return func(r *results.CapacityResult) (float64, bool) {
		p := r.ProbeOf(r.Answer.Capacity)
		if p == nil {
			return 0, false
		}
		return get(p)
	}
}

// CapacityTable is a metric × run table of capacity results, with the
// change against the first.
func CapacityTable(docs []*results.CapacityResult, labels []string) []Row {
	rows := docTable(docs, labels, CapacityMetrics)
	singleFigures(rows)
	return rows
}

// CapacityVerdict says whether capacity results answer the same question:
// the same service level, prompt and answer lengths. The server, engine
// and model are what people compare, so they are not held against them.
func CapacityVerdict(docs []*results.CapacityResult) (bool, []string) {
	return likeForLike(docs, func(r *results.CapacityResult) []setting {
		s := r.Settings
		return []setting{{"service level", s.SLO()}, {"input tokens", fmt.Sprint(s.InputTokens)}, {"output tokens", fmt.Sprint(s.OutputTokens)}}
	})
}
