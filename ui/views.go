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

// resultViews are the plans' result views, by plan (one for every
// registered plan: TestEveryPlanHasAFormAndAView).
var resultViews = map[string]newView{
	results.PlanKovara: func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := newResultView(u, d.(plans.Kovara).File, id, onBack)
		if saveErr != nil {
			v.state.SetText(v.state.Text + "\n" + notSavedNote(saveErr))
		}
		return planView{v.content, v.newRun, v}
	},
	results.PlanStages:   viewOf(newStagesView),
	results.PlanSpecDec:  viewOf(newSpecDecView),
	results.PlanCapacity: viewOf(newCapacityView),
	results.PlanContext:  viewOf(newContextView),
	results.PlanRate:     viewOf(newRateView),
	results.PlanTune:     viewOf(newTuneView),
	results.PlanAnswers:  viewOf(newAnswersView),
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
	return resultViews[d.Kind().ID](u, d, id, saveErr, onBack)
}
