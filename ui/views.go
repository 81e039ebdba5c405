package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// planView is a plan's result view as the Benchmark and History places
// show it.
type planView struct {
	content fyne.CanvasObject
	back    *widget.Button // "New benchmark", or "Back to history"
	view    any            // the view's own struct, for the tests
}

// newView makes one plan's result view; saveErr is why it could not be
// kept in the history, when it could not.
type newView func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView

// planScreen is what a plan has on the app's screens: its form on the
// Benchmark screen and its result view.
type planScreen struct {
	form func(s *BenchmarkScreen) planForm
	view newView
}

// planScreens are the plans' forms and result views, one line for every
// registered plan (TestEveryPlanHasAFormAndAView). The forms the tests
// and the screen reach by name are kept on the screen as they are made.
var planScreens = map[string]planScreen{
	results.PlanKovara:   {func(s *BenchmarkScreen) planForm { s.kovara = newKovaraForm(s); return s.kovara }, kovaraView},
	results.PlanStages:   {func(s *BenchmarkScreen) planForm { s.stages = newStagesForm(s); return s.stages }, viewOf(newStagesView)},
	results.PlanSpecDec:  {func(s *BenchmarkScreen) planForm { s.specDec = newSpecDecForm(s); return s.specDec }, viewOf(newSpecDecView)},
	results.PlanCapacity: {func(s *BenchmarkScreen) planForm { s.capacity = newCapacityForm(s); return s.capacity }, viewOf(newCapacityView)},
	results.PlanContext:  {func(s *BenchmarkScreen) planForm { s.context = newContextForm(s); return s.context }, viewOf(newContextView)},
	results.PlanRate:     {formOf(newRateForm), viewOf(newRateView)},
	results.PlanTune:     {func(s *BenchmarkScreen) planForm { s.tune = newTuneForm(s); return s.tune }, viewOf(newTuneView)},
	results.PlanAnswers:  {formOf(newAnswersForm), viewOf(newAnswersView)},
}

// kovaraView is the Kovara method's result view.
func kovaraView(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
	v := newResultView(u, d.(plans.Kovara).File, id, onBack)
	if saveErr != nil {
		v.state.SetText(v.state.Text + "\n" + notSavedNote(saveErr))
	}
	return planView{v.content, v.newRun, v}
}

// viewOf is the result view of a plan beyond the Kovara method, which
// build makes from the document's typed result (plans.ResultOf).
func viewOf[R any, V interface {
	frame() (fyne.CanvasObject, *widget.Button)
}](build func(u *App, r R, id string, saveErr error, onBack func()) V) newView {
	return func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := build(u, plans.ResultOf[R](d), id, saveErr, onBack)
		content, back := v.frame()
		return planView{content, back, v}
	}
}

// resultView is d's result view.
func (u *App) resultView(d plans.Doc, id string, saveErr error, onBack func()) planView {
	return planScreens[d.Kind().ID].view(u, d, id, saveErr, onBack)
}
