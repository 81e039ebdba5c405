package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// specDecForm is the speculative-decoding plan's form: the answers'
// length, the levels and the requests (its prompts are its own).
type specDecForm struct {
	formBase
	outputEntry   *formEntry
	levelsEntry   *formEntry
	requestsEntry *formEntry
}

func newSpecDecForm(s *BenchmarkScreen) *specDecForm {
	f := &specDecForm{}
	timeout := f.init(s, results.PlanSpecDec)
	d := setup.DefaultSpecDecPlan()
	f.outputEntry = s.entry(fmt.Sprint(d.MaxTokens), countCheck("output tokens", 1))
	f.levelsEntry = s.entry(engine.FormatLevels(d.Levels), func(v string) error { _, err := engine.ParseLevels(v); return err })
	f.requestsEntry = s.entry("", optionalCount("requests"))
	f.requestsEntry.SetPlaceHolder("every prompt, at least 2 per user")
	f.box = container.NewVBox(
		s.aligned(widget.NewForm(widget.NewFormItem("Output tokens", f.outputEntry), widget.NewFormItem("Concurrency levels", f.levelsEntry))),
		s.advanced(widget.NewFormItem("Requests per level", f.requestsEntry), timeout),
	)
	return f
}

// plan reads the speculative-decoding plan's settings.
func (f *specDecForm) plan() (setup.SpecDecPlan, error) {
	p := setup.DefaultSpecDecPlan()
	errs := readParsed(f.levelsEntry, "concurrency levels", engine.ParseLevels, &p.Levels, nil)
	if strings.TrimSpace(f.requestsEntry.Text) != "" { // empty: the plan chooses per level
		errs = readCount(f.requestsEntry, "requests", 1, &p.Requests, errs)
	}
	errs = readCount(f.outputEntry, "output tokens", 1, &p.MaxTokens, errs)
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	return p, formError(errs, p.Validate)
}

func (f *specDecForm) check() (int, int, error) { return noLengths(f.plan()) }

// kept is the form's fields as kept for the next start (planForm).
func (f *specDecForm) kept() []keptField {
	return []keptField{
		keptEntry("output_tokens", f.outputEntry), keptEntry("concurrency", f.levelsEntry),
		keptEntry("requests", f.requestsEntry), keptEntry("timeout", f.timeoutEntry),
	}
}

func (f *specDecForm) summary() string {
	p, _ := f.plan()
	return fmt.Sprintf("Speculative decoding: %d %s, natural stops on representative prompts, acceptance from the server's counters. Not publishable.", len(p.Levels), results.Plural(len(p.Levels), "level", "levels"))
}

func (f *specDecForm) run(model string, simulated bool) (planRun, error) {
	return formRun(f.s, model, f.plan, func(p *setup.SpecDecPlan) { p.Model, p.Simulated = model, simulated },
		engine.RunSpecDec, func(r *results.SpecDecResult) plans.Doc { return plans.NewSpecDec(r) }, nil)
}
