package plans

import (
	"fmt"
	"slices"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var rateKind = &Kind{
	ID:       results.PlanRate,
	Title:    "Rate: latency and goodput at requests a second (open loop)",
	Results:  "rate results",
	RunKinds: []RunKind{{results.PlanRate, "rate"}},
	Timeout:  setup.PlanTimeout,
	Demo:     sim.RateDemo,
	doc:      docsOf(results.RateDoc, NewRate),
	compare:  compareBy(compare.RateVerdict, compare.RateTable),
}

// Rate is a rate result as a plan document.
type Rate struct {
	docBase[results.RateResult, *results.RateResult]
}

// NewRate is r as a plan document.
func NewRate(r *results.RateResult) Rate { return Rate{baseOf(r)} }

func (d Rate) Kind() *Kind { return rateKind }

func (d Rate) Measured() bool { return len(d.Result.Levels) > 0 }

// Failed: no rate was measured, or one had no request that succeeded.
// A rate the server did not keep up with is the plan's answer, not a
// failure.
func (d Rate) Failed() bool {
	return noneOrAny(d.Result.Levels, func(l results.RateLevel) bool { return !l.Partial && l.OK == 0 })
}

// Problems are the rates with failed requests (each with its first
// error), a rate where none succeeded, and a plan that measured none.
func (d Rate) Problems() []string {
	out, _ := hardwareSaid(d, &d.Result.Engine)
	out = append(out, d.Result.Problems()...)
	for _, l := range d.Result.Sorted() {
		if !l.Partial && l.OK == 0 && len(l.Failures) == 0 {
			out = append(out, "at "+results.RateName(l.Rate)+" no request succeeded")
		}
	}
	return append(out, noneMeasured(d, "rate")...)
}

func (d Rate) Notes() []string {
	_, hw := hardwareSaid(d, &d.Result.Engine)
	return notesBeside(d, hw, d.Result.Warnings, d.Result.Notes())
}

func (d Rate) Summary() Summary {
	r := d.Result
	s := summaryOf(d, r.Local.EndpointName, engineName(r.Engine))
	for _, l := range r.Sorted() {
		if !l.Partial && !slices.Contains(s.Rates, l.Rate) {
			s.Rates = append(s.Rates, l.Rate)
		}
		if l.OutputTPS > s.BestOutputTPS {
			s.BestOutputTPS = l.OutputTPS
		}
	}
	if t := r.Local.Tune; t != nil {
		// A trace's replay in a settings comparison, as its Kovara runs.
		s.Setting, s.Group = t.Setting, fmt.Sprintf("%d of %d", t.Round, t.Rounds)
	}
	return s
}
