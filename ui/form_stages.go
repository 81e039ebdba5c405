package ui

import (
	"fmt"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// stagesForm is the three-stage plan's form: the many-user stage's users
// and the quick mode.
type stagesForm struct {
	formBase
	usersEntry *formEntry
	quickCheck *widget.Check
}

func newStagesForm(s *BenchmarkScreen) *stagesForm {
	f := &stagesForm{}
	timeout := f.init(s, results.PlanStages)
	f.usersEntry = s.entry(fmt.Sprint(setup.DefaultUsers), countCheck("users", 1))
	f.quickCheck = widget.NewCheck("Quick mode: shorter answers and prefill, a smoke test", func(bool) { s.revalidate() })
	f.box = container.NewVBox(
		s.aligned(widget.NewForm(widget.NewFormItem("Users (many-user stage)", f.usersEntry), widget.NewFormItem("", f.quickCheck))),
		s.advanced(timeout),
	)
	return f
}

// plan reads the three-stage plan's settings.
func (f *stagesForm) plan() (setup.StagesPlan, error) {
	p := setup.DefaultStagesPlan()
	p.Quick = f.quickCheck.Checked
	errs := readCount(f.usersEntry, "users", 1, &p.Users, nil)
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	return p, formError(errs, p.Validate)
}

func (f *stagesForm) check() (int, int, error) { return noLengths(f.plan()) }

// kept is the form's fields as kept for the next start (planForm).
func (f *stagesForm) kept() []keptField {
	return []keptField{keptEntry("users", f.usersEntry), keptCheck("quick", f.quickCheck), keptEntry("timeout", f.timeoutEntry)}
}

func (f *stagesForm) summary() string {
	p, _ := f.plan()
	mode := "full"
	if p.Quick {
		mode = "quick: a smoke test, not the plan's numbers"
	}
	decode, prefill, users := engine.StagesLengths(p)
	return fmt.Sprintf("Three stages (%s): single-user decode of %s-token answers on three prompts, a cold prefill of about %s tokens, then %d %s at once with %s-token answers. Kept in the history; never published.",
		mode, results.Thousands(decode), results.Thousands(prefill), p.Users, results.Plural(p.Users, "user", "users"), results.Thousands(users))
}

func (f *stagesForm) run(model string, simulated bool) (planRun, error) {
	return formRun(f.s, model, f.plan, func(p *setup.StagesPlan) { p.Model, p.Simulated = model, simulated },
		engine.RunStages, func(r *results.StagesResult) plans.Doc { return plans.NewStages(r) }, nil)
}
