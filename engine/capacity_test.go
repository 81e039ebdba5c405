package engine

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// searchWith runs the search against a scripted server: met(c, k) says
// whether the k-th probe (0-based) of level c meets the service level.
func searchWith(maxConc int, met func(c, k int) bool, tps func(c int) float64) ([]int, results.CapacityAnswer) {
	s := newCapacitySearch(maxConc, capacityTolerance)
	seen := map[int]int{}
	var order []int
	for {
		c, step, ok := s.next()
		if !ok {
			break
		}
		order = append(order, c)
		s.add(c, step, met(c, seen[c]), tps(c))
		seen[c]++
	}
	return order, s.answer()
}

func below(n int) func(c, k int) bool { return func(c, _ int) bool { return c <= n } }

func linearTPS(c int) float64 { return 100 * float64(c) }

func TestCapacitySearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		max       int
		met       func(c, k int) bool
		tps       func(c int) float64
		order     []int
		capacity  int
		missedAt  int
		uncertain bool
		high      int
		reached   bool
	}{
		{name: "eight slots", max: 256, met: below(8), tps: linearTPS,
			order: []int{1, 2, 4, 8, 16, 12, 10, 9, 8, 9}, capacity: 8, missedAt: 9, high: 8},
		{name: "within ten percent", max: 256, met: below(20), tps: linearTPS,
			order: []int{1, 2, 4, 8, 16, 32, 24, 20, 22, 20, 22}, capacity: 20, missedAt: 22, high: 20},
		{name: "one user misses", max: 256, met: below(0), tps: linearTPS,
			order: []int{1}, capacity: 0, missedAt: 1},
		{name: "the maximum holds", max: 6, met: below(100), tps: linearTPS,
			order: []int{1, 2, 4, 6, 6}, capacity: 6, high: 6, reached: true},
		{name: "a repeat misses", max: 256, met: func(c, k int) bool { return c <= 5 || (c <= 6 && k == 0) }, tps: linearTPS,
			order: []int{1, 2, 4, 8, 6, 7, 6, 7}, capacity: 4, missedAt: 6, uncertain: true, high: 6},
		{name: "a repeat meets above", max: 256, met: func(c, k int) bool { return c <= 6 || (c == 7 && k == 1) }, tps: linearTPS,
			order: []int{1, 2, 4, 8, 6, 7, 6, 7}, capacity: 6, missedAt: 7, uncertain: true, high: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			order, a := searchWith(tt.max, tt.met, tt.tps)
			if !slices.Equal(order, tt.order) {
				t.Errorf("probed %v, want %v", order, tt.order)
			}
			if a.Capacity != tt.capacity || a.MissedAt != tt.missedAt || a.Uncertain != tt.uncertain || a.RangeHigh != tt.high || a.ReachedMax != tt.reached {
				t.Errorf("got capacity %d, missed at %d, uncertain %v up to %d, reached max %v; want %d, %d, %v, %d, %v",
					a.Capacity, a.MissedAt, a.Uncertain, a.RangeHigh, a.ReachedMax, tt.capacity, tt.missedAt, tt.uncertain, tt.high, tt.reached)
			}
		})
	}
}

func TestCapacityKnee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tps  func(c int) float64
		want int // 0: none
	}{
		{"flat past 8", func(c int) float64 { return 100 * float64(min(c, 8)) }, 8},
		{"slowing growth", func(c int) float64 { return map[int]float64{1: 100, 2: 180, 4: 300, 8: 320, 16: 330, 32: 330}[c] }, 4},
		{"still growing", linearTPS, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, a := searchWith(32, below(32), tt.tps)
			got := 0
			if a.Knee != nil {
				got = *a.Knee
			}
			if got != tt.want {
				t.Errorf("knee %d, want %d", got, tt.want)
			}
		})
	}
}

func TestUserRates(t *testing.T) {
	t.Parallel()
	// TPOT 10 ms is 100 tok/s; the slowest twentieth is at 50 ms.
	tpot := []float64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 50}
	p50, p5 := userRates(tpot)
	if p50 == nil || *p50 != 100 {
		t.Errorf("p50 %v, want 100", p50)
	}
	// Type 7 at 0.05 of 20 sorted rates: between the 20 (index 0) and
	// 100 (index 1) at 0.95 of the way.
	if p5 == nil || *p5 != 96 {
		t.Errorf("p5 %v, want 96", p5)
	}
}

