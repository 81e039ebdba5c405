package plans

import (
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var tuneKind = &Kind{
	ID:       results.PlanTune,
	Title:    "Compare settings: is the server faster with this flag?",
	Results:  "settings comparisons",
	RunKinds: []RunKind{{results.PlanTune, "settings"}},
	// Each run is a Kovara plan, with its timeout.
	Timeout: setup.DefaultTimeout,
	Demo:    sim.TuneDemo,
	doc:     docsOf(results.TuneDoc, NewTune),
}

// Tune is a settings comparison as a plan document.
type Tune struct {
	docBase[results.TuneResult, *results.TuneResult]
}

// NewTune is r as a plan document.
func NewTune(r *results.TuneResult) Tune { return Tune{baseOf(r)} }

func (d Tune) Kind() *Kind { return tuneKind }

// Headline is the verdict, then whether the answers changed: the two
// things the comparison was run to find out.
func (d Tune) Headline() string {
	h := d.Result.Headline()
	if a := d.Result.AnswersSentence(); a != "" {
		h += " " + a
	}
	return h
}

func (d Tune) Measured() bool { return len(d.Result.Runs) > 0 }

// Failed: a setting could not be measured (its server did not start,
// the endpoint refused it), so it was compared with nothing.
func (d Tune) Failed() bool {
	if len(d.Result.Settings) < 2 {
		return true
	}
	for _, s := range d.Result.Settings {
		if s.Failed != "" || (d.Complete() && s.Rounds == 0) {
			return true
		}
	}
	return false
}

// Problems are the settings that could not be measured and the runs that
// failed, then the comparison's own warnings (a server whose build
// changed between rounds, two settings the server reported alike).
func (d Tune) Problems() []string {
	out := d.Result.Problems()
	for _, s := range d.Result.Settings {
		if s.Failed == "" && d.Complete() && s.Rounds == 0 {
			out = append(out, "setting "+s.Name+" was not measured in any round")
		}
	}
	return append(out, d.Result.Warnings...)
}

// Notes: a comparison's warnings are among its problems.
func (d Tune) Notes() []string { return notesBeside(d) }

func (d Tune) Summary() Summary {
	r := d.Result
	s := summaryOf(d, r.Local.EndpointName, "")
	s.Levels, s.Replay = r.Plan.Concurrency, r.Plan.Replay != nil
	if s.Replay {
		s.Levels = nil // its one level is the replay, not a number of users
	}
	for _, run := range r.Runs {
		for _, l := range run.Levels {
			s.BestOutputTPS = max(s.BestOutputTPS, l.Values["output_throughput"])
		}
	}
	for _, st := range r.Settings {
		if st.Server != nil && st.Server.Family != "" {
			s.Engine = engineName(results.Detection{Family: st.Server.Family, Version: st.Server.Build})
			break
		}
	}
	return s
}
