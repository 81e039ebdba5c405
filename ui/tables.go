package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// textTable is a read-only table of rows under bold column headings, the
// shape every result view shows. cell and header are template texts that
// size a cell and a heading before the widths are set.
func textTable(rows [][]string, columns []string, cell, header string) *widget.Table {
	t := widget.NewTableWithHeaders(
		func() (int, int) { return len(rows), len(columns) },
		func() fyne.CanvasObject { return widget.NewLabel(cell) },
		func(id widget.TableCellID, o fyne.CanvasObject) { o.(*widget.Label).SetText(rows[id.Row][id.Col]) },
	)
	t.ShowHeaderColumn = false
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle(header, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Row < 0 && id.Col >= 0 {
			o.(*widget.Label).SetText(columns[id.Col])
		}
	}
	return t
}
