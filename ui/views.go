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
	results.PlanStages: func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := newStagesView(u, d.(plans.Stages).Result, id, saveErr, onBack)
		return planView{v.content, v.back, v}
	},
	results.PlanSpecDec: func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := newSpecDecView(u, d.(plans.SpecDec).Result, id, saveErr, onBack)
		return planView{v.content, v.back, v}
	},
	results.PlanCapacity: func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := newCapacityView(u, d.(plans.Capacity).Result, id, saveErr, onBack)
		return planView{v.content, v.back, v}
	},
	results.PlanContext: func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := newContextView(u, d.(plans.Context).Result, id, saveErr, onBack)
		return planView{v.content, v.back, v}
	},
	results.PlanTune: func(u *App, d plans.Doc, id string, saveErr error, onBack func()) planView {
		v := newTuneView(u, d.(plans.Tune).Result, id, saveErr, onBack)
		return planView{v.content, v.back, v}
	},
}

// resultView is d's result view.
func (u *App) resultView(d plans.Doc, id string, saveErr error, onBack func()) planView {
	return resultViews[d.Kind().ID](u, d, id, saveErr, onBack)
}