func TestCapacityPlanValidate(t *testing.T) {
	t.Parallel()
	p := DefaultCapacityPlan()
	if err := p.Validate(); err != nil {
		t.Fatalf("default plan: %v", err)
	}
	p.UserTPS, p.TTFTP95Ms, p.MaxConcurrency = 0, -1, 0
	err := p.Validate()
	for _, want := range []string{"per-user tok/s floor", "TTFT p95 ceiling", "maximum concurrency 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to mention %q", err, want)
		}
	}
}

// capacityPlanFor is a short capacity plan for the simulator.
func capacityPlanFor(userTPS, ttftMs float64, maxConc int) CapacityPlan {
	p := DefaultCapacityPlan()
	p.InputTokens, p.OutputTokens, p.Warmup = 128, 24, 4
	p.Timeout = 30 * time.Second
	p.UserTPS, p.TTFTP95Ms, p.MaxConcurrency = userTPS, ttftMs, maxConc
	return p
}

// TestCapacityRecords runs the plan against a server with two slots whose
// answers take far longer than the TTFT ceiling: a third user waits a
// whole answer. The answer, the probes and the records must agree.
func TestCapacityRecords(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{TokenInterval: 4 * time.Millisecond, PrefillRate: 200000, BatchCapacity: 2})
	live := NewLive()
	var snaps []CapacityProgress
	obs := Observer{Live: live, Log: func(string) {
		if sn := live.Snapshot(); sn.Capacity != nil {
			snaps = append(snaps, *sn.Capacity)
		}
	}}
	res, err := RunCapacity(context.Background(), capacityPlanFor(10, 40, 256), Endpoint{URL: url}, obs)
	if err != nil {
		t.Fatal(err)
	}
	a := res.Answer
	if a.Capacity != 2 || a.MissedAt != 3 || a.Uncertain || !res.Complete {
		t.Fatalf("answer %+v complete %v, want capacity 2, missed at 3; probes %+v", a, res.Complete, res.Probes)
	}
	if !slices.Equal(res.Answer.MissedOn, []string{results.LimitTTFT}) {
		t.Errorf("missed on %v, want TTFT p95 only", a.MissedOn)
	}
	if len(res.Runs) != len(res.Probes) || len(res.Local.Levels) != len(res.Probes) {
		t.Fatalf("%d runs, %d local levels, %d probes: want one of each per probe", len(res.Runs), len(res.Local.Levels), len(res.Probes))
	}
	for i, p := range res.Probes {
		run := res.Runs[i]
		if run.Concurrency != p.Concurrency || run.Requests != CapacityRequests(p.Concurrency) || run.Metrics.RequestsOK != run.Requests {
			t.Errorf("probe %d: run concurrency %d requests %d ok %d, want %d, %d, all", i, run.Concurrency, run.Requests, run.Metrics.RequestsOK, p.Concurrency, CapacityRequests(p.Concurrency))
		}
		if p.UserTPSP5 == nil || p.TTFTP95Ms == nil || *p.TTFTP95Ms != *run.Metrics.TTFTMs.P95 {
			t.Errorf("probe %d: per-user p5 %v, TTFT p95 %v; want both, the latter the record's", i, p.UserTPSP5, p.TTFTP95Ms)
		}
	}
	if res.Settings.RequestsRule != "max(20, 3 × concurrency)" || res.Local.Plan != "capacity" {
		t.Errorf("settings %+v, local plan %q", res.Settings, res.Local.Plan)
	}
	data, err := results.MarshalCapacity(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.DecodeCapacity(data)
	if err != nil || back.Answer.Capacity != 2 || len(back.Runs) != len(res.Runs) {
		t.Fatalf("round trip: %v, %+v", err, back)
	}
	if h := res.Headline(); !strings.HasPrefix(h, "Your server holds 2 people at ≥ 10 tok/s each with TTFT p95 ≤ 40 ms; at 3, TTFT p95 passes 40 ms (") {
		t.Errorf("headline %q", h)
	}
	if l := res.AnswerLine(); !strings.HasPrefix(l, "capacity: 2 concurrent users (per-user ≥ 10 tok/s, TTFT p95 ≤ 40 ms); 3 missed on TTFT p95") {
		t.Errorf("answer line %q", l)
	}
	if len(snaps) == 0 || !slices.ContainsFunc(snaps, func(p CapacityProgress) bool { return p.Held == 2 && p.Missed == 4 }) {
		t.Errorf("live progress %+v, want the bracket 2..4 shown while bisecting", snaps)
	}
}

