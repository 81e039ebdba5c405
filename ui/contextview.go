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
	chartPage               // its state: how the prompts were sized, where the result is kept
	method    *widget.Label // how the figures are made, and the run's warnings
	prefill   *ChartView
	decode    *ChartView
	ttft      *ChartView
}

func newContextView(u *App, r *results.ContextResult, id string, saveErr error, onBack func()) *ContextView {
	v := &ContextView{}
	d := plans.NewContext(r)
	state := stateLabel([]string{capitalize(r.PromptsLine()) + "."}, r.Local.Simulated, "Kept on this machine; context results are never published.", saveErr)

	palette := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	views, cells := resultCharts(u, chart.ContextCharts(r, palette), "Two measured depths are needed for a chart.", u.postName(id, d), &v.saveAll)
	v.prefill, v.decode, v.ttft = views[0], views[1], views[2]
	charts := container.NewGridWithColumns(len(cells), cells...)

	under := []string{capitalize(r.Method()) + "."}
	if n := r.TimerNote(); n != "" {
		under = append(under, capitalize(n)+".")
	}
	for _, w := range r.Warnings {
		under = append(under, "• "+w)
	}
	v.method = widget.NewLabel(strings.Join(under, "\n"))
	v.method.Wrapping = fyne.TextWrapWord
	v.build(u, id, fmt.Sprintf("Context depth: %s on %s", results.ModelName(r.Model), r.Local.Where()), d, state, v.method, charts, onBack)
	u.contextView = v
	return v
}
