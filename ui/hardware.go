package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// hardwarePane is what a result's hardware did in each measured window
// (issue #50): the share of each window the cards slowed themselves and
// their clock against its maximum (chart.HardwareOverLevels), beside the
// table of it with the hottest reading, the cards' memory and the
// swapping (plans.Hardware, as the CLI and the reports have it). What it
// means for the figures is said once, in the page's problems and notes.
type hardwarePane struct {
	content fyne.CanvasObject
	chart   *ChartView
	// The table's cells as shown, for the tests.
	columns []string
	rows    [][]string
}

// newHardwarePane is d's hardware pane, or nil when its run's source
// said none of it.
func newHardwarePane(u *App, d plans.Doc, name string) *hardwarePane {
	t := plans.Hardware(d)
	if t == nil {
		return nil
	}
	h := &hardwarePane{columns: t.Columns, rows: t.Rows}
	h.chart = NewChartView("The source reported neither slowdowns nor clocks: the table has what it did report.")
	h.chart.SetMinHeight(resultChartHeight)
	h.chart.SetRun(name)
	if p, ok := plans.Powered(d); ok {
		if spec, ok := chart.HardwareOverLevels(p, PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())); ok {
			h.chart.SetSpec(spec)
		}
	}
	tbl := textTable(t.Rows, t.Columns)
	tbl.allRows = true
	title := widget.NewLabelWithStyle(results.HardwareTitle, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	// The table has more columns than the energy table: it takes three
	// fifths of the width, so a 1024-pixel window shows every one.
	split := container.NewHSplit(h.chart, container.NewBorder(title, nil, nil, nil, tbl))
	split.Offset = 0.4
	h.content = split
	return h
}
