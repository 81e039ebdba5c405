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

// ContextView shows a context result: the headline in words, prefill and
// decode speed and TTFT cold against cached by depth (chart.ContextCharts),
// and the table per depth with how it was measured under it.
type ContextView struct {
	content  fyne.CanvasObject
	headline *widget.Label
	problems *widget.Label // failures per depth, above the charts; nil when none
	state    *widget.Label // how the prompts were sized, where the result is kept
	method   *widget.Label // how the figures are made, and the run's warnings
	rows     [][]string
	prefill  *ChartView
	decode   *ChartView
	ttft     *ChartView
	back     *widget.Button
	saveAll  []*widget.Button // Save PNG… under each chart
}

func newContextView(u *App, r *results.ContextResult, id string, saveErr error, onBack func()) *ContextView {
	t := r.Table()
	v := &ContextView{rows: t.Rows}
	var title *widget.Label
	title, v.headline = planTitle(fmt.Sprintf("Context depth: %s on %s", r.Model, r.Local.Where()), r.Headline())
	d := plans.Context{Result: r}
	attention(v.headline, d)
	notes := []string{capitalize(r.PromptsLine()) + "."}
	if r.Local.Simulated {
		notes = append(notes, "Simulated: made against the built-in simulator.")
	}
	notes = append(notes, "Kept on this machine; context results are never published.")
	if saveErr != nil {
		notes = append(notes, "It could not be saved in the history: "+saveErr.Error())
	}
	v.state = widget.NewLabel(strings.Join(notes, " "))
	v.state.Wrapping = fyne.TextWrapWord

	palette := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	specs := chart.ContextCharts(r, palette)
	views := make([]*ChartView, len(specs))
	for i, spec := range specs {
		views[i] = NewChartView("Two measured depths are needed for a chart.")
		views[i].SetSpec(spec)
	}
	v.prefill, v.decode, v.ttft = views[0], views[1], views[2]
	charts := container.NewGridWithColumns(3, savableChart(u, v.prefill, specs[0].Title, &v.saveAll),
		savableChart(u, v.decode, specs[1].Title, &v.saveAll), savableChart(u, v.ttft, specs[2].Title, &v.saveAll))

	table := textTable(t.Rows, t.Columns)
	v.back = widget.NewButton("New benchmark", onBack)
	under := []string{capitalize(r.Method()) + "."}
	if n := r.TimerNote(); n != "" {
		under = append(under, capitalize(n)+".")
	}
	for _, w := range r.Warnings {
		under = append(under, "• "+w)
	}
	v.method = widget.NewLabel(strings.Join(under, "\n"))
	v.method.Wrapping = fyne.TextWrapWord
	v.content, v.problems = planPage(u, id, title, v.back, v.headline, v.state, v.method, d, charts, table)
	u.contextView = v
	return v
}
