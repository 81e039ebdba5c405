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
		// A flat stretch that a later level climbs out of is not the
		// knee: the real llama-server -np 8 grew 4 % from 1 to 2 users
		// and 43 % from 4 to 8.
		{"flat, then a climb", func(c int) float64 {
			return map[int]float64{1: 338.3, 2: 351.9, 4: 380.4, 8: 545.8, 16: 496.6, 32: 480}[c]
		}, 8},
		{"a fall at the end", func(c int) float64 { return map[int]float64{1: 100, 2: 190, 4: 350, 8: 600, 16: 30, 32: 20}[c] }, 8},
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
	// A queued third user waits a whole answer (24 tokens × 12 ms, about
	// 290 ms), far past the 120 ms ceiling; the two served users' TTFT is
	// a few ms, so a slow race-detector build on a busy machine keeps
	// them under it too.
	_, url := startSim(t, sim.Config{TokenInterval: 12 * time.Millisecond, PrefillRate: 200000, BatchCapacity: 2})
	live := NewLive()
	var snaps []CapacityProgress
	obs := Observer{Live: live, Log: func(string) {
		if sn := live.Snapshot(); sn.Capacity != nil {
			snaps = append(snaps, *sn.Capacity)
		}
	}}
	res, err := RunCapacity(context.Background(), capacityPlanFor(10, 120, 256), Endpoint{URL: url}, obs)
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
	// The headline quotes both probes of 2 (the search repeats it) and of 3.
	if h := res.Headline(); !strings.HasPrefix(h, "Your server holds 2 people at ≥ 10 tok/s each with TTFT p95 ≤ 120 ms; at 2, the first probe met both limits (TTFT p95 ") ||
		!strings.Contains(h, "; at 3, on the first probe TTFT p95 passes 120 ms (") || !strings.Contains(h, "and on the repeat TTFT p95 passes 120 ms (") {
		t.Errorf("headline %q", h)
	}
	if l := res.AnswerLine(); !strings.HasPrefix(l, "capacity: 2 concurrent users (per-user ≥ 10 tok/s, TTFT p95 ≤ 120 ms); 3 missed on TTFT p95") {
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
	r := llamaCapacity(t)
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
	// Total tok/s 448, 458, 523, 633, 638 at 1 to 16 users: it grew past
	// 10 % until 8, so the knee is 8 (the document was written when the
	// first flat doubling was taken for the knee, and said 1).
	if a.Knee == nil || *a.Knee != 8 || r.Answer.Knee == nil || *r.Answer.Knee != 8 {
		t.Errorf("replayed knee %v, recorded %v; want 8", a.Knee, r.Answer.Knee)
	}
	if a.Capacity != 8 || a.MissedAt != 9 || a.Uncertain || a.Capacity != r.Answer.Capacity || a.MissedAt != r.Answer.MissedAt {
		t.Errorf("replayed capacity %d (missed at %d, uncertain %v), recorded %d (missed at %d); want 8 with 9 missing",
			a.Capacity, a.MissedAt, a.Uncertain, r.Answer.Capacity, r.Answer.MissedAt)
	}
	if got, want := r.AnswerLine(), "capacity: 8 concurrent users (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms); 9 missed on TTFT p95"; got != want {
		t.Errorf("answer line %q, want %q", got, want)
	}
	// Both probes of 8 and of 9 decided the answer, so the headline
	// quotes all four.
	want := "Your server holds 8 people at ≥ 20 tok/s each with TTFT p95 ≤ 2 s; " +
		"at 8, the first probe met both limits (TTFT p95 1.06 s, the slowest 5 % at 84.6 tok/s), " +
		"and the repeat met both limits (TTFT p95 725 ms, the slowest 5 % at 95.7 tok/s); " +
		"at 9, on the first probe TTFT p95 passes 2 s (2.45 s, 1.2× the ceiling), " +
		"and on the repeat TTFT p95 passes 2 s (2.32 s, 1.2× the ceiling)."
	if got := r.Headline(); got != want {
		t.Errorf("headline\n%q\nwant\n%q", got, want)
	}
}

