package plans

import (
	"fmt"
	"slices"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var kovaraKind = &Kind{
	ID:          results.PlanKovara,
	Title:       "Kovara method",
	Results:     "Kovara runs",
	RunKinds:    []RunKind{{results.RunKindHardware, "hardware"}, {results.RunKindProtocol, "protocol"}},
	Timeout:     setup.DefaultTimeout,
	Demo:        sim.Demo,
	Publishable: true,
	Repeatable:  true,
	Shardable:   true,
	doc:         decodeAs(results.Format, results.Decode, func(r *results.File) Kovara { return Kovara{File: r} }),
}

// Kovara is a kovara-benchmark-results file as a plan document.
type Kovara struct{ File *results.File }

func (d Kovara) Kind() *Kind              { return kovaraKind }
func (d Kovara) CreatedAt() string        { return d.File.CreatedAt }
func (d Kovara) Complete() bool           { return d.File.Complete }
func (d Kovara) Simulated() bool          { return d.File.Local.Simulated }
func (d Kovara) Headline() string         { return State(d) }
func (d Kovara) Marshal() ([]byte, error) { return results.Marshal(d.File) }

// Model is the model its records ran, else the one it asked for.
func (d Kovara) Model() string {
	f := d.File
	switch {
	case len(f.Runs) > 0:
		return f.Runs[0].ModelID
	case f.Local.PartialRun != nil:
		return f.Local.PartialRun.ModelID
	}
	return f.Local.RequestedModel
}

// Problems are the file's warnings of the problem severity
// (results.Warnings): failed requests, prompts from the server's cache, a
// stopped run, a prompt length that missed its target.
func (d Kovara) Problems() []string {
	p, _ := results.Split(results.Warnings(d.File))
	return p
}

func (d Kovara) Notes() []string {
	_, n := results.Split(results.Warnings(d.File))
	return notesBeside(d, n)
}

func (d Kovara) Measured() bool { return len(d.File.Runs) > 0 }

// Failed: a level in which no request succeeded.
func (d Kovara) Failed() bool {
	return slices.ContainsFunc(d.File.Runs, func(r results.Run) bool { return r.Metrics.RequestsOK == 0 })
}

func (d Kovara) Table() results.Table { return results.ResultTable(d.File) }

func (d Kovara) Summary() Summary {
	f := d.File
	s := Summary{
		CreatedAt: f.CreatedAt, EndpointName: f.Local.EndpointName, Model: d.Model(), Plan: results.PlanKovara,
		Complete: f.Complete, Simulated: f.Local.Simulated, Problems: d.Problems(), Failed: d.Failed(),
	}
	runs := f.Runs
	if len(runs) == 0 && f.Local.PartialRun != nil {
		runs = []results.Run{*f.Local.PartialRun}
	}
	for i, r := range f.Runs {
		s.Levels = append(s.Levels, r.Concurrency)
		if i == 0 || r.Metrics.OutputThroughput > s.BestOutputTPS {
			s.BestOutputTPS = r.Metrics.OutputThroughput
		}
	}
	if p := f.Local.PartialRun; p != nil {
		s.PartialLevel = p.Concurrency
	}
	if g := f.Local.Group; g != nil {
		s.Group, s.GroupID = fmt.Sprintf("%d of %d", g.Index, g.Of), g.ID
	}
	if t := f.Local.Tune; t != nil {
		s.Setting = t.Setting
		if s.Group == "" {
			s.Group = fmt.Sprintf("%d of %d", t.Round, t.Rounds)
		}
	}
	s.OwnLoad = f.Local.Workload != nil
	if _, share, ok := results.PromptCacheHit(f); ok {
		s.CachedShare = share
	}
	if len(runs) > 0 {
		r := runs[0]
		s.RunKind = r.RunKind
		if r.Engine != nil {
			s.Engine = *r.Engine
			if r.EngineVersion != nil {
				s.Engine += " " + *r.EngineVersion
			}
		}
	}
	if s.Engine == "" && f.Local.Detection != nil {
		s.Engine = engineName(*f.Local.Detection)
	}
	return s
}
