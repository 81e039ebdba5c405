package plans

import (
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var contextKind = &Kind{
	ID:       results.PlanContext,
	Title:    "Context: prefill and decode speed against context depth",
	Results:  "context results",
	RunKinds: []RunKind{{results.PlanContext, "context"}},
	Timeout:  setup.PlanTimeout,
	Demo:     sim.ContextDemo,
	doc:      docsOf(results.ContextDoc, NewContext),
	compare:  compareBy(compare.ContextVerdict, compare.ContextTable),
}

// Context is a context result as a plan document.
type Context struct {
	docBase[results.ContextResult, *results.ContextResult]
}

// NewContext is r as a plan document.
func NewContext(r *results.ContextResult) Context { return Context{baseOf(r)} }

func (d Context) Kind() *Kind { return contextKind }

func (d Context) Measured() bool { return len(d.Result.Depths) > 0 }

// Failed: no depth was measured, or one had no conversation that
// succeeded.
func (d Context) Failed() bool {
	return noneOrAny(d.Result.Depths, func(dp results.ContextDepth) bool { return dp.OK == 0 })
}

// Problems are the depths with failed conversations (each with its first
// error), and a plan that measured no depth at all.
func (d Context) Problems() []string {
	hw, _ := hardwareSaid(d, &d.Result.Engine)
	return append(append(d.Result.Problems(), hw...), noneMeasured(d, "depth")...)
}

func (d Context) Notes() []string {
	_, hw := hardwareSaid(d, &d.Result.Engine)
	return notesBeside(d, hw, d.Result.Warnings)
}

func (d Context) Summary() Summary {
	r := d.Result
	s := summaryOf(d, r.Local.EndpointName, engineName(r.Engine))
	for _, dp := range r.Depths {
		s.Levels = append(s.Levels, dp.Depth)
		if dp.DecodeTPS != nil && dp.DecodeTPS.P50 > s.BestOutputTPS {
			s.BestOutputTPS = dp.DecodeTPS.P50
		}
	}
	return s
}
