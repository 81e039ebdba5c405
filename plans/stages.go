package plans

import (
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var stagesKind = &Kind{
	ID:       results.PlanStages,
	Title:    "Three stages: decode, cold prefill, many users",
	Results:  "three-stage results",
	RunKinds: []RunKind{{results.PlanStages, "three stages"}},
	Timeout:  setup.PlanTimeout,
	// Its long answers are written to the end instead of stopping half
	// way.
	Demo: func() sim.Config {
		cfg := sim.Demo()
		cfg.NaturalStop = func(int64) int { return 1 << 20 }
		return cfg
	},
	doc: docsOf(results.StagesDoc, NewStages),
	// Its table takes no labels (compare.StagesTable).
	compare: compareBy(compare.StagesVerdict,
		func(rs []*results.StagesResult, _ []string) []compare.Row { return compare.StagesTable(rs) }),
}

// Stages is a three-stage result as a plan document.
type Stages struct {
	docBase[results.StagesResult, *results.StagesResult]
}

// NewStages is r as a plan document.
func NewStages(r *results.StagesResult) Stages { return Stages{baseOf(r)} }

func (d Stages) Kind() *Kind { return stagesKind }

func (d Stages) Measured() bool { return len(d.Result.Decode) > 0 }

// Failed: a stage (or one prompt's decode) could not be measured.
func (d Stages) Failed() bool { return len(d.Result.Failed()) > 0 }

// Problems are the stages that could not be measured, each with why.
func (d Stages) Notes() []string {
	_, hw := hardwareSaid(d, &d.Result.Engine)
	return notesBeside(d, hw, d.Result.Warnings)
}

func (d Stages) Problems() []string {
	r := d.Result
	var out []string
	for _, s := range r.Decode {
		if s.Error != "" {
			out = append(out, "single-user decode on the "+s.Prompt+" prompt could not be measured: "+s.Error)
		}
	}
	if r.Prefill != nil && r.Prefill.Error != "" {
		out = append(out, "the cold prefill could not be measured: "+r.Prefill.Error)
	}
	if r.Users != nil && r.Users.Error != "" {
		out = append(out, "the many-user stage could not be measured: "+r.Users.Error)
	}
	hw, _ := hardwareSaid(d, &r.Engine)
	return append(append(out, hw...), results.ForeignLoadProblems(r.Local.ServerMetrics)...)
}

func (d Stages) Summary() Summary {
	r := d.Result
	s := summaryOf(d, r.Local.EndpointName, engineName(r.Engine))
	if r.Users != nil {
		s.Levels = []int{r.Users.Users}
		if r.Users.AggregateTPS != nil {
			s.BestOutputTPS = *r.Users.AggregateTPS
		}
	}
	return s
}
