package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// --plan rate: requests at offered rates, open loop, latency from each
// request's intended send time, goodput against a service level
// (docs/plans.md, "The rate plan").

// rateFlags are the rate plan's own flags; --requests, --input-tokens,
// --output-tokens, --warmup, --seed and the service level (sloFlags) are
// shared with other plans.
type rateFlags struct {
	rates       string
	arrival     string
	burstiness  float64
	maxInFlight int
	sweepMax    float64
	// A trace replayed (--trace, --speed, --from, --to).
	trace, from, to string
	speed           float64
}

func (c *rateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.rates, "rate", "sweep", "rate: offered rates in requests a second, like 1,2,4, or sweep (find the highest rate the server keeps up with)")
	fs.StringVar(&c.arrival, "arrival", setup.ArrivalPoisson, "rate: how requests are spaced: poisson (independent users), constant (evenly) or gamma (with --burstiness)")
	fs.Float64Var(&c.burstiness, "burstiness", 1, "rate: the gamma shape of --arrival gamma: 1 is Poisson, below 1 burstier, above 1 more even")
	fs.IntVar(&c.maxInFlight, "max-in-flight", setup.RateDefaultMaxInFlight, "rate: the most requests in flight at once; a request due while all are busy waits, and the wait counts in its latency")
	fs.Float64Var(&c.sweepMax, "sweep-max", setup.RateSweepMax, "rate: the highest rate a sweep tries, requests a second")
	fs.StringVar(&c.trace, "trace", "", "rate, tune: replay a trace (kovara-bench record's, or Mooncake's or BurstGPT's) in place of the plan's own load (the rate plan's offered rates, each setting's levels): each request at its recorded time, with a prompt of its recorded length and prefix sharing and an answer as long as it was")
	fs.Float64Var(&c.speed, "speed", 1, "rate, tune, with --trace: how many times faster than recorded (2: a day's traffic in half a day)")
	fs.StringVar(&c.from, "from", "", "rate, tune, with --trace: replay only the requests recorded from this time of day, like 09:00")
	fs.StringVar(&c.to, "to", "", "rate, tune, with --trace: replay only the requests recorded before this time of day, like 12:00")
}

// workloadFlags are what the requests ask beyond the synthetic prompt
// (docs/plans.md, "Your own load").
type workloadFlags struct {
	prompts      string
	skipBad      bool
	sharedPrefix int
	groups       int
	turns        int
}

func (c *workloadFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.prompts, "prompts", "", "rate: send your own prompts from this file: JSONL (one {\"messages\": [...]} or {\"prompt\": \"...\"} a line) or ShareGPT JSON, sampled with --seed; only its SHA-256 and counts are kept")
	fs.BoolVar(&c.skipBad, "prompts-skip-bad", false, "rate: skip malformed lines of --prompts (named in the result) instead of refusing the file")
	fs.IntVar(&c.sharedPrefix, "shared-prefix", 0, "kovara, rate: every request starts with the same system prompt of about this many tokens, and the result says how much the server took from its cache, and its time to first token against cold")
	fs.IntVar(&c.groups, "prefix-groups", 1, "kovara, rate: groups of users, each with its own --shared-prefix system prompt")
	fs.IntVar(&c.turns, "turns", 1, "kovara, rate: each user holds a conversation of this many turns, every turn sending the whole history; the result shows time to first token and the cached share by turn")
}

// given is the workload the flags ask for.
func (c workloadFlags) given() setup.Workload {
	return setup.Workload{PromptsFile: c.prompts, SkipBad: c.skipBad, SharedPrefix: c.sharedPrefix, PrefixGroups: c.groups, Turns: c.turns}
}

// ratePlan is the rate plan the flags ask for: --rate, --arrival,
// --burstiness, --max-in-flight, --requests (per rate), the lengths,
// --warmup, --seed (the schedule's; fresh prompts unless given), the
// service level (--slo-ttft-p95, --slo-tpot, --slo-user-tps, each only
// when given), --timeout and --model.
func (f *runFlags) ratePlan(set map[string]bool) (setup.RatePlan, error) {
	p := setup.DefaultRatePlan()
	p.Model = f.model
	rates, sweep, err := setup.ParseRates(f.rate.rates)
	if err != nil {
		return p, fmt.Errorf("--rate %q: %w", f.rate.rates, err)
	}
	p.Rates, p.Sweep = rates, sweep
	if f.rate.trace != "" {
		p.Replay = &setup.Replay{File: f.rate.trace, Speed: f.rate.speed, From: f.rate.from, To: f.rate.to}
		if !set["rate"] {
			p.Rates, p.Sweep = nil, false // the default sweep is not asked for
		}
	} else if set["speed"] || set["from"] || set["to"] {
		return p, fmt.Errorf("--speed, --from and --to apply to --trace")
	}
	p.Arrival, p.Burstiness, p.MaxInFlight = f.rate.arrival, f.rate.burstiness, f.rate.maxInFlight
	if set["sweep-max"] {
		if !sweep {
			return p, fmt.Errorf("--sweep-max applies to --rate sweep")
		}
		p.SweepMax = f.rate.sweepMax
	}
	setIfGiven(set, "requests", &p.Requests, f.requests)
	setIfGiven(set, "input-tokens", &p.InputTokens, f.inputTokens)
	setIfGiven(set, "output-tokens", &p.OutputTokens, f.outputTokens)
	setIfGiven(set, "warmup", &p.Warmup, f.warmup)
	p.SLO = f.slo.given(set)
	p.Workload = f.workload.given()
	if set["requests"] && f.requests < 1 {
		return p, fmt.Errorf("--requests %d: each rate needs at least 1 request", f.requests)
	}
	if err := f.setSeedTimeout(set, &p.Seed, &p.FixedSeed, &p.Timeout); err != nil {
		return p, err
	}
	return p, p.Validate()
}

var finishRate = finishWith(func(r *results.RateResult) planOutput {
	return planOutput{doc: plans.NewRate(r), server: r.Local.ServerMetrics, warnings: r.Warnings,
		last: r.Headline(), print: func(w io.Writer) { printRate(w, r) }}
})

// printRate writes the table of rates, how it was made and what queued.
func printRate(w io.Writer, r *results.RateResult) {
	printHeading(w, "Rate plan (Kovara Desktop): latency and goodput at offered rates, open loop", r.Local.Simulated)
	s := r.Settings
	fmt.Fprintf(w, "model %s, engine %s; %d-token prompts, %d-token answers; %d requests a rate\n", r.Model, engineWords(r.Engine), s.InputTokens, s.OutputTokens, s.Requests)
	if wl := s.Workload.Words(); wl != "" {
		fmt.Fprintf(w, "the requests: %s\n", wl)
	}
	printProblems(w, plans.NewRate(r))
	printTable(w, r.Table())
	fmt.Fprintln(w, r.Method())
	for _, n := range r.Notes() {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w, "Not publishable: open-loop load is not the Kovara method; this result stays on this machine.")
}