// disturbedCapacity is the search the issue saw (docs/plans.md): a quiet
// first doubling, then something else takes the machine: 4 users get a
// twentieth of the throughput and 3 misses TTFT p95 on its first probe,
// while the repeat at 3 meets the service level. The answer, the knee
// and the missed limits are the search's own, replayed from the probes.
func disturbedCapacity(t *testing.T) *results.CapacityResult {
	t.Helper()
	f := func(v float64) *float64 { return &v }
	probes := []results.CapacityProbe{
		{Concurrency: 1, Requests: 20, Step: results.StepDouble, Met: true, UserTPSP50: f(300), UserTPSP5: f(280), TTFTP95Ms: f(150), OutputTPS: 290},
		{Concurrency: 2, Requests: 20, Step: results.StepDouble, Met: true, UserTPSP50: f(250), UserTPSP5: f(230), TTFTP95Ms: f(300), OutputTPS: 480},
		{Concurrency: 4, Requests: 20, Step: results.StepDouble, Missed: []string{results.LimitTTFT, results.LimitUserTPS}, UserTPSP50: f(6), UserTPSP5: f(3), TTFTP95Ms: f(9000), OutputTPS: 24},
		{Concurrency: 3, Requests: 20, Step: results.StepBisect, Missed: []string{results.LimitTTFT}, UserTPSP50: f(26), UserTPSP5: f(21), TTFTP95Ms: f(3200), OutputTPS: 70},
		{Concurrency: 2, Requests: 20, Step: results.StepRepeat, Met: true, UserTPSP50: f(248), UserTPSP5: f(228), TTFTP95Ms: f(310), OutputTPS: 470},
		{Concurrency: 3, Requests: 20, Step: results.StepRepeat, Met: true, UserTPSP50: f(124), UserTPSP5: f(110), TTFTP95Ms: f(491), OutputTPS: 350},
	}
	s := newCapacitySearch(256, capacityTolerance)
	for i, p := range probes {
		c, step, ok := s.next()
		if !ok || c != p.Concurrency || step != p.Step {
			t.Fatalf("probe %d: the search asks for %d (%s, %v), the scenario has %d (%s)", i, c, step, ok, p.Concurrency, p.Step)
		}
		s.add(c, step, p.Met, p.OutputTPS)
	}
	if _, _, ok := s.next(); ok {
		t.Fatal("the search goes on after the scenario's last probe")
	}
	r := &results.CapacityResult{
		Format: results.FormatCapacity, FormatVersion: 1, Complete: true,
		Settings: results.CapacitySettings{UserTPS: 20, TTFTP95Ms: 2000, InputTokens: 1024, OutputTokens: 256, MaxConcurrency: 256},
		Probes:   probes,
		Answer:   s.answer(),
	}
	r.Answer.MissedOn = missedOn(probes, r.Answer.MissedAt)
	return r
}

// TestCapacityDisturbedHeadline: the answer's sentence quotes every probe
// of the level that held and of the level above it, not only the first
// probe of each; here the failing first probe at 3 and its passing repeat.
func TestCapacityDisturbedHeadline(t *testing.T) {
	t.Parallel()
	r := disturbedCapacity(t)
	if a := r.Answer; a.Capacity != 2 || !a.Uncertain || a.RangeHigh != 3 || a.MissedAt != 3 || a.Knee == nil || *a.Knee != 2 {
		t.Fatalf("answer %+v, want 2 to 3 (uncertain), missed at 3, knee 2", a)
	}
	want := "Your server holds 2 to 3 people at ≥ 20 tok/s each with TTFT p95 ≤ 2 s; the result is uncertain: " +
		"a level in that range met the limits on one probe and missed on another, so 2 is the safe answer; " +
		"at 2, the first probe met both limits (TTFT p95 300 ms, the slowest 5 % at 230.0 tok/s), " +
		"and the repeat met both limits (TTFT p95 310 ms, the slowest 5 % at 228.0 tok/s); " +
		"at 3, on the first probe TTFT p95 passes 2 s (3.2 s, 1.6× the ceiling), " +
		"while the repeat met both limits (TTFT p95 491 ms, the slowest 5 % at 110.0 tok/s)."
	if got := r.Headline(); got != want {
		t.Errorf("headline\n%q\nwant\n%q", got, want)
	}
}