func TestCapacityOneUserMisses(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	res, err := RunCapacity(context.Background(), capacityPlanFor(1e6, 1000, 256), Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer.Capacity != 0 || len(res.Probes) != 1 || res.Answer.MissedAt != 1 {
		t.Fatalf("answer %+v after %d probes, want 0 after one", res.Answer, len(res.Probes))
	}
	if h := res.Headline(); !strings.Contains(h, "Even one person at a time misses") || !strings.Contains(h, "per-user speed falls below 1000000 tok/s (the slowest 5 % got") {
		t.Errorf("headline %q", h)
	}
}

func TestCapacityErrorsMiss(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Faults = func(n int64) sim.Fault {
		if n >= prompt.FirstWarmupRequest && n%7 == 3 {
			return sim.Fault503
		}
		return ""
	}
	_, url := startSim(t, cfg)
	p := capacityPlanFor(1, 10000, 4)
	p.Warmup = 0
	res, err := RunCapacity(context.Background(), p, Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer.Capacity != 0 || res.Probes[0].Missed[0] != results.LimitErrors {
		t.Fatalf("answer %+v, first probe %+v: want a miss on errors", res.Answer, res.Probes[0])
	}
}

func TestCapacityInterrupted(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{TokenInterval: 20 * time.Millisecond, PrefillRate: 200000})
	ctx, cancel := context.WithCancel(context.Background())
	obs := Observer{Log: func(s string) {
		if strings.HasPrefix(s, "probe 2 ") {
			cancel()
		}
	}}
	res, err := RunCapacity(ctx, capacityPlanFor(1, 10000, 256), Endpoint{URL: url}, obs)
	if !errors.Is(err, ErrInterrupted) || res == nil || res.Complete || len(res.Probes) != 1 {
		t.Fatalf("err %v, result %+v: want an incomplete result with the first probe", err, res)
	}
	if !strings.HasPrefix(res.Headline(), "Stopped before the search ended") {
		t.Errorf("headline %q", res.Headline())
	}
}

// TestTruthCapacity holds the plan's answer to the simulator's load model
// (batch-size-limited decode, six slots, the rest queued) for three
// service levels: one bound by the slots (TTFT), two by the decode rate.
// Each answer must equal sim.Config.Capacity exactly. The boundaries are
// 9 % or more away from every level's nominal numbers.
func TestTruthCapacity(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing-sensitive: checked without -race and -short (make test-truth)")
	}
	pc := simProcConfig{TokenInterval: 4 * time.Millisecond, PrefillRate: 100000, BatchSlowdown: 0.5, BatchCapacity: 6}
	url := startSimProcess(t, pc)
	model := sim.Config{TokenInterval: pc.TokenInterval, PrefillRate: pc.PrefillRate, BatchSlowdown: pc.BatchSlowdown, BatchCapacity: pc.BatchCapacity}
	for _, tc := range []struct {
		userTPS, ttftMs float64
		knee            int
	}{
		{50, 60, 4}, // slots: per-user 71 tok/s at 6, a 7th user waits a 320 ms answer
		{140, 60, 0},
		{92, 60, 0},
	} {
		p := capacityPlanFor(tc.userTPS, tc.ttftMs, 256)
		want, err := model.Capacity(sim.ServiceLevel{UserTPS: tc.userTPS, TTFTP95: time.Duration(tc.ttftMs * float64(time.Millisecond)),
			PromptWords: p.InputTokens, OutputTokens: p.OutputTokens, MaxConcurrency: p.MaxConcurrency})
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunCapacity(context.Background(), p, Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range res.Probes {
			t.Logf("SLO %v tok/s, %v ms: c=%d %s met=%v per-user p50 %v p5 %v TTFT p95 %v tps %.0f", tc.userTPS, tc.ttftMs,
				pr.Concurrency, pr.Step, pr.Met, deref(pr.UserTPSP50), deref(pr.UserTPSP5), deref(pr.TTFTP95Ms), pr.OutputTPS)
		}
		if a := res.Answer; a.Capacity != want || a.Uncertain {
			t.Errorf("SLO %v tok/s, %v ms: capacity %d (uncertain %v, up to %d), want %d", tc.userTPS, tc.ttftMs, a.Capacity, a.Uncertain, a.RangeHigh, want)
		}
		if tc.knee > 0 && (res.Answer.Knee == nil || *res.Answer.Knee != tc.knee) {
			t.Errorf("SLO %v tok/s: knee %v, want %d", tc.userTPS, res.Answer.Knee, tc.knee)
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestCapacityProgressLeft: the estimate of levels left shrinks as the
// search goes on, and the last level leaves one.
func TestCapacityProgressLeft(t *testing.T) {
	t.Parallel()
	s := newCapacitySearch(256, capacityTolerance)
	var fractions []float64
	for {
		c, step, ok := s.next()
		if !ok {
			break
		}
		p := s.progress(c, step)
		if p.Left < 1 {
			t.Fatalf("probing %d (%s): %d left, want at least this one", c, step, p.Left)
		}
		fractions = append(fractions, float64(p.Done)/float64(p.Done+p.Left))
		s.add(c, step, c <= 8, 1)
	}
	if last := s.progress(9, results.StepRepeat); last.Left != 1 {
		t.Errorf("the last repeat leaves %d, want 1", last.Left)
	}
	if !slices.IsSorted(fractions) {
		t.Errorf("progress went backwards: %v", fractions)
	}
}

// TestCapacityLlamaReplay holds the search to what a real llama-server
// (-np 8, CPU, the tiny model; docs/servers.md) did: its recorded probes,
// judged again from their run records, drive the same search to the same
// order and the same answer, 8 users, with 9 missing on TTFT p95 because
// the ninth request queues behind a whole answer.
func TestCapacityLlamaReplay(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(llamaCaptures + "/capacity.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.DecodeCapacity(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Runs) != len(r.Probes) {
		t.Fatalf("%d runs for %d probes", len(r.Runs), len(r.Probes))
	}
	plan := DefaultCapacityPlan()
	plan.UserTPS, plan.TTFTP95Ms = r.Settings.UserTPS, r.Settings.TTFTP95Ms
	outcome := map[int][]bool{}
	var recorded []int
	for i, p := range r.Probes {
		run := r.Runs[i]
		if run.Concurrency != p.Concurrency || run.Requests != p.Requests || p.Requests != CapacityRequests(p.Concurrency) {
			t.Errorf("probe %d: concurrency %d with %d requests, run %d with %d", i, p.Concurrency, p.Requests, run.Concurrency, run.Requests)
		}
		if got, want := *p.TTFTP95Ms, *run.Metrics.TTFTMs.P95; got != want {
			t.Errorf("probe %d: TTFT p95 %v, its run says %v", i, got, want)
		}
		missed := judge(plan, run.Metrics, p.UserTPSP5)
		if !slices.Equal(missed, p.Missed) {
			t.Errorf("probe %d (concurrency %d): judged %v, recorded %v", i, p.Concurrency, missed, p.Missed)
		}
		outcome[p.Concurrency] = append(outcome[p.Concurrency], len(missed) == 0)
		recorded = append(recorded, p.Concurrency)
	}
	tps := map[int]float64{}
	for _, p := range r.Probes {
		tps[p.Concurrency] = p.OutputTPS
	}
	order, a := searchWith(r.Settings.MaxConcurrency,
		func(c, k int) bool { return outcome[c][k] },
		func(c int) float64 { return tps[c] })
	if !slices.Equal(order, recorded) {
		t.Errorf("replayed order %v, recorded %v", order, recorded)
	}
	if a.Capacity != 8 || a.MissedAt != 9 || a.Uncertain || a.Capacity != r.Answer.Capacity || a.MissedAt != r.Answer.MissedAt {
		t.Errorf("replayed capacity %d (missed at %d, uncertain %v), recorded %d (missed at %d); want 8 with 9 missing",
			a.Capacity, a.MissedAt, a.Uncertain, r.Answer.Capacity, r.Answer.MissedAt)
	}
	if got, want := r.AnswerLine(), "capacity: 8 concurrent users (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms); 9 missed on TTFT p95"; got != want {
		t.Errorf("answer line %q, want %q", got, want)
	}
}
