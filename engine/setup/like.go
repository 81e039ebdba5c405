package setup

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Recorded is what a results file's run records say a run was sent: the
// conditions "run again like this" repeats (docs/plans.md). The caller
// reads them off the records; setup stays free of the results format.
type Recorded struct {
	Model        string
	InputTokens  int
	OutputTokens int
	Concurrency  int
	Requests     int
	Warmup       int
	TimeoutS     float64
}

// PlanLike is the plan that sends what the records sent: the same model,
// lengths, levels in the order run, requests, warmup and timeout. The
// seed is left fresh (FixedSeed false): the same prompts again would meet
// the server's prompt cache from the first run and measure its hits, not
// the server; the prompts come from the same generator at the same
// lengths, so they are the same conditions.
func PlanLike(recs []Recorded) (KovaraPlan, error) {
	p := DefaultPlan()
	if len(recs) == 0 {
		return p, errors.New("the run has no finished level to repeat")
	}
	first := recs[0]
	p.Model, p.InputTokens, p.OutputTokens = first.Model, first.InputTokens, first.OutputTokens
	p.Requests, p.Warmup = first.Requests, first.Warmup
	if first.TimeoutS > 0 {
		p.Timeout = time.Duration(first.TimeoutS * float64(time.Second))
	}
	p.Concurrency = nil
	for _, r := range recs {
		if r.Model != first.Model || r.InputTokens != first.InputTokens || r.OutputTokens != first.OutputTokens ||
			r.Requests != first.Requests || r.Warmup != first.Warmup {
			return p, fmt.Errorf("its levels were not run with one plan (concurrency %d differs from concurrency %d in model, lengths, requests or warmup), so there is no one plan to repeat", r.Concurrency, first.Concurrency)
		}
		if !slices.Contains(p.Concurrency, r.Concurrency) {
			p.Concurrency = append(p.Concurrency, r.Concurrency)
		}
	}
	return p, p.Validate()
}