// TestCapacityKneeLine: the knee's sentence says what total throughput
// did past the knee, with both levels' numbers: a fall is a fall.
func TestCapacityKneeLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		from, to float64
		want     string
	}{
		{"fell", 480, 24, "throughput knee: 2 concurrent users; total tokens/s fell 95 % from 2 to 4 users (480.0 to 24.0 tok/s)"},
		{"grew a little", 480, 518, "throughput knee: 2 concurrent users; doubling to 4 users added 8 % to total tokens/s, 10 % or less (480.0 to 518.0 tok/s)"},
		{"flat", 480, 479, "throughput knee: 2 concurrent users; total tokens/s stayed flat from 2 to 4 users (480.0 to 479.0 tok/s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := disturbedCapacity(t)
			r.Probes[1].OutputTPS, r.Probes[2].OutputTPS = tt.from, tt.to
			if got := r.KneeLine(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	// The llama-server capture grew 1 % from 8 users to 16.
	r := llamaCapacity(t)
	if got, want := r.KneeLine(), "throughput knee: 8 concurrent users; doubling to 16 users added 1 % to total tokens/s, 10 % or less (632.6 to 638.0 tok/s)"; got != want {
		t.Errorf("llama-server capture: got %q, want %q", got, want)
	}
}

// TestCapacityProbesDisagree: probes of one level far apart in throughput
// are a problem that names the level and both probes' numbers; probes on
// both sides of the service level with throughput within noise are a
// note; agreeing repeats say nothing.
func TestCapacityProbesDisagree(t *testing.T) {
	t.Parallel()
	disagreeing := func(r *results.CapacityResult) []results.Warning {
		var out []results.Warning
		for _, w := range r.Warnings() {
			if w.Kind == results.WarnProbesDisagree {
				out = append(out, w)
			}
		}
		return out
	}
	r := disturbedCapacity(t)
	ws := disagreeing(r)
	want := "The two probes at 3 users disagree (per-user p50 26.0 vs 124.0 tok/s, total 70.0 vs 350.0 tok/s, TTFT p95 3.2 s vs 491 ms; " +
		"one met the service level and one missed it): throughput that far apart is beyond run-to-run noise, " +
		"so something else used the server or this machine during the search; run it again on a quiet machine"
	if len(ws) != 1 || ws[0].Severity != results.SeverityProblem || ws[0].Text != want {
		t.Errorf("warnings %+v, want one problem:\n%q", ws, want)
	}
	if problems, _ := results.Split(r.Warnings()); len(problems) == 0 || problems[0] != want {
		t.Errorf("problems %q, want the disagreement among them", problems)
	}

	// Both met at 3, the repeat at twice the throughput: still disturbed.
	r = disturbedCapacity(t)
	r.Probes[3].Met, r.Probes[3].Missed = true, nil
	if ws := disagreeing(r); len(ws) != 1 || ws[0].Severity != results.SeverityProblem || !strings.Contains(ws[0].Text, "all met the service level") {
		t.Errorf("throughput apart, both met: %+v", ws)
	}

	// One met and one missed with the same throughput: on the edge.
	r = disturbedCapacity(t)
	r.Probes[3].UserTPSP50, r.Probes[3].OutputTPS = r.Probes[5].UserTPSP50, 340
	ws = disagreeing(r)
	if len(ws) != 1 || ws[0].Severity != results.SeverityNote || !strings.HasPrefix(ws[0].Text,
		"The two probes at 3 users disagree: one met the service level and one missed it, with throughput within run-to-run noise (per-user p50 124.0 vs 124.0 tok/s, total 340.0 vs 350.0 tok/s") {
		t.Errorf("on the edge: %+v", ws)
	}

	// The llama-server capture's repeats agree (632.6 and 730.6 tok/s at 8).
	if ws := disagreeing(llamaCapacity(t)); len(ws) != 0 {
		t.Errorf("llama-server capture: %+v, want none", ws)
	}
}

// llamaCapacity is the capacity document a real llama-server answered
// (docs/plans.md).
func llamaCapacity(t *testing.T) *results.CapacityResult {
	t.Helper()
	data, err := os.ReadFile(llamaCaptures + "/capacity.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := results.DecodeCapacity(data)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
