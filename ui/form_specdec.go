package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// specDecForm is the speculative-decoding plan's form: the answers'
// length, the levels and the requests (its prompts are its own).
type specDecForm struct {
	s             *BenchmarkScreen
	box           fyne.CanvasObject
	outputEntry   *formEntry
	levelsEntry   *formEntry
	requestsEntry *formEntry
	timeoutEntry  *formEntry
}

func newSpecDecForm(s *BenchmarkScreen) *specDecForm {
	f := &specDecForm{s: s}
	d := engine.DefaultSpecDecPlan()
	f.outputEntry = s.entry(fmt.Sprint(d.MaxTokens), countCheck("output tokens", 1))
	f.levelsEntry = s.entry(engine.FormatLevels(d.Levels), func(v string) error { _, err := engine.ParseLevels(v); return err })
	f.requestsEntry = s.entry("", optionalCount("requests"))
	f.requestsEntry.SetPlaceHolder("every prompt, at least 2 per user")
	var timeout *widget.FormItem
	f.timeoutEntry, timeout = s.timeoutItem(plans.ByID(results.PlanSpecDec))
	f.box = container.NewVBox(
		widget.NewForm(widget.NewFormItem("Output tokens", f.outputEntry), widget.NewFormItem("Concurrency levels", f.levelsEntry)),
		advanced(widget.NewFormItem("Requests per level", f.requestsEntry), timeout),
	)
	return f
}

func (f *specDecForm) content() fyne.CanvasObject { return f.box }

// plan reads the speculative-decoding plan's settings.
func (f *specDecForm) plan() (engine.SpecDecPlan, error) {
	p := engine.DefaultSpecDecPlan()
	var err error
	if p.Levels, err = engine.ParseLevels(f.levelsEntry.Text); err != nil {
		return p, fmt.Errorf("concurrency levels: %w", err)
	}
	if strings.TrimSpace(f.requestsEntry.Text) != "" { // empty: the plan chooses per level
		if p.Requests, err = engine.ParseCount("requests", f.requestsEntry.Text, 1); err != nil {
			return p, err
		}
	}
	if p.MaxTokens, err = engine.ParseCount("output tokens", f.outputEntry.Text, 1); err != nil {
		return p, err
	}
	if p.Timeout, err = engine.ParseTimeout(f.timeoutEntry.Text); err != nil {
		return p, err
	}
	return p, p.Validate()
}

func (f *specDecForm) check() (int, int, error) {
	_, err := f.plan()
	return 0, 0, err
}

func (f *specDecForm) summary() string {
	p, _ := f.plan()
	return fmt.Sprintf("Speculative decoding: %d levels, natural stops on representative prompts, acceptance from the server's counters. Not publishable.", len(p.Levels))
}

func (f *specDecForm) run(model string, simulated bool) (planRun, error) {
	p, err := f.plan()
	if err != nil {
		return nil, err
	}
	p.Model, p.Simulated = model, simulated
	return planRunOf(f.s, p, p.Model, engine.RunSpecDec, func(r *results.SpecDecResult) plans.Doc { return plans.SpecDec{Result: r} }, nil), nil
}
