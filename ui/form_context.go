package ui

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// contextForm is the context plan's form: the depths (from the server's
// context when empty), the repeats and users at each, and the answers'
// length.
type contextForm struct {
	formBase
	depthsEntry       *formEntry
	repeatsEntry      *formEntry
	contextUsersEntry *formEntry
	outputEntry       *formEntry
	seedEntry         *formEntry
}

func newContextForm(s *BenchmarkScreen) *contextForm {
	f := &contextForm{}
	timeout := f.init(s, results.PlanContext)
	d := setup.DefaultContextPlan()
	f.depthsEntry = s.entry("", func(v string) error { _, err := parseDepthsField(v); return err })
	f.depthsEntry.SetPlaceHolder("from the server's context: 0, 1k, 2k, 4k … (or a list: 1k,8k; the short prompt 0 always comes first)")
	f.repeatsEntry = s.entry(fmt.Sprint(d.Repeats), countCheck("repeats", 1))
	f.contextUsersEntry = s.entry(fmt.Sprint(d.Users), countCheck("users", 1))
	f.outputEntry = s.entry(fmt.Sprint(d.OutputTokens), countCheck("output tokens", 2))
	var seed *widget.FormItem
	f.seedEntry, seed = s.seedItem()
	f.box = container.NewVBox(
		s.aligned(widget.NewForm(
			widget.NewFormItem("Depths (tokens)", f.depthsEntry),
			widget.NewFormItem("Repeats at each depth", f.repeatsEntry),
			widget.NewFormItem("Users at once", f.contextUsersEntry),
			widget.NewFormItem("Output tokens", f.outputEntry),
		)),
		s.advanced(seed, timeout),
	)
	return f
}

// parseDepthsField reads the Depths field: empty chooses them from the
// server's context (nil), else engine.ParseDepths.
func parseDepthsField(v string) ([]int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return engine.ParseDepths(v)
}

// plan reads the context plan's settings.
func (f *contextForm) plan() (setup.ContextPlan, error) {
	p := setup.DefaultContextPlan()
	errs := readParsed(f.depthsEntry, "depths", parseDepthsField, &p.Depths, nil)
	errs = readCount(f.outputEntry, "output tokens", 2, &p.OutputTokens, errs)
	errs = readCount(f.repeatsEntry, "repeats", 1, &p.Repeats, errs)
	errs = readCount(f.contextUsersEntry, "users", 1, &p.Users, errs)
	errs = readSeed(f.seedEntry, &p.Seed, &p.FixedSeed, errs)
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	return p, formError(errs, p.Validate)
}

// kept is the form's fields as kept for the next start (planForm).
func (f *contextForm) kept() []keptField {
	return []keptField{
		keptEntry("depths", f.depthsEntry), keptEntry("repeats", f.repeatsEntry), keptEntry("users", f.contextUsersEntry),
		keptEntry("output_tokens", f.outputEntry), keptEntry("seed", f.seedEntry), keptEntry("timeout", f.timeoutEntry),
	}
}

// check holds depths given to the context like any plan's prompts, with
// room for the follow-up; chosen from the server's context, they fit by
// construction.
func (f *contextForm) check() (int, int, error) {
	p, err := f.plan()
	if err == nil && f.s.endpointSelect.Selected != "" {
		if why := f.s.u.contextPlanProblem(f.s.endpointSelect.Selected, f.s.chosenModel(), p); why != "" {
			err = errors.New(why)
		}
	}
	return 0, 0, err
}

func (f *contextForm) summary() string {
	s := f.s
	p, _ := f.plan()
	depths := "depths from the server's context (0, then doubling from 1k)"
	switch d := s.u.checkedDetection(s.endpointSelect.Selected, s.chosenModel()); {
	case len(p.Depths) > 0:
		depths = "depths " + engine.FormatDepths(engine.ContextDepths(p, nil)) // the short prompt first, always
	case d != nil && d.ContextLength > 0:
		// What will run, from the context the last check read.
		depths = fmt.Sprintf("depths %s (what fits the server's context of %d tokens at the endpoint's last check)",
			engine.FormatDepths(engine.ContextDepths(p, d)), d.ContextLength)
	}
	return fmt.Sprintf("Context: %s; at each, %d × %d %s with a fresh prompt and a %d-token answer, then a cached follow-up. Kept in the history; never published.",
		depths, p.Repeats, p.Users, results.Plural(p.Users, "user", "users at once"), p.OutputTokens)
}

func (f *contextForm) run(model string, simulated bool) (planRun, error) {
	return formRun(f.s, model, f.plan, func(p *setup.ContextPlan) { p.Model, p.Simulated = model, simulated },
		engine.RunContext, func(r *results.ContextResult) plans.Doc { return plans.NewContext(r) },
		func(r *results.ContextResult) (string, *results.Detection) { return r.Model, &r.Engine })
}
