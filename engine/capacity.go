package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stats"
)

// The capacity plan (docs/plans.md): how many users at once the server
// serves within a service level. Closed-loop levels of the Kovara method,
// doubling from 1 until one misses the service level or the maximum is
// reached, then bisection between the last level that held and the first
// that missed, then both boundary levels once more, since a level that
// holds on one probe and misses on the next makes the answer a range.

// Capacity plan defaults.
const (
	capacityTolerance = 0.10
	// kneeGrowth is the throughput growth per doubling at or below which
	// the curve has its knee.
	kneeGrowth = 1.10
)

// CapacityProgress is where the search is, for the live view.
type CapacityProgress struct {
	Probing int // the level being measured; 0 between levels
	Step    string
	Held    int // the largest level that held so far; 0 none yet
	Missed  int // the smallest level above it that missed; 0 none yet
	Max     int
	// Done is the levels measured so far; Left estimates the levels still
	// to measure, the one being measured included, as if no level from
	// now on missed before the maximum (a miss ends the doubling early
	// and adds a bisection).
	Done, Left int
}

// String says it in words: "probing 12 users (bisecting: 8 held, 16 missed)".
func (p CapacityProgress) String() string {
	var b strings.Builder
	if p.Probing > 0 {
		fmt.Fprintf(&b, "probing %d concurrent %s", p.Probing, results.Plural(p.Probing, "user", "users"))
		switch p.Step {
		case results.StepBisect:
			b.WriteString(" (bisecting)")
		case results.StepRepeat:
			b.WriteString(" again (a boundary level, repeated)")
		}
	} else {
		b.WriteString("capacity search")
	}
	switch {
	case p.Held > 0 && p.Missed > 0:
		fmt.Fprintf(&b, "; so far %d held, %d missed", p.Held, p.Missed)
	case p.Held > 0:
		fmt.Fprintf(&b, "; so far up to %d held (maximum %d)", p.Held, p.Max)
	case p.Missed > 0:
		fmt.Fprintf(&b, "; so far %d missed", p.Missed)
	}
	return b.String()
}

// stage is how the live view says the probe p is at: "Capacity search:
// probing 16 concurrent users; so far up to 8 held (maximum 256) — 6 of
// 48 requests", "the probe at 16 users" in a title.
func (p CapacityProgress) stage() Stage {
	where := p.String()
	return Stage{Name: fmt.Sprintf("the probe at %d %s", p.Probing, results.Plural(p.Probing, "user", "users")), NameInWait: true,
		Line: func(done, total int) string {
			return fmt.Sprintf("Capacity search: %s — %d of %d requests", where, done, total)
		}}
}

// capacitySearch chooses the levels: doubling from 1 (the last step capped
// at max) until a level misses, bisection until the bracket is one apart or
// within the tolerance, then each end of the bracket once more.
type capacitySearch struct {
	max     int
	tol     float64
	lo, hi  int // the largest level that held; the smallest above it that missed (0: none)
	probes  []searchProbe
	repeats []int
	stepNow string
}

type searchProbe struct {
	c    int
	met  bool
	step string
	tps  float64 // total output tokens/s, for the knee
}

func newCapacitySearch(maxConc int, tol float64) *capacitySearch {
	return &capacitySearch{max: maxConc, tol: tol, stepNow: results.StepDouble}
}

// next is the next level to measure and its step; ok is false when the
// search is over.
func (s *capacitySearch) next() (c int, step string, ok bool) {
	switch s.stepNow {
	case results.StepDouble:
		if len(s.probes) == 0 {
			return 1, results.StepDouble, true
		}
		last := s.probes[len(s.probes)-1]
		if last.met && last.c < s.max {
			return min(2*last.c, s.max), results.StepDouble, true
		}
		s.stepNow = results.StepBisect
		return s.next()
	case results.StepBisect:
		if s.lo > 0 && s.hi > 0 && s.hi-s.lo > 1 && float64(s.hi) > float64(s.lo)*(1+s.tol) {
			return (s.lo + s.hi) / 2, results.StepBisect, true
		}
		s.stepNow = results.StepRepeat
		if s.lo > 0 {
			s.repeats = append(s.repeats, s.lo)
			if s.hi > 0 {
				s.repeats = append(s.repeats, s.hi)
			}
		}
		return s.next()
	case results.StepRepeat:
		if len(s.repeats) > 0 {
			c := s.repeats[0]
			s.repeats = s.repeats[1:]
			return c, results.StepRepeat, true
		}
	}
	return 0, "", false
}

// add records a measured level. Only the doubling and bisection steps
// move the bracket; repeats are judged by answer.
func (s *capacitySearch) add(c int, step string, met bool, tps float64) {
	s.probes = append(s.probes, searchProbe{c: c, met: met, step: step, tps: tps})
	if step == results.StepRepeat {
		return
	}
	if met && c > s.lo {
		s.lo = c
	}
	if !met && (s.hi == 0 || c < s.hi) {
		s.hi = c
	}
}

