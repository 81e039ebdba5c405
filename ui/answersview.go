package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// AnswersView shows an answers comparison: the figures against the floor
// with the ruler's word in the headline, the KL divergence by prompt kind
// and along the answers (chart.AnswersCharts), and the table of the
// other setting, the floor and each prompt kind with the notes under it.
type AnswersView struct {
	chartPage
	notes  *widget.Label
	charts []*ChartView
}

func newAnswersView(u *App, r *results.AnswersResult, id string, saveErr error, onBack func()) *AnswersView {
	v := &AnswersView{}
	d := plans.NewAnswers(r)
	state := stateLabel(nil, r.Local.Simulated, "Kept on this machine; answers comparisons are never published, and no word of the answers leaves it.", saveErr)
	palette := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	var charts fyne.CanvasObject = widget.NewLabel("No charts: the answers could not be compared.")
	if specs := chart.AnswersCharts(r, palette); len(specs) > 0 {
		views, cells := resultCharts(u, specs, "", u.postName(id, d), &v.saveAll)
		v.charts = views
		charts = container.NewGridWithColumns(len(cells), cells...)
	}
	v.notes = widget.NewLabel(strings.Join(d.Notes(), "\n"))
	v.notes.Wrapping = fyne.TextWrapWord
	// The models alone: the headline under it says their servers too.
	v.build(u, id, fmt.Sprintf("Answers: %s against %s", results.ModelName(r.Other.Model), results.ModelName(r.Baseline.Model)), d, state, v.notes, charts, onBack)
	return v
}
