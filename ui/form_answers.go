package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// sameEndpoint is the Against field's choice of the baseline's own
// endpoint (another model of it).
const sameEndpoint = "This endpoint (another model)"

// answersForm is the answers comparison's form: the other setting (an
// endpoint and a model; the baseline is the page's endpoint and model),
// and how much is read.
type answersForm struct {
	formBase
	againstSelect *widget.Select
	modelEntry    *formEntry
	promptsEntry  *formEntry
	posEntry      *formEntry
	topEntry      *formEntry
}

// answers is the screen's answers form.
func (s *BenchmarkScreen) answers() *answersForm {
	f, _ := s.forms[results.PlanAnswers].(*answersForm)
	return f
}

func newAnswersForm(s *BenchmarkScreen) *answersForm {
	f := &answersForm{}
	timeout := f.init(s, results.PlanAnswers)
	f.againstSelect = widget.NewSelect(nil, func(string) { s.revalidate() })
	f.againstOptions()
	f.againstSelect.SetSelected(sameEndpoint)
	f.modelEntry = s.entry("", nil)
	f.modelEntry.SetPlaceHolder("the other setting's model (empty: the only one it serves)")
	f.promptsEntry = s.entry(strconv.Itoa(len(setup.AnswerPrompts)), countCheck("prompts", 1))
	f.posEntry = s.entry("32", countCheck("positions", 1))
	f.topEntry = s.entry("20", countCheck("top tokens", 1))
	f.box = container.NewVBox(
		s.aligned(widget.NewForm(
			widget.NewFormItem("Against", f.againstSelect),
			widget.NewFormItem("Its model", f.modelEntry),
			widget.NewFormItem("Prompts", f.promptsEntry),
			widget.NewFormItem("Tokens read of each", f.posEntry),
		)),
		s.advanced(widget.NewFormItem("Top tokens asked", f.topEntry), timeout),
	)
	return f
}

// againstOptions are this endpoint and every saved one.
// endpointsChanged: the answers are compared against a saved endpoint too.
func (f *answersForm) endpointsChanged() { f.againstOptions() }

func (f *answersForm) againstOptions() {
	names := []string{sameEndpoint}
	saved, _ := f.s.u.endpoints.List()
	for _, e := range saved {
		names = append(names, e.Name)
	}
	f.againstSelect.Options = names
	if !slices.Contains(names, f.againstSelect.Selected) {
		f.againstSelect.SetSelected(sameEndpoint)
	}
	f.againstSelect.Refresh()
}

// plan reads the form; the other endpoint is named, its key read at the
// run.
func (f *answersForm) plan() (engine.AnswersRun, error) {
	var p engine.AnswersRun
	errs := readCount(f.promptsEntry, "prompts", 1, &p.AnswersPlan.Prompts, nil)
	errs = readCount(f.posEntry, "positions", 1, &p.Positions, errs)
	errs = readCount(f.topEntry, "top tokens", 1, &p.TopK, errs)
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	p.Model, p.AgainstModel = f.s.chosenModel(), f.modelEntry.Text
	if f.againstSelect.Selected != sameEndpoint && f.againstSelect.Selected != "" {
		p.Against = &setup.Endpoint{Name: f.againstSelect.Selected}
	}
	return p, formError(errs, func() error {
		if p.AnswersPlan.Prompts > len(setup.AnswerPrompts) {
			return fmt.Errorf("prompts: the set has %d", len(setup.AnswerPrompts))
		}
		if p.Against == nil && p.AgainstModel == "" {
			return errors.New("its model: name the other model of this endpoint, or choose another endpoint to compare against")
		}
		return p.Validate()
	})
}

func (f *answersForm) kept() []keptField {
	return []keptField{
		keptSelect("against", f.againstSelect), keptEntry("against_model", f.modelEntry), keptEntry("prompts", f.promptsEntry),
		keptEntry("positions", f.posEntry), keptEntry("top", f.topEntry), keptEntry("timeout", f.timeoutEntry),
	}
}

func (f *answersForm) check() (int, int, error) { return noLengths(f.plan()) }

// summary says what Run reads and what it costs in requests.
func (f *answersForm) summary() string {
	p, _ := f.plan()
	against := "another model of this endpoint"
	if p.Against != nil {
		against = p.Against.Name
	}
	if p.AgainstModel != "" {
		against += " (" + p.AgainstModel + ")"
	}
	return fmt.Sprintf("Compare answers: %s read token by token along this endpoint's answers to %d fixed prompts, %d tokens each, and this endpoint against itself as the floor: %d short requests.%s Kept in the history; never published.",
		against, p.AnswersPlan.Prompts, p.Positions, p.Requests(), f.estimate(p))
}

// estimate says how long the plan takes at the endpoints' tested speeds
// (the other endpoint's, or where it was not tested the baseline's).
func (f *answersForm) estimate(p engine.AnswersRun) string {
	s := f.s
	name, model := s.endpointSelect.Selected, s.chosenModel()
	if name == "" || name == SimulatorName {
		return ""
	}
	sp := s.u.speedOf(name, model)
	if sp == nil {
		return " Test the endpoint under Endpoints to learn how long this plan takes on it."
	}
	slots := engine.EstimateSlots(s.u.checkedDetection(name, model))
	other, otherSlots := sp, slots
	if p.Against != nil {
		other, otherSlots = s.u.speedOf(p.Against.Name, p.AgainstModel), engine.EstimateSlots(s.u.checkedDetection(p.Against.Name, p.AgainstModel))
	} else if o := s.u.speedOf(name, p.AgainstModel); o != nil {
		other = o
	}
	var os engine.TestedSpeed
	if other != nil {
		os = *other
	}
	d := engine.EstimateAnswers(p.AnswersPlan, *sp, os, slots, otherSlots)
	if other == nil {
		return fmt.Sprintf(" At most %s at this endpoint's tested speed (%s untested: taken as fast).", engine.FormatDuration(d), p.Against.Name)
	}
	return fmt.Sprintf(" At most %s at the tested speeds.", engine.FormatDuration(d))
}

func (f *answersForm) run(model string, simulated bool) (planRun, error) {
	u := f.s.u
	return formRun(f.s, model, f.plan, func(p *engine.AnswersRun) { p.Model, p.Simulated = model, simulated },
		func(ctx context.Context, p engine.AnswersRun, ep setup.Endpoint, obs engine.Observer) (*results.AnswersResult, error) {
			if p.Against != nil {
				// The other endpoint with its key, read here, off the UI
				// goroutine, as the baseline's is.
				saved, ok, err := u.endpoints.Get(p.Against.Name)
				if err != nil || !ok {
					return nil, &engine.PlanError{Err: fmt.Errorf("the endpoint %q to compare against cannot be found", p.Against.Name)}
				}
				key, kerr := saved.Key(u.keys)
				if kerr != nil && !errors.Is(kerr, storage.ErrNoKey) {
					return nil, &engine.PlanError{Err: fmt.Errorf("%s: %s", p.Against.Name, storage.KeyringReadProblem(kerr))}
				}
				oep := saved.WithKey(key)
				p.Against = &oep
			}
			return engine.RunAnswers(ctx, p, ep, obs)
		},
		func(r *results.AnswersResult) plans.Doc { return plans.NewAnswers(r) },
		// The document keeps no whole detection to remember as the
		// endpoint's last check.
		nil)
}