func (s *capacitySearch) progress(probing int, step string) CapacityProgress {
	p := CapacityProgress{Probing: probing, Step: step, Held: s.lo, Missed: s.hi, Max: s.max, Done: len(s.probes)}
	if probing == 0 {
		return p
	}
	switch step {
	case results.StepDouble:
		// This level, the doublings after it, and the maximum repeated.
		p.Left = 2
		for c := probing; c < s.max; c *= 2 {
			p.Left++
		}
	case results.StepBisect:
		// Halving what is left of the bracket, then both ends repeated.
		p.Left = 2
		for w := s.hi - s.lo; w > 1; w /= 2 {
			p.Left++
		}
	case results.StepRepeat:
		p.Left = len(s.repeats) + 1
	}
	return p
}

// answer reads the probes: the capacity is the largest level that met on
// every probe of it and of every level below it; a level above it that met
// on some probe, below the first that missed on all of them, makes the
// answer uncertain, up to that level.
func (s *capacitySearch) answer() results.CapacityAnswer {
	a := results.CapacityAnswer{Held: s.lo, Missed: s.hi}
	met, missed := map[int]int{}, map[int]int{}
	var levels []int
	for _, p := range s.probes {
		if met[p.c]+missed[p.c] == 0 {
			levels = append(levels, p.c)
		}
		if p.met {
			met[p.c]++
		} else {
			missed[p.c]++
		}
	}
	slices.Sort(levels)
	for _, c := range levels {
		if missed[c] > 0 {
			break
		}
		a.Capacity = c
	}
	a.RangeHigh = a.Capacity
	for _, c := range levels {
		if c <= a.Capacity {
			continue
		}
		if met[c] == 0 {
			break
		}
		a.RangeHigh = c
	}
	a.Uncertain = a.RangeHigh > a.Capacity
	for _, c := range levels {
		if c > a.Capacity && missed[c] > 0 {
			a.MissedAt = c
			break
		}
	}
	a.ReachedMax = a.MissedAt == 0 && a.Capacity == s.max
	a.Knee = s.knee()
	return a
}

// knee is the first level of the doubling beyond which total output
// tokens/s never grew by more than 10 % again: its double added 10 % or
// less (a fall included), and so did every level after. A flat stretch
// that a later level climbs out of is not the knee (a CPU llama-server
// grew 4 % from 1 to 2 users and 43 % from 4 to 8). results.KneeLine
// quotes the knee and its double.
func (s *capacitySearch) knee() *int {
	var doubling []searchProbe
	for _, p := range s.probes {
		if p.step == results.StepDouble {
			doubling = append(doubling, p)
		}
	}
next:
	for i := 0; i+1 < len(doubling); i++ {
		a := doubling[i]
		if doubling[i+1].c != 2*a.c {
			continue
		}
		for _, b := range doubling[i+1:] {
			if b.tps > a.tps*kneeGrowth {
				continue next
			}
		}
		c := a.c
		return &c
	}
	return nil
}

