package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// --plan capacity: how many users at once the server serves within a
// service level (docs/plans.md).

// capacityFlags are the capacity plan's own flags; its service level is
// the shared sloFlags (plans.go).
type capacityFlags struct {
	max int
}

func (c *capacityFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&c.max, "max-concurrency", setup.DefaultCapacityMax, "capacity: the most concurrent users to try")
}

// capacityPlan is the capacity plan the flags ask for: the Kovara
// method's lengths, warmup, seed and timeout (f.plan), and the service
// level.
func (f *runFlags) capacityPlan() (setup.CapacityPlan, error) {
	p := setup.DefaultCapacityPlan()
	k, err := f.plan(map[string]bool{})
	if err != nil {
		return p, err
	}
	p.KovaraPlan = k
	p.UserTPS, p.TTFTP95Ms, p.MaxConcurrency = f.slo.userTPS, f.slo.ttftP95, f.capacity.max
	return p, p.Validate()
}

var finishCapacity = finishWith(func(r *results.CapacityResult) planOutput {
	return planOutput{doc: plans.NewCapacity(r), server: r.Local.ServerMetrics, last: r.AnswerLine(),
		print: func(w io.Writer) { printCapacity(w, r) }}
})

// printCapacity writes every probed level and the answer in words.
func printCapacity(w io.Writer, r *results.CapacityResult) {
	printHeading(w, "Capacity plan (Kovara Desktop): "+r.Settings.SLO(), r.Local.Simulated)
	fmt.Fprintf(w, "model %s; %d-token prompts, %d-token answers; up to %d users\n", r.Model, r.Settings.InputTokens, r.Settings.OutputTokens, r.Settings.MaxConcurrency)
	ws := r.Warnings()
	printProblems(w, plans.NewCapacity(r))
	printTable(w, r.Table())
	fmt.Fprintln(w, "per-user tok/s = 1000 / TPOT of each request; a level meets the service level with no failed request, TTFT p95 at or under the ceiling and p5 per-user tok/s at or over the floor")
	if k := r.KneeLine(); k != "" {
		fmt.Fprintln(w, k)
	}
	printNotes(w, ws)
	fmt.Fprintln(w, r.Headline())
}
