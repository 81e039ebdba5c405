package plans

import (
	"time"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

var answersKind = &Kind{
	ID:       results.PlanAnswers,
	Title:    "Compare answers: did this setting change the model's answers?",
	Results:  "answers comparisons",
	RunKinds: []RunKind{{results.PlanAnswers, "answers"}},
	// One request is one token, or a reference answer of a few dozen.
	Timeout:   answersTimeout,
	Demo:      sim.AnswersDemo,
	StopKeeps: "nothing of the comparison is kept: figures from part of the answers would say less than they seem",
	Streamless: "No tokens stream in this plan: each request reads the next token's probabilities at one place of an answer. " +
		"The bars above say how far it is.",
	doc:     docsOf(results.AnswersDoc, NewAnswers),
	compare: compareBy(compare.AnswersVerdict, compare.AnswersTable),
}

// Answers is an answers comparison as a plan document.
type Answers struct {
	docBase[results.AnswersResult, *results.AnswersResult]
}

// NewAnswers is r as a plan document.
func NewAnswers(r *results.AnswersResult) Answers { return Answers{baseOf(r)} }

func (d Answers) Kind() *Kind { return answersKind }

// Measured: the other setting's figures, or at least the baseline's
// floor (read before the other setting failed), are worth keeping.
func (d Answers) Measured() bool { return d.Result.Figures != nil || d.Result.Floor != nil }

// Failed: the two settings' answers could not be compared (a server
// without token probabilities, two tokenisers, a restarted answer).
func (d Answers) Failed() bool { return d.Result.Figures == nil }

func (d Answers) Problems() []string { return d.Result.Problems() }

// Notes are the figures prompt kind by prompt kind, then what the
// measurement noted (a short top list, the route a server was read by).
func (d Answers) Notes() []string {
	return notesBeside(d, []string{d.Result.KindsWords(), d.Result.PartsWords(), "Read: " + d.Result.SettingsWords() + "."}, d.Result.Notes)
}

// Models are the two models compared, both measured: a report names
// them, where it blanks any other model the endpoint served.
func (d Answers) Models() []string { return []string{d.Result.Baseline.Model, d.Result.Other.Model} }

func (d Answers) Summary() Summary {
	r := d.Result
	s := summaryOf(d, r.Local.EndpointName, engineName(results.Detection{Family: r.Baseline.Family, Version: r.Baseline.Build}))
	// Both models: History and Compare tell answers comparisons of one
	// baseline apart by what was set against it.
	if r.Other.Model != "" && r.Baseline.Model != "" {
		s.Model = results.ModelName(r.Other.Model) + " against " + results.ModelName(r.Baseline.Model)
	}
	return s
}

// answersTimeout bounds one request of the answers plan: a reference
// answer of a few dozen tokens with its lists, on a slow CPU server.
const answersTimeout = 120 * time.Second
