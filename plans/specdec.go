package plans

import (
	"fmt"
	"slices"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var specDecKind = &Kind{
	ID:       results.PlanSpecDec,
	Title:    "Speculative decoding (acceptance from /metrics)",
	Results:  "speculative-decoding results",
	RunKinds: []RunKind{{results.PlanSpecDec, "spec decoding"}},
	Timeout:  setup.PlanTimeout,
	// Its simulator drafts, so the demo shows an acceptance.
	Demo: func() sim.Config {
		cfg := sim.Demo()
		cfg.SpecDecode = &sim.SpecDecode{DraftTokens: 3, Acceptance: 0.7}
		return cfg
	},
	doc: docsOf(results.SpecDecDoc, NewSpecDec),
	compare: func(docs []Doc, labels []string) Comparison {
		c := compareBy(compare.SpecDecVerdict, compare.SpecDecTable)(docs, labels)
		c.PerLevel = true
		return c
	},
}

// SpecDec is a speculative-decoding result as a plan document.
type SpecDec struct {
	docBase[results.SpecDecResult, *results.SpecDecResult]
}

// NewSpecDec is r as a plan document.
func NewSpecDec(r *results.SpecDecResult) SpecDec { return SpecDec{baseOf(r)} }

func (d SpecDec) Kind() *Kind { return specDecKind }

func (d SpecDec) Measured() bool { return len(d.Result.Levels) > 0 }

// Failed: a level in which no request succeeded.
func (d SpecDec) Failed() bool {
	return slices.ContainsFunc(d.Result.Levels, func(l results.SpecDecLevel) bool { return l.OK == 0 })
}

// Problems are the levels with failed requests, each with its first
// error.
func (d SpecDec) Notes() []string {
	_, hw := hardwareSaid(d, &d.Result.Engine)
	return notesBeside(d, hw, d.Result.LevelNotes(), d.Result.Warnings)
}

func (d SpecDec) Problems() []string {
	var out []string
	for _, l := range d.Result.Levels {
		if l.Errors == 0 && l.OK > 0 {
			continue
		}
		p := fmt.Sprintf("at concurrency %d, %d of %d requests failed", l.Concurrency, l.Requests-l.OK, l.Requests)
		if len(l.Failures) > 0 {
			p += " (first: " + l.Failures[0] + ")"
		}
		out = append(out, p)
	}
	hw, _ := hardwareSaid(d, &d.Result.Engine)
	return append(append(out, hw...), results.ForeignLoadProblems(d.Result.Local.ServerMetrics)...)
}

func (d SpecDec) Summary() Summary {
	r := d.Result
	s := summaryOf(d, r.Local.EndpointName, engineName(r.Engine))
	for _, l := range r.Levels {
		s.Levels = append(s.Levels, l.Concurrency)
		if l.OutputTPS != nil && *l.OutputTPS > s.BestOutputTPS {
			s.BestOutputTPS = *l.OutputTPS
		}
	}
	return s
}
