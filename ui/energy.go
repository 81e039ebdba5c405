package ui

import (
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// energyPane is what a result says it cost to run (issue #49): the power
// over the run with its windows marked, the energy and cost table
// (plans.Energy, as the CLI and the reports have it) with its notes, and
// the price of a kWh it is figured at, which the person sets here and
// the app keeps for every result (storage.Settings).
type energyPane struct {
	content  fyne.CanvasObject
	chart    *ChartView
	price    *widget.Entry
	currency *widget.Entry
	problem  *widget.Label // what is wrong with the price typed; hidden when nothing
	notes    *widget.Label
	tableBox *fyne.Container
	// The table's cells as shown, for the tests.
	columns []string
	rows    [][]string

	u *App
	d plans.Doc
}

// newEnergyPane is d's energy pane, or nil when its run read neither a
// GPU source nor a wall plug.
func newEnergyPane(u *App, d plans.Doc, name string) *energyPane {
	if t, _ := plans.Energy(d, nil); t == nil {
		return nil
	}
	e := &energyPane{u: u, d: d, tableBox: container.NewStack()}
	e.chart = NewChartView(chart.NoPower)
	e.chart.SetMinHeight(resultChartHeight)
	e.chart.SetRun(name)
	if p, ok := plans.Powered(d); ok {
		if spec, ok := chart.PowerOverTime(p, PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())); ok {
			e.chart.SetSpec(spec)
		}
	}
	e.price, e.currency = widget.NewEntry(), widget.NewEntry()
	e.price.SetPlaceHolder("0.32")
	e.currency.SetPlaceHolder("EUR")
	if p := u.price(); p != nil {
		e.price.SetText(strconv.FormatFloat(p.PerKWh, 'f', -1, 64))
		e.currency.SetText(p.Currency)
	}
	e.problem = widget.NewLabel("")
	e.problem.Importance = widget.WarningImportance
	e.problem.Wrapping = fyne.TextWrapWord
	e.problem.Hide()
	e.notes = widget.NewLabel("")
	e.notes.Wrapping = fyne.TextWrapWord
	e.price.OnChanged = func(string) { e.onPrice() }
	e.currency.OnChanged = func(string) { e.onPrice() }
	priceRow := container.NewHBox(widget.NewLabel("Electricity price per kWh"), sized(e.price, 80), sized(e.currency, 70))
	e.show(u.price())
	table := container.NewBorder(container.NewVBox(widget.NewLabelWithStyle(results.EnergyTitle, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), priceRow, e.problem),
		e.notes, nil, nil, e.tableBox)
	e.content = container.NewGridWithColumns(2, e.chart, table)
	return e
}

// sized is an entry as wide as w, in a row that would squeeze it.
func sized(o fyne.CanvasObject, w float32) fyne.CanvasObject {
	return container.NewGridWrap(fyne.NewSize(w, o.MinSize().Height), o)
}

// onPrice takes the price as typed: a price and its currency are kept
// for every result and the table shows the cost; both fields empty
// forget it; anything else says what is wrong and keeps the last good
// price.
func (e *energyPane) onPrice() {
	text, cur := strings.TrimSpace(e.price.Text), strings.TrimSpace(e.currency.Text)
	var p *results.Price
	if text != "" || cur != "" {
		v, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", "."), 64)
		if err != nil {
			e.say("The price per kWh should be a number, like 0.32.")
			return
		}
		if p, err = results.ParsePrice(v, cur); err != nil {
			e.say(capitalize(err.Error()) + ".")
			return
		}
	}
	e.say("")
	e.u.setPrice(p)
	e.show(p)
}

func (e *energyPane) say(s string) {
	e.problem.SetText(s)
	e.problem.Hidden = s == ""
	e.problem.Refresh()
}

// show draws the table and its notes at price p.
func (e *energyPane) show(p *results.Price) {
	t, notes := plans.Energy(e.d, p)
	if t == nil {
		return
	}
	e.columns, e.rows = t.Columns, t.Rows
	tbl := textTable(t.Rows, t.Columns)
	tbl.allRows = true
	e.tableBox.Objects = []fyne.CanvasObject{tbl}
	e.tableBox.Refresh()
	e.notes.SetText(strings.Join(notes, "\n"))
}

// price is the price of a kWh the app keeps (storage.Settings), nil
// when none was given or it cannot be read.
func (u *App) price() *results.Price {
	st, err := storage.OpenSettings(u.opts.Dirs.Config).Load()
	if err != nil {
		return nil
	}
	return st.Price()
}

// setPrice keeps p (nil forgets it) for every result from now on, and
// says so when it cannot be written.
func (u *App) setPrice(p *results.Price) {
	st := storage.Settings{}
	if p != nil {
		st.PricePerKWh, st.Currency = p.PerKWh, p.Currency
	}
	if err := storage.OpenSettings(u.opts.Dirs.Config).Save(st); err != nil {
		u.notify("The price could not be kept: "+err.Error(), "")
	}
}