// missedOn is every limit that a probe of level c missed, in judge's
// order.
func missedOn(probes []results.CapacityProbe, c int) []string {
	out := []string{}
	for _, l := range []string{results.LimitErrors, results.LimitTTFT, results.LimitUserTPS} {
		for _, p := range probes {
			if p.Concurrency == c && slices.Contains(p.Missed, l) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// judge holds a level to the service level: the limits it missed, in the
// order errors, TTFT, per-user rate.
func judge(plan setup.CapacityPlan, m results.Metrics, userP5 *float64) []string {
	var missed []string
	if m.RequestsError+m.RequestsTimeout > 0 {
		missed = append(missed, results.LimitErrors)
	}
	if m.TTFTMs == nil || m.TTFTMs.P95 == nil || *m.TTFTMs.P95 > plan.TTFTP95Ms {
		missed = append(missed, results.LimitTTFT)
	}
	if userP5 == nil || *userP5 < plan.UserTPS {
		missed = append(missed, results.LimitUserTPS)
	}
	return missed
}

// userRates is the median and the 5th percentile of each success's
// output rate, 1000 / TPOT in tokens/s (tpot in ms, sorted ascending, so
// the slowest users are at its end).
func userRates(tpot []float64) (p50, p5 *float64) {
	if len(tpot) == 0 {
		return nil, nil
	}
	rates := make([]float64, 0, len(tpot))
	for _, t := range tpot {
		if t > 0 {
			rates = append(rates, 1000/t)
		}
	}
	if len(rates) == 0 {
		return nil, nil
	}
	slices.Sort(rates)
	a, b := math.Round(stats.Quantile(rates, 0.5)*10)/10, math.Round(stats.Quantile(rates, 0.05)*10)/10
	return &a, &b
}

// RunCapacity runs the capacity plan against ep. Like Run, it returns the
// result with an error only for an unusable plan or endpoint, a failed
// method step, or (with the levels done so far, marked incomplete) a stop
// wrapping ErrInterrupted.
func RunCapacity(ctx context.Context, plan setup.CapacityPlan, ep setup.Endpoint, obs Observer) (_ *results.CapacityResult, err error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	ctx, r, done, err := startRunner(ctx, plan.Kovara(), ep, obs, results.PlanCapacity)
	if err != nil {
		return nil, err
	}
	defer done(&err)
	obs.Live.start(r.clock, 0, 0)
	defer r.release()
	if err := r.prepare(ctx); err != nil {
		return nil, err
	}
	res := newCapacityResult(r, plan)
	search := newCapacitySearch(plan.MaxConcurrency, capacityTolerance)
	finish := func(complete bool) *results.CapacityResult {
		r.attachTelemetry()
		r.finish(complete)
		res.Complete = complete
		res.Answer = search.answer()
		res.Answer.MissedOn = missedOn(res.Probes, res.Answer.MissedAt)
		res.Runs, res.Local = r.file.Runs, r.file.Local
		return res
	}
	used := int64(0) // measured requests so far, for the prompt numbers
	for i := 0; ; i++ {
		c, step, ok := search.next()
		if !ok {
			break
		}
		at := search.progress(c, step)
		obs.Live.expectStages(at.Done, at.Left)
		n := setup.CapacityRequests(c)
		first := prompt.FirstWarmupRequest + int64(r.plan.Warmup) + used
		used += int64(n)
		lv, run, loc := r.measure(ctx, wholeLevel(i, c, n, first, fmt.Sprintf("probe %d (%s)", i+1, step), at.stage()))
		probe := capacityProbe(c, step, run, lv.tpot)
		if lv.interrupted {
			// Kept apart, as the Kovara method keeps its partial level:
			// its figures are shown, never judged or searched on.
			probe.Partial = true
			res.Partial = &probe
			loc.Partial = true
			r.file.Local.PartialRun = &run
			r.file.Local.Levels = append(r.file.Local.Levels, loc)
			r.obs.Live.setPhase(PhaseStopped)
			return finish(false), fmt.Errorf("probe %d (concurrency %d): %w", i+1, c, ErrInterrupted)
		}
		probe.Requests = n
		probe.Missed = judge(plan, run.Metrics, probe.UserTPSP5)
		probe.Met = len(probe.Missed) == 0
		if probe.Met {
			r.obs.logf("concurrency %d met the service level", c)
		} else {
			var on []string
			for _, l := range probe.Missed {
				on = append(on, results.LimitName(l))
			}
			r.obs.logf("concurrency %d missed on %s", c, strings.Join(on, ", "))
		}
		res.Probes = append(res.Probes, probe)
		r.file.Runs = append(r.file.Runs, run)
		r.file.Local.Levels = append(r.file.Local.Levels, loc)
		search.add(c, step, probe.Met, run.Metrics.OutputThroughput)
	}
	obs.Live.expectStages(len(search.probes), 0)
	r.obs.Live.setPhase(PhaseDone)
	return finish(true), nil
}

// capacityProbe is the figures of a probe of concurrency c measured as
// run, tpot its successes' times per output token: Requests counts the
// requests that ended (all of them, unless the run was stopped during
// the probe); the caller judges it.
func capacityProbe(c int, step string, run results.Run, tpot []float64) results.CapacityProbe {
	m := run.Metrics
	p50, p5 := userRates(tpot)
	p := results.CapacityProbe{
		Concurrency: c, Step: step, Requests: m.RequestsOK + m.RequestsError + m.RequestsTimeout,
		Failed:     m.RequestsError + m.RequestsTimeout,
		UserTPSP50: p50, UserTPSP5: p5, OutputTPS: m.OutputThroughput,
	}
	if d := m.TTFTMs; d != nil {
		p.TTFTP95Ms = d.P95
	}
	return p
}

func newCapacityResult(r *runner, plan setup.CapacityPlan) *results.CapacityResult {
	return &results.CapacityResult{
		PlanHeader: results.CapacityDoc.Header(r.t0, r.model),
		Settings: results.CapacitySettings{
			UserTPS: plan.UserTPS, TTFTP95Ms: plan.TTFTP95Ms,
			InputTokens: plan.InputTokens, OutputTokens: plan.OutputTokens,
			MaxConcurrency: plan.MaxConcurrency, Tolerance: capacityTolerance,
			RequestsRule: setup.CapacityRequestsRule,
			Warmup:       r.plan.Warmup, Seed: r.plan.Seed, TimeoutS: r.plan.Timeout.Seconds(),
			Client: ClientName, ClientVersion: Version,
		},
		Probes: []results.CapacityProbe{},
	}
}
