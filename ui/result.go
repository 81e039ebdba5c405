package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// ResultView shows a finished (or stopped) run: a table per level, charts
// against concurrency, the warnings, and where the file is.
type ResultView struct {
	content fyne.CanvasObject // page, scrolling where the window is too short for it
	page    fyne.CanvasObject

	file  *results.File
	id    string
	path  string
	title *widget.Label
	state *widget.Label

	table        *fitTable
	rows         [][]string
	columns      []string
	tpsChart     *ChartView
	latencyChart *ChartView
	// views holds the charts and the request timeline, a tab each.
	views    *container.AppTabs
	timeline *TimelinePane
	energy   *energyPane   // the Power and cost tab; nil when the run read no power
	hardware *hardwarePane // the Hardware tab; nil when its source said none of it
	// problems are what makes the figures not describe the run asked
	// for (results.Warnings), above the table in the warning colour; nil
	// when there are none. warnings holds the notes, below.
	problems    *widget.Label
	warnings    *widget.Label
	connections *widget.Label // what was done about connections the server closed; nil when none
	showFile    *widget.Button
	newRun      *widget.Button
	export      *widget.Button
	compareWith *widget.Button
	share       *shareBar
	buttons     *fyne.Container
	// saveCharts are Save PNG… of the throughput and the TTFT chart, in
	// the tab bar's row while the Charts tab shows.
	saveCharts []*widget.Button
}

// resultChartHeight is the least height of the result's charts and of
// its timeline, under their tab bar.
const resultChartHeight = 170

