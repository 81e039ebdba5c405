package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// tuneRuns are two settings' runs over rounds taken in TuneOrder, from a
// seeded generator: each run's output tok/s is base × (1 + change for
// the second setting) × the machine's state at the time it ran (a drift
// along the whole session, plus noise of sd a run).
func tuneRuns(seed uint64, rounds int, change, drift, sd float64) []results.TuneRun {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []results.TuneRun
	t := 0
	for r := range rounds {
		for pos, s := range TuneOrder(2, r) {
			state := (1 + drift*float64(t)/float64(2*rounds)) * (1 + sd*rng.NormFloat64())
			t++
			v := 100 * state
			if s == 1 {
				v *= 1 + change
			}
			out = append(out, results.TuneRun{Setting: s, Round: r + 1, Position: pos + 1, Levels: []results.TuneLevel{
				{Concurrency: 8, Values: map[string]float64{"output_throughput": v, "ttft_p95": 1000 / state}},
			}})
		}
	}
	return out
}

func verdictOf(vs []results.TuneVerdict, id string) results.TuneVerdict {
	i := slices.IndexFunc(vs, func(v results.TuneVerdict) bool { return v.Metric == id })
	if i < 0 {
		return results.TuneVerdict{}
	}
	return vs[i]
}

// The paired verdict on seeded sessions: with the default rounds a 10 %
// change is called in its direction through 2 % noise and a 15 % drift
// across the session, and nothing is called between two settings that
// are the same; a change under its least change is never called, and one
// round judges nothing.
func TestTuneVerdicts(t *testing.T) {
	t.Parallel()
	const rounds = 5
	for seed := uint64(1); seed <= 20; seed++ {
		v := verdictOf(TuneVerdicts(tuneRuns(seed, rounds, 0.10, 0.15, 0.02), 2), "output_throughput")
		// Its interval holds the true change at 95 %: over 20 seeds one may
		// miss it, by a little.
		if v.Verdict != results.TuneBetter || v.Rounds != rounds || math.Abs(v.Change-0.10) > 0.04 {
			t.Errorf("seed %d, 10 %% faster: %+v", seed, v)
		}
		same := TuneVerdicts(tuneRuns(seed, rounds, 0, 0.15, 0.02), 2)
		for _, v := range same {
			if v.Called() {
				t.Errorf("seed %d, the same setting twice: %s called %s (%+.1f %%, %+.1f … %+.1f)", seed, v.Metric, v.Verdict, 100*v.Change, 100*v.Low, 100*v.High)
			}
		}
		slow := verdictOf(TuneVerdicts(tuneRuns(seed, rounds, -0.10, 0.15, 0.02), 2), "output_throughput")
		if slow.Verdict != results.TuneWorse {
			t.Errorf("seed %d, 10 %% slower: %+v", seed, slow)
		}
		tiny := verdictOf(TuneVerdicts(tuneRuns(seed, rounds, 0.015, 0, 0.001), 2), "output_throughput")
		if tiny.Called() || !(tiny.Low > 0) {
			t.Errorf("seed %d, 1.5 %% with almost no noise: %+v; want beyond its interval yet under the least change, not called", seed, tiny)
		}
	}
	one := verdictOf(TuneVerdicts(tuneRuns(1, 1, 0.5, 0, 0.02), 2), "output_throughput")
	if one.Verdict != results.TuneUnknown || math.Abs(one.Change-0.5) > 0.1 {
		t.Errorf("one round: %+v", one)
	}
}

