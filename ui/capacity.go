package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// CapacityView shows a capacity result: the answer in words, per-user
// speed and TTFT p95 of every probe against concurrency (repeats as dots
// of their own) with the service level's limits and the answer drawn in,
// and every probe in the order measured.
type CapacityView struct {
	chartPage               // its state: the service level, the knee and where the result is kept
	warnings  *widget.Label // the notes, under the table
	speed     *ChartView
	ttft      *ChartView
}

func newCapacityView(u *App, r *results.CapacityResult, id string, saveErr error, onBack func()) *CapacityView {
	v := &CapacityView{}
	d := plans.NewCapacity(r)
	var notes []string
	notes = append(notes, "Service level: "+r.Settings.SLO()+fmt.Sprintf("; %d-token prompts, %d-token answers.", r.Settings.InputTokens, r.Settings.OutputTokens))
	if k := r.KneeLine(); k != "" {
		notes = append(notes, capitalize(k)+".")
	}
	state := stateLabel(notes, r.Local.Simulated, "Kept on this machine; capacity results are never published.", saveErr)

	palette := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	views, cells := resultCharts(u, chart.CapacityCharts(r, palette), "Two probed levels are needed for a chart.", u.postName(id, d), &v.saveAll)
	v.speed, v.ttft = views[0], views[1]
	charts := container.NewGridWithColumns(len(cells), cells...)

	_, notes = results.Split(r.Warnings())
	v.warnings = widget.NewLabel(notesText(notes, len(d.Problems()) > 0))
	v.warnings.Wrapping = fyne.TextWrapWord
	v.build(u, id, fmt.Sprintf("Capacity: %s on %s", results.ModelName(r.Model), r.Local.Where()), d, state, v.warnings, charts, onBack)
	return v
}
