package plans

import (
	"fmt"
	"slices"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var capacityKind = &Kind{
	ID:       results.PlanCapacity,
	Title:    "Capacity: how many users at once within a service level",
	Results:  "capacity results",
	RunKinds: []RunKind{{results.PlanCapacity, "capacity"}},
	Timeout:  setup.DefaultTimeout,
	Demo:     sim.CapacityDemo,
	doc:      docsOf(results.CapacityDoc, NewCapacity),
	compare:  compareBy(compare.CapacityVerdict, compare.CapacityTable),
}

// Capacity is a capacity result as a plan document.
type Capacity struct {
	docBase[results.CapacityResult, *results.CapacityResult]
}

// NewCapacity is r as a plan document.
func NewCapacity(r *results.CapacityResult) Capacity { return Capacity{baseOf(r)} }

func (d Capacity) Kind() *Kind { return capacityKind }

func (d Capacity) Measured() bool { return len(d.Result.Probes) > 0 }

// Failed: not even one user was served within the service level (or
// nothing was probed), so the plan has no capacity to give.
func (d Capacity) Failed() bool { return d.Result.Answer.Capacity == 0 }

// Problems are its probes' problems (results.Warnings of their records,
// probes of one level that disagree), and the missing answer.
func (d Capacity) Problems() []string {
	out, _ := results.Split(d.Result.Warnings())
	if d.Failed() && d.Complete() {
		out = append(out, "not even one user was served within the service level ("+d.Result.Settings.SLO()+")")
	}
	return out
}

func (d Capacity) Notes() []string {
	_, n := results.Split(d.Result.Warnings())
	return notesBeside(d, n)
}

func (d Capacity) Summary() Summary {
	r := d.Result
	engine := ""
	if r.Local.Detection != nil {
		engine = engineName(*r.Local.Detection)
	}
	s := summaryOf(d, r.Local.EndpointName, engine)
	for _, p := range r.Probes {
		if !slices.Contains(s.Levels, p.Concurrency) {
			s.Levels = append(s.Levels, p.Concurrency)
		}
		if p.OutputTPS > s.BestOutputTPS {
			s.BestOutputTPS = p.OutputTPS
		}
	}
	slices.Sort(s.Levels)
	if p := r.Local.PartialRun; p != nil {
		s.PartialLevel = p.Concurrency
	}
	s.Capacity = capacityMark(r)
	if len(r.Probes) > 0 {
		s.Answer = r.AnswerLine()
	}
	return s
}

// capacityMark is a capacity result's answer in a few characters, for
// History: "8 users", "4–6 users?", "≥ 256 users", "none"; nothing when
// the search was stopped before its first probe ended.
func capacityMark(r *results.CapacityResult) string {
	a := r.Answer
	switch {
	case len(r.Probes) == 0:
		return ""
	case a.Capacity == 0:
		return "none"
	case a.Uncertain:
		return fmt.Sprintf("%d–%d users?", a.Capacity, a.RangeHigh)
	case a.ReachedMax:
		return fmt.Sprintf("≥ %d users", a.Capacity)
	}
	return fmt.Sprintf("%d %s", a.Capacity, results.Plural(a.Capacity, "user", "users"))
}