// What drift does to a comparison that takes all of A, then all of B —
// the order TuneOrder replaces: the same setting twice, 60 % drift along
// the session, and B measured after A in every round gets called slower
// or faster; in turns, the rounds' pairs cancel the drift.
func TestTuneOrderCancelsDrift(t *testing.T) {
	t.Parallel()
	if got := [][]int{TuneOrder(2, 0), TuneOrder(2, 1), TuneOrder(3, 1), TuneOrder(3, 2)}; !slices.EqualFunc(got, [][]int{{0, 1}, {1, 0}, {1, 2, 0}, {2, 0, 1}}, slices.Equal) {
		t.Errorf("orders %v", got)
	}
	runs := tuneRuns(3, 6, 0, 0.6, 0.001)
	// Re-timed as A always first: the drift lands on B.
	for i := range runs {
		r := &runs[i]
		r.Position = 1 + r.Setting
		state := 1 + 0.6*float64(2*(r.Round-1)+r.Setting)/12
		r.Levels[0].Values["output_throughput"] = 100 * state
	}
	if v := verdictOf(TuneVerdicts(runs, 2), "output_throughput"); !v.Called() {
		t.Fatalf("B always after A, with drift: %+v; the test's drift is too small to show anything", v)
	}
	inTurns := verdictOf(TuneVerdicts(tuneRuns(3, 6, 0, 0.6, 0.001), 2), "output_throughput")
	if inTurns.Called() {
		t.Errorf("in turns: %+v", inTurns)
	}
}

func TestAnswersAgainst(t *testing.T) {
	t.Parallel()
	kinds := []string{"code", "chat", "math"}
	base := [][]string{{"def", " f", "():"}, {"Hi", " there"}, {"12", " km"}}
	these := [][]string{{"def", " f", "():"}, {"Hi", " the", "re!"}, nil}
	got := AnswersAgainst(1, kinds, base, these)
	// "Hi there" and "Hi there!": alike for both of the first's pieces.
	want := results.TuneAnswers{Setting: 1, Prompts: 2, Missing: 1, Differ: []results.TuneAnswerDiff{{Prompt: "chat", After: 2}}}
	if got.Prompts != want.Prompts || got.Missing != want.Missing || !slices.Equal(got.Differ, want.Differ) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// The same text cut into other chunks is the same answer.
	if a := AnswersAgainst(1, kinds[:1], base[:1], [][]string{{"de", "f f", "():"}}); len(a.Differ) != 0 {
		t.Errorf("re-chunked: %+v", a)
	}
	r := &results.TuneResult{Settings: []results.TuneSetting{{Name: "A"}, {Name: "B"}}, Answers: []results.TuneAnswers{got}}
	if s := r.AnswersSentence(); !strings.Contains(s, "B's answers differ from A's in 1 of 2 prompts (chat), after 2 tokens on average (1 prompt not answered by both)") {
		t.Errorf("sentence %q", s)
	}
}

// The one-sentence verdict: what changed beyond noise, per level, largest
// first, and the levels where nothing did; or that nothing did, and how
// small a change could have been seen.
func TestTuneHeadline(t *testing.T) {
	t.Parallel()
	r := &results.TuneResult{Plan: results.TunePlan{Rounds: 3}, Settings: []results.TuneSetting{{Name: "-fa off"}, {Name: "-fa on"}}}
	r.Runs = twoLevels(tuneRuns(5, 3, 0.18, 0, 0.01), tuneRunsAt(1, 5, 3, 0, 0.01))
	r.Verdicts = TuneVerdicts(r.Runs, 2)
	h := r.Headline()
	if !strings.HasPrefix(h, "-fa on is faster than -fa off: at 8 users output tok/s +18") || !strings.HasSuffix(h, "; no difference beyond noise at 1 user.") {
		t.Errorf("headline %q", h)
	}
	// Faster at 8 users, slower at 1: both sides said, each level's.
	r.Runs = twoLevels(tuneRuns(5, 3, 0.18, 0, 0.01), tuneRunsAt(1, 5, 3, -0.2, 0.01))
	r.Verdicts = TuneVerdicts(r.Runs, 2)
	if h := r.Headline(); !strings.HasPrefix(h, "-fa on against -fa off: at 8 users better on output tok/s +18") || !strings.Contains(h, "; at 1 user worse on output tok/s -") {
		t.Errorf("headline %q", h)
	}
	r.Runs = twoLevels(tuneRuns(5, 3, 0, 0, 0.02), tuneRunsAt(1, 5, 3, 0, 0.02))
	r.Verdicts = TuneVerdicts(r.Runs, 2)
	if h := r.Headline(); !strings.HasPrefix(h, "-fa on does not differ from -fa off beyond noise after 3 rounds; differences under ~") || !strings.HasSuffix(h, "cannot be seen on this server — run more rounds to look closer.") {
		t.Errorf("headline %q", h)
	}
}

