package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// stagesForm is the three-stage plan's form: the many-user stage's users
// and the quick mode.
type stagesForm struct {
	s            *BenchmarkScreen
	box          fyne.CanvasObject
	usersEntry   *formEntry
	quickCheck   *widget.Check
	timeoutEntry *formEntry
}

func newStagesForm(s *BenchmarkScreen) *stagesForm {
	f := &stagesForm{s: s}
	f.usersEntry = s.entry(fmt.Sprint(engine.DefaultUsers), countCheck("users", 1))
	f.quickCheck = widget.NewCheck("Quick mode: shorter answers and prefill, a smoke test", func(bool) { s.revalidate() })
	var timeout *widget.FormItem
	f.timeoutEntry, timeout = s.timeoutItem(plans.ByID(results.PlanStages))
	f.box = container.NewVBox(
		widget.NewForm(widget.NewFormItem("Users (many-user stage)", f.usersEntry), widget.NewFormItem("", f.quickCheck)),
		advanced(timeout),
	)
	return f
}

func (f *stagesForm) content() fyne.CanvasObject { return f.box }

// plan reads the three-stage plan's settings.
func (f *stagesForm) plan() (engine.StagesPlan, error) {
	p := engine.DefaultStagesPlan()
	users, err := engine.ParseCount("users", f.usersEntry.Text, 1)
	if err != nil {
		return p, err
	}
	p.Users, p.Quick = users, f.quickCheck.Checked
	if p.Timeout, err = engine.ParseTimeout(f.timeoutEntry.Text); err != nil {
		return p, err
	}
	return p, p.Validate()
}

func (f *stagesForm) check() (int, int, error) {
	_, err := f.plan()
	return 0, 0, err
}

func (f *stagesForm) summary() string {
	p, _ := f.plan()
	mode := "full"
	if p.Quick {
		mode = "quick: a smoke test, not the plan's numbers"
	}
	decode, prefill, users := p.Lengths()
	return fmt.Sprintf("Three stages (%s): single-user decode of %s-token answers on three prompts, a cold prefill of about %s tokens, then %d %s at once with %s-token answers. Kept in the history; never published.",
		mode, results.Thousands(decode), results.Thousands(prefill), p.Users, results.Plural(p.Users, "user", "users"), results.Thousands(users))
}

func (f *stagesForm) run(model string, simulated bool) (planRun, error) {
	p, err := f.plan()
	if err != nil {
		return nil, err
	}
	p.Model, p.Simulated = model, simulated
	return planRunOf(f.s, p, p.Model, engine.RunStages, func(r *results.StagesResult) plans.Doc { return plans.Stages{Result: r} }, nil), nil
}
