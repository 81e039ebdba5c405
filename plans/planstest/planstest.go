// Package planstest holds, for every registered plan, a clean and a
// failed document, so the surfaces that judge a result (the CLI's exit
// code, the app's result state, History's mark) are each held to the same
// table and a new plan cannot be left out of it.
package planstest

import (
	"fmt"
	"slices"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// Case is one document of a plan and what every surface must say of it.
type Case struct {
	Name string // "kovara clean", "capacity failed"
	Doc  plans.Doc
	// Failed: the CLI exits 1, and the app and History mark it.
	Failed bool
}

// Cases is a clean and a failed document of every registered plan, in
// plans.All's order. A plan with no maker here panics, so the tests that
// range over Cases fail the moment a plan is registered without them.
func Cases() []Case {
	var out []Case
	for _, k := range plans.All {
		m, ok := makers[k.ID]
		if !ok {
			panic(fmt.Sprintf("planstest: no clean and failed documents of the %q plan", k.ID))
		}
		out = append(out, Case{Name: k.ID + " clean", Doc: m(false)}, Case{Name: k.ID + " failed", Doc: m(true), Failed: true})
	}
	return out
}

// makers builds each plan's document, clean or failed, as its plan
// writes it: complete, with every stage measured, or with one of them
// (the second level, the many-user stage, the capacity's first probe,
// the deeper depth) without a single success.
var makers = map[string]func(failed bool) plans.Doc{
	results.PlanKovara:   kovara,
	results.PlanStages:   stages,
	results.PlanSpecDec:  specDec,
	results.PlanCapacity: capacity,
	results.PlanContext:  context,
	results.PlanRate:     rate,
	results.PlanTune:     func(failed bool) plans.Doc { return plans.NewTune(Tune(failed)) },
	results.PlanAnswers:  func(failed bool) plans.Doc { return plans.NewAnswers(Answers(failed)) },
}

// Answers is an answers comparison of two quantisations of one
// llama-server model, or (failed) one whose other setting returned no
// token probabilities after the baseline's floor was read. Its figures are of the order the real tiny model's
// Q4_0 gave against its F32 (engine/drift/testdata).
func Answers(failed bool) *results.AnswersResult {
	r := &results.AnswersResult{PlanHeader: results.PlanHeader{Format: results.FormatAnswers, FormatVersion: 1, About: results.AnswersDoc.About, CreatedAt: created, Model: "qwen3-8b"},
		Settings: results.AnswersSettings{PromptSet: "kovara-answers-v1", Prompts: 2, Positions: 3, TopK: 20, TimeoutS: 120, Client: "kovara-desktop", ClientVersion: "test"},
		Baseline: results.AnswersSetting{Model: "qwen3-8b", Family: results.FamilyLlamaCpp, Build: "b9749"},
		Other:    results.AnswersSetting{Model: "qwen3-8b-q4_0", Family: results.FamilyLlamaCpp, Build: "b9749"},
		Notes:    []string{}, TopK: 20,
		Local: results.AnswersLocal{PlanLocal: results.PlanLocal{Endpoint: "http://127.0.0.1:8080", EndpointHost: "127.0.0.1:8080", EndpointName: "box",
			ServedModels: []string{"qwen3-8b", "qwen3-8b-q4_0"}, StartedAt: created}},
	}
	r.Complete = true
	r.Floor = &results.AnswersFigures{Positions: 6, SameTop: 1, RefProb: 0.88}
	if failed {
		// The baseline's reference and floor were read; the other
		// setting's server could not be.
		r.Failure = "the other setting: the server returned no token probabilities (completion_probabilities), so the answers cannot be compared"
		return r
	}
	r.Figures = &results.AnswersFigures{Positions: 6, SameTop: 5.0 / 6, KLMean: 0.061, KLP99: 0.29, RefProb: 0.81, Unlisted: 0}
	r.SameTopBeyond, r.KLBeyond = true, true
	r.Ruler = "about what Q4_K_M costs Llama 3 8B (0.0614)"
	r.Kinds = []results.AnswersKind{
		{Kind: "code", AnswersFigures: results.AnswersFigures{Positions: 3, SameTop: 1, KLMean: 0.021, KLP99: 0.03, RefProb: 0.85}},
		{Kind: "json", AnswersFigures: results.AnswersFigures{Positions: 3, SameTop: 2.0 / 3, KLMean: 0.101, KLP99: 0.29, RefProb: 0.77}, PartsAt: 2},
	}
	for i, k := range []string{"code", "code", "code", "json", "json", "json"} {
		r.Local.Positions = append(r.Local.Positions, results.AnswersPosition{Kind: k, At: i%3 + 1, KL: 0.01 * float64(i+1), Same: i != 4, FloorSame: true})
	}
	r.Local.Reference = [][]int{{101, 102, 103}, {201, 202, 203}}
	return r
}

const created = "2026-11-30T10:00:00Z"

func ptr[T any](v T) *T { return &v }

func engine() results.Detection {
	return results.Detection{Family: results.FamilyLlamaCpp, Version: "b9749"}
}

func kovara(failed bool) plans.Doc {
	f := comparetest.Session([]int{1, 4})
	f.CreatedAt = created
	if failed {
		r := &f.Runs[1]
		r.Metrics = results.Metrics{RequestsError: r.Requests, DurationS: 3, TokenCountMethod: results.TokenCountServerUsage}
	}
	return plans.Kovara{File: f}
}

func stages(failed bool) plans.Doc {
	tps, ttft, agg, per := 42.5, 180.0, 120.0, 30.0
	r := &results.StagesResult{Format: results.FormatStages, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "qwen3-8b",
		Engine: engine(), TokenSource: "usage"}
	for _, p := range []string{"code", "json", "prose"} {
		r.Decode = append(r.Decode, results.DecodeStage{Prompt: p, MaxTokens: 1024, CompletionTokens: 1024, TokenSource: "usage", TTFTMs: &ttft, DecodeTPS: &tps})
	}
	r.Prefill = &results.PrefillStage{Calibrated: true, TargetTokens: 8192, PromptTokens: ptr(8190), TokenSource: "usage", TTFTMs: ptr(2100.0), PrefillTPS: ptr(3900.0)}
	r.Users = &results.UsersStage{Users: 4, MaxTokens: 512, CompletionTokens: 2048, TokenSource: "usage", AggregateTPS: &agg, PerUserMeanTPS: &per, PerUserMinTPS: &per}
	if failed {
		r.Users = &results.UsersStage{Users: 4, MaxTokens: 512, Failed: 4, Error: "4 of 4 requests failed (first: HTTP 503), so there is no aggregate"}
	}
	return plans.NewStages(r)
}

func specDec(failed bool) plans.Doc {
	rate, length := 0.7, 2.4
	r := &results.SpecDecResult{PlanHeader: results.PlanHeader{Format: results.FormatSpecDec, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "qwen3-8b"}, Engine: engine()}
	for _, c := range []int{1, 2} {
		r.Levels = append(r.Levels, results.SpecDecLevel{Concurrency: c, Requests: 8, OK: 8, DurationS: 4, OutputTPS: ptr(90.0 * float64(c)),
			Spec: &results.SpecWindow{AcceptanceRate: &rate, MeanAcceptanceLength: &length, PerPosition: []float64{0.82, 0.61, 0.44}}})
	}
	if failed {
		r.Levels[1] = results.SpecDecLevel{Concurrency: 2, Requests: 8, Errors: 8, DurationS: 1, Failures: []string{"HTTP 503: the server is busy"}}
	}
	return plans.NewSpecDec(r)
}

func capacity(failed bool) plans.Doc {
	r := &results.CapacityResult{PlanHeader: results.PlanHeader{Format: results.FormatCapacity, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "qwen3-8b"},
		Settings: results.CapacitySettings{UserTPS: 10, TTFTP95Ms: 2000, InputTokens: 512, OutputTokens: 128, MaxConcurrency: 8}}
	probe := func(c int, met bool, tps float64) results.CapacityProbe {
		p := results.CapacityProbe{Concurrency: c, Requests: 20, Step: results.StepDouble, Met: met,
			UserTPSP50: ptr(tps), UserTPSP5: ptr(tps * 0.9), TTFTP95Ms: ptr(400.0), OutputTPS: tps * float64(c)}
		if !met {
			p.Missed = []string{"per-user tok/s"}
		}
		return p
	}
	r.Probes = []results.CapacityProbe{probe(1, true, 40), probe(2, true, 22), probe(4, false, 8)}
	r.Answer = results.CapacityAnswer{Capacity: 2, Held: 2, Missed: 4, MissedAt: 4, MissedOn: []string{"per-user tok/s"}}
	if failed {
		r.Probes = []results.CapacityProbe{probe(1, false, 6)}
		r.Answer = results.CapacityAnswer{Missed: 1, MissedAt: 1, MissedOn: []string{"per-user tok/s"}}
	}
	return plans.NewCapacity(r)
}

func context(failed bool) plans.Doc {
	spread := func(v float64) *results.Spread {
		return &results.Spread{Min: v * 0.9, P10: v * 0.95, P50: v, P90: v * 1.05, Max: v * 1.1}
	}
	r := &results.ContextResult{PlanHeader: results.PlanHeader{Format: results.FormatContext, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "qwen3-8b"}, Engine: engine()}
	for i, d := range []int{0, 8192} {
		r.Depths = append(r.Depths, results.ContextDepth{Depth: d, PromptTokens: ptr(64 + d), Conversations: 3, OK: 3,
			PrefillTPS: spread(3000), DecodeTPS: spread(40 - 10*float64(i)), TTFTMs: spread(100 + float64(d)/3), CachedTTFTMs: spread(60)})
	}
	if failed {
		r.Depths[1] = results.ContextDepth{Depth: 8192, Conversations: 3, Failures: []string{"HTTP 400: the request exceeds the available context size"}}
	}
	return plans.NewContext(r)
}

// rate is a rate plan of 2 and 4 requests a second; failed, no request
// at 4 requests a second succeeded.
func rate(failed bool) plans.Doc {
	dist := func(v float64) *results.Dist {
		return &results.Dist{N: 32, Mean: v, Min: v * 0.8, P50: v, P95: ptr(v * 1.4), Max: v * 1.6}
	}
	r := &results.RateResult{PlanHeader: results.PlanHeader{Format: results.FormatRate, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "qwen3-8b"},
		Engine: engine(), Settings: results.RateSettings{Rates: []float64{2, 4}, Arrival: "poisson", Burstiness: 1, MaxInFlight: 64, Requests: 32,
			InputTokens: 256, OutputTokens: 128}}
	for i, x := range []float64{2, 4} {
		r.Levels = append(r.Levels, results.RateLevel{Rate: x, Requests: 32, OK: 32, AchievedRate: x * 0.97, OutputTPS: 120 * x,
			LatencyMs: dist(1800 + 200*float64(i)), TTFTMs: dist(90), TPOTMs: dist(14), LatenessMs: dist(0.2), QueueMs: dist(0), Sustained: true})
	}
	if failed {
		r.Levels[1] = results.RateLevel{Rate: 4, Requests: 32, Failures: []string{"connection refused"}, Verdict: "no request succeeded"}
	}
	return plans.NewRate(r)
}

// Tune is a settings comparison of two settings over three rounds, the
// second faster at 8 users; failed, its second setting's server never
// started.
func Tune(failed bool) *results.TuneResult {
	r := &results.TuneResult{PlanHeader: results.PlanHeader{Format: results.FormatTune, FormatVersion: 1, Complete: true, CreatedAt: created, Model: "qwen3-8b"},
		Plan: results.TunePlan{Rounds: 3, Concurrency: []int{1, 8}, Requests: 32, InputTokens: 512, OutputTokens: 128, Confidence: 0.95,
			Metrics: []results.TuneMetric{{ID: "output_throughput", Label: "output tok/s", Unit: "tok/s", HigherBest: true}}},
		Settings: []results.TuneSetting{
			{Name: "-np 2", How: setup.ByCommand, Model: "qwen3-8b", Rounds: 3, Server: &results.TuneServer{Family: results.FamilyLlamaCpp, Build: "b9749", Slots: 2}},
			{Name: "-np 8", How: setup.ByCommand, Model: "qwen3-8b", Rounds: 3, Server: &results.TuneServer{Family: results.FamilyLlamaCpp, Build: "b9749", Slots: 8}},
		},
		Warnings: []string{}}
	for round := 1; round <= 3; round++ {
		for s := range 2 {
			r.Runs = append(r.Runs, results.TuneRun{Setting: s, Round: round, Position: 1 + (s+round+1)%2, Complete: true, Levels: []results.TuneLevel{
				{Concurrency: 1, Values: map[string]float64{"output_throughput": 40}},
				{Concurrency: 8, Values: map[string]float64{"output_throughput": 120 + 60*float64(s)}},
			}})
		}
	}
	r.Verdicts = []results.TuneVerdict{
		{Setting: 1, Concurrency: 1, Metric: "output_throughput", Label: "output tok/s", Unit: "tok/s", HigherBest: true, Rounds: 3, Base: 40, Value: 40.2, Change: 0.005, Low: -0.02, High: 0.03, Verdict: results.TuneSame},
		{Setting: 1, Concurrency: 8, Metric: "output_throughput", Label: "output tok/s", Unit: "tok/s", HigherBest: true, Rounds: 3, Base: 120, Value: 180, Change: 0.5, Low: 0.45, High: 0.55, Verdict: results.TuneBetter},
	}
	r.Answers = []results.TuneAnswers{{Setting: 1, Prompts: 10, Differ: []results.TuneAnswerDiff{}}}
	if failed {
		r.Settings[1] = results.TuneSetting{Name: "-np 8", How: setup.ByCommand, Model: "qwen3-8b",
			Failed: "the server exited before it answered (exit status 1): gguf_init_from_file: failed to open GGUF file"}
		r.Runs = slices.DeleteFunc(r.Runs, func(run results.TuneRun) bool { return run.Setting == 1 })
		r.Verdicts, r.Answers = []results.TuneVerdict{}, []results.TuneAnswers{}
	}
	return r
}
