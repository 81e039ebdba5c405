package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/plans"
)

// savableChart is a chart with its Save PNG… button under it; the button
// is added to saves for the tests.
func savableChart(u *App, view *ChartView, title string, saves *[]*widget.Button) fyne.CanvasObject {
	b := widget.NewButton("Save PNG…", func() { u.saveChart(view, title) })
	*saves = append(*saves, b)
	return container.NewBorder(nil, container.NewHBox(b), nil, nil, view)
}

// planTitle makes a plan page's title, cut short where a long model id
// would widen the view past a small window, and its headline in bold.
func planTitle(title, headline string) (*widget.Label, *widget.Label) {
	t := widget.NewLabelWithStyle(title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	t.Truncation = fyne.TextTruncateEllipsis
	h := widget.NewLabelWithStyle(headline, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	h.Wrapping = fyne.TextWrapWord
	return t, h
}

// planPage lays out a plan's result as the capacity and context views
// share it: the title's row with back and Show file, the headline, the
// state and problems in the warning colour (problemsLabel; nil when there
// are none) and the state above; the charts over the table, which scrolls
// with the notes under it, so the page fits a 1024×640 window
// (docs/plans.md).
func planPage(u *App, id string, title *widget.Label, back *widget.Button, headline fyne.CanvasObject, state, notes *widget.Label,
	d plans.Doc, charts, table fyne.CanvasObject) (content fyne.CanvasObject, problems *widget.Label) {
	top := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(back, showFileButton(u, id)), title), headline)
	if problems = problemsLabel(d); problems != nil {
		top.Add(problems)
	}
	top.Add(state)
	if t, ok := table.(*fitTable); ok {
		// Every row, the notes under them: the part under the charts
		// scrolls as a whole (a table of its own height in a scroll shows
		// one row).
		t.allRows = true
	}
	body := container.NewVSplit(charts, container.NewVScroll(container.NewBorder(nil, notes, nil, nil, table)))
	body.Offset = 0.55
	return container.NewBorder(top, nil, nil, nil, body), problems
}

// problemsLabel says a result's state and its problems in the warning
// colour, as every plan's view shows them above its figures (the words
// the CLI prints and History counts: plans.State, Doc.Problems); nil
// when it has none.
func problemsLabel(d plans.Doc) *widget.Label {
	ps := d.Problems()
	if len(ps) == 0 {
		return nil
	}
	l := widget.NewLabel(plans.State(d) + "\n" + bullets(ps))
	l.Importance = widget.WarningImportance
	l.Wrapping = fyne.TextWrapWord
	return l
}

// attention shows a result's headline in the warning colour when the
// result is stopped, failed or has problems (plans.NeedsAttention).
func attention(headline *widget.Label, d plans.Doc) {
	if plans.NeedsAttention(d) {
		headline.Importance = widget.WarningImportance
	}
}