func newResultView(u *App, f *results.File, id string, onNew func()) *ResultView {
	t := results.ResultTable(f)
	v := &ResultView{file: f, id: id, rows: t.Rows, columns: t.Columns}
	if id != "" {
		v.path = u.lib.Path(id)
	}
	model := "?"
	if len(f.Runs) > 0 {
		model = f.Runs[0].ModelID
	} else if f.Local.PartialRun != nil {
		model = f.Local.PartialRun.ModelID
	}
	// The model as History, Compare and every published file name it: a
	// llama-server without --alias reports its model file's whole path.
	v.title = widget.NewLabelWithStyle(fmt.Sprintf("%s on %s", results.ModelName(model), f.Local.Where()), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	ws := results.Warnings(f)
	problems, notes := results.Split(ws)
	state := results.Headline(f, ws)
	if f.Local.Simulated {
		state += " " + results.SimulatedNote
	}
	v.state = widget.NewLabel(state)
	v.state.Wrapping = fyne.TextWrapWord
	if len(problems) > 0 {
		v.state.Importance = widget.WarningImportance
		v.state.TextStyle.Bold = true
		text := bullets(problems)
		if details := results.ErrorDetails(f); len(details) > 0 {
			text += "\nFirst error of each kind:\n    " + strings.Join(details, "\n    ")
		}
		v.problems = widget.NewLabel(text)
		v.problems.Importance = widget.WarningImportance
		v.problems.Wrapping = fyne.TextWrapWord
	}

	v.table = textTable(v.rows, v.columns)
	v.table.allRows = true // a few levels: every one shown, the page scrolls

	p := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	v.tpsChart = NewChartView(chart.NoCurve)
	v.latencyChart = NewChartView(chart.NoCurve)
	v.tpsChart.SetSpec(chart.Throughput(f, p))
	v.latencyChart.SetSpec(chart.TTFT(f, p))
	name := u.postName(id, plans.Kovara{File: f})
	v.tpsChart.SetRun(name)
	v.latencyChart.SetRun(name)

	v.warnings = widget.NewLabel(notesText(notes, len(problems) > 0))
	v.warnings.Wrapping = fyne.TextWrapWord
	v.showFile = showFileButton(u, id)
	v.newRun = widget.NewButton("New benchmark", onNew)
	v.export = widget.NewButton("Export…", func() { u.showExport(id) })
	v.compareWith = widget.NewButton("Compare with…", func() { u.compareWith(id) })
	if id == "" {
		v.export.Disable()
		v.compareWith.Disable()
	}
	v.share = resultShare(u, plans.Kovara{File: f}, id)
	v.buttons = container.NewHBox(v.newRun, v.export, v.share.content, v.compareWith, v.showFile)
	file := widget.NewLabel("Saved in the history: " + v.path)
	if v.path == "" {
		file.SetText("Not saved.")
	}
	file.Wrapping = fyne.TextWrapBreak
	file.Selectable = true // the path, to copy
	// The title shares its row with the buttons while it fits beside them
	// on one line, so a default run's page fits a 1024×640 window without
	// scrolling; else the buttons go under it (titleRow).
	v.title.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(newTitleRow(v.title, v.buttons), v.state)
	if v.problems != nil {
		top.Add(v.problems)
	}
	top.Add(file)
	if note := results.ConnectionNote(f); note != "" {
		v.connections = widget.NewLabel(note)
		v.connections.Wrapping = fyne.TextWrapWord
		top.Add(v.connections)
	}
	charts := container.NewGridWithColumns(2, v.tpsChart, v.latencyChart)
	// The tab bar takes the height the charts give up, so a default
	// run's page still fits a 1024×640 window.
	v.tpsChart.SetMinHeight(resultChartHeight)
	v.latencyChart.SetMinHeight(resultChartHeight)
	v.timeline = newTimelinePane(u, f)
	v.timeline.fitHeight(resultChartHeight)
	for _, view := range v.timeline.views {
		view.SetRun(name)
	}
	v.views = container.NewAppTabs(
		container.NewTabItem("Charts", charts),
		container.NewTabItem("Timeline", v.timeline.content),
	)
	if v.energy = newEnergyPane(u, plans.Kovara{File: f}, name); v.energy != nil {
		v.views.Append(container.NewTabItem("Power and cost", v.energy.content))
	}
	if v.hardware = newHardwarePane(u, plans.Kovara{File: f}, name); v.hardware != nil {
		v.views.Append(container.NewTabItem("Hardware", v.hardware.content))
	}
	if len(f.Runs) < 2 && len(v.timeline.views) > 0 {
		// One level draws no curve: its timeline is what there is to see.
		v.views.SelectIndex(1)
	}
	// Save PNG… of each chart sits in the tab bar's row, right of the
	// tabs, where it takes no height from the charts.
	for _, c := range []struct {
		view *ChartView
		text string
	}{{v.tpsChart, "Save throughput PNG…"}, {v.latencyChart, "Save TTFT PNG…"}} {
		b := widget.NewButton(c.text, func() { u.saveChart(c.view, c.view.Title()) })
		if !c.view.ShowingChart() {
			b.Disable()
		}
		v.saveCharts = append(v.saveCharts, b)
	}
	saves := container.NewHBox(v.saveCharts[0], v.saveCharts[1])
	v.views.OnSelected = func(t *container.TabItem) {
		if t.Content == charts {
			saves.Show()
		} else {
			saves.Hide()
		}
	}
	if v.views.SelectedIndex() != 0 {
		saves.Hide()
	}
	tabs := container.NewStack(v.views, container.NewVBox(container.NewHBox(layout.NewSpacer(), saves)))
	v.page = container.NewBorder(container.NewVBox(top, v.table), v.warnings, nil, nil, tabs)
	v.content = pageScroll(v.page) // the wheel over the table or a field moves it too
	return v
}

// postName names run id (document d) where it is seen outside the app, in
// a saved chart: its label in History, its model and its engine
// (chart.RunName); never where it ran.
func (u *App) postName(id string, d plans.Doc) string {
	label := ""
	if id != "" && u.lib != nil {
		label = u.lib.Annotation(id).Label
	}
	if k, ok := d.(plans.Kovara); ok {
		return chart.RunOf(k.File, label)
	}
	return chart.Simulated(chart.RunName(label, d.Model(), chart.EngineName(d.Summary().Engine)), d.Simulated())
}

// notesText is the notes under a result, or that there are none (none
// besides the problems above, when there are).
func notesText(notes []string, problems bool) string {
	switch {
	case len(notes) == 0 && problems:
		return "No other warnings."
	case len(notes) == 0:
		return "No warnings."
	}
	return "Notes:\n" + bullets(notes)
}

// bullets puts each line after a bullet.
func bullets(lines []string) string {
	return "• " + strings.Join(lines, "\n• ")
}

// showResult shows a finished or stopped run.
func (s *BenchmarkScreen) showResult(f *results.File, id string, runErr, saveErr error) {
	s.result = newResultView(s.u, f, id, s.backToSetup)
	if saveErr != nil {
		s.result.state.SetText(s.result.state.Text + "\n" + notSavedNote(saveErr))
	}
	s.showView(s.result.content)
}
