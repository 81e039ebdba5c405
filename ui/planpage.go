package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
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
// problems in the warning colour (a nil label when there are none) and
// the state above; the charts over the table, which scrolls with the notes
// under it, so the page fits a 1024×640 window (docs/plans.md).
func planPage(u *App, id string, title *widget.Label, back *widget.Button, headline, state, notes *widget.Label,
	problems []string, charts, table fyne.CanvasObject) (content fyne.CanvasObject, problemsLabel *widget.Label) {
	top := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(back, showFileButton(u, id)), title), headline)
	if len(problems) > 0 {
		problemsLabel = widget.NewLabel(bullets(problems))
		problemsLabel.Importance = widget.WarningImportance
		problemsLabel.Wrapping = fyne.TextWrapWord
		top.Add(problemsLabel)
	}
	top.Add(state)
	body := container.NewVSplit(charts, container.NewVScroll(container.NewBorder(nil, notes, nil, nil, table)))
	body.Offset = 0.55
	return container.NewBorder(top, nil, nil, nil, body), problemsLabel
}