// tuneRunsAt are tuneRuns at concurrency c.
func tuneRunsAt(c int, seed uint64, rounds int, change, sd float64) []results.TuneRun {
	runs := tuneRuns(seed+100, rounds, change, 0, sd)
	for i := range runs {
		runs[i].Levels[0].Concurrency = c
	}
	return runs
}

// twoLevels puts b's level into a's runs, run by run.
func twoLevels(a, b []results.TuneRun) []results.TuneRun {
	for i := range a {
		a[i].Levels = append(b[i].Levels, a[i].Levels...)
	}
	return a
}

// manyRuns are two settings' runs with every headline metric at two
// levels, each figure with its own noise of sd a run, the second setting
// changed by change on output and per-user tok/s (and ITL and latency
// the other way).
func manyRuns(seed uint64, rounds int, change, sd float64) []results.TuneRun {
	rng := rand.New(rand.NewPCG(seed, 11))
	var out []results.TuneRun
	for r := range rounds {
		for pos, s := range TuneOrder(2, r) {
			run := results.TuneRun{Setting: s, Round: r + 1, Position: pos + 1}
			for _, c := range []int{1, 8} {
				vals := map[string]float64{}
				for _, id := range TuneMetrics[:6] {
					f := 1.0
					if s == 1 {
						switch id {
						case "output_throughput", "per_user_throughput":
							f = 1 + change
						case "itl_p50", "latency_p50":
							f = 1 / (1 + change)
						}
					}
					vals[id] = 100 * f * math.Exp(sd*rng.NormFloat64())
				}
				run.Levels = append(run.Levels, results.TuneLevel{Concurrency: c, Values: vals})
			}
			out = append(out, run)
		}
	}
	return out
}

// Over a dozen figures at once: two settings that are the same, each
// figure with 3.5 % run-to-run noise of its own (this machine's
// llama-server at 4 users), are called different in few of 200 seeded
// sessions, at six rounds and at the default twelve — each figure judged
// alone at 95 % called one in a third of them, with a 3 % least change.
// A 10 % change through 2 % noise is called in nearly all sessions of six
// rounds; through 3.5 % noise six rounds call it in about half, and the
// default twelve in nearly all (docs/method.md, "Twelve rounds by
// default").
func TestTuneVerdictsHoldTogether(t *testing.T) {
	t.Parallel()
	const sessions = 200
	for _, c := range []struct {
		rounds int
		noise  float64 // of the 10 % change's figures
	}{
		{6, 0.02},
		{setup.TuneDefaultRounds, 0.035},
	} {
		falseCalls, found := 0, 0
		for seed := uint64(1); seed <= sessions; seed++ {
			for _, v := range TuneVerdicts(manyRuns(seed, c.rounds, 0, 0.035), 2) {
				if v.Called() {
					falseCalls++
					break
				}
			}
			if v := verdictOf(TuneVerdicts(manyRuns(seed+1000, c.rounds, 0.10, c.noise), 2), "output_throughput"); v.Verdict == results.TuneBetter {
				found++
			}
		}
		if falseCalls > sessions/20 {
			t.Errorf("%d rounds, the same setting twice: %d of %d sessions called a difference", c.rounds, falseCalls, sessions)
		}
		if found < sessions*9/10 {
			t.Errorf("%d rounds, a 10 %% change through %.1f %% noise: called in %d of %d sessions", c.rounds, 100*c.noise, found, sessions)
		}
		t.Logf("%d rounds: false calls %d of %d, 10 %% through %.1f %% noise found %d of %d", c.rounds, falseCalls, sessions, 100*c.noise, found, sessions)
	}
}
