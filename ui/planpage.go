package ui

import (
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// notSavedNote says why a result could not be kept in the history.
func notSavedNote(err error) string { return "It could not be saved in the history: " + err.Error() }

// stateLabel is a result's state, wrapped: what ran (lead), that it was
// made against the simulator, where it is kept (kept; "" to say
// nothing), and why it could not be saved in the history, when it could
// not.
func stateLabel(lead []string, simulated bool, kept string, saveErr error) *widget.Label {
	parts := slices.Clone(lead)
	if simulated {
		parts = append(parts, results.SimulatedNote)
	}
	if kept != "" {
		parts = append(parts, kept)
	}
	if saveErr != nil {
		parts = append(parts, notSavedNote(saveErr))
	}
	l := widget.NewLabel(strings.Join(parts, " "))
	l.Wrapping = fyne.TextWrapWord
	return l
}

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

// chartPage is a plan's result page as the capacity and context views
// share it: its charts over its table.
type chartPage struct {
	content  fyne.CanvasObject
	headline *widget.Label
	problems *widget.Label // problemsLabel, above the state; nil when none
	state    *widget.Label
	rows     [][]string       // the table's cells, for the tests
	back     *widget.Button   // New benchmark
	saveAll  []*widget.Button // Save PNG… under each chart (savableChart)
	energy   *energyPane      // under the notes; nil when the run read no power
	hardware *hardwarePane    // under the energy; nil when its source said none of it
}

// frame is the page's content and its back button (viewOf).
func (p *chartPage) frame() (fyne.CanvasObject, *widget.Button) { return p.content, p.back }

// build lays the page out: the title's row with back and Show file, the
// headline (in the warning colour when the result needs attention), the
// problems and the state; the charts over d's table, which scrolls with
// the notes under it, so the page fits a 1024×640 window (docs/plans.md).
func (p *chartPage) build(u *App, id, title string, d plans.Doc, state, notes *widget.Label, charts fyne.CanvasObject, onBack func()) {
	var titleLabel *widget.Label
	titleLabel, p.headline = planTitle(title, d.Headline())
	attention(p.headline, d)
	p.state = state
	p.back = widget.NewButton("New benchmark", onBack)
	t := d.Table()
	p.rows = t.Rows
	table := textTable(t.Rows, t.Columns)
	// Every row, the notes under them: the part under the charts scrolls
	// as a whole (a table of its own height in a scroll shows one row).
	table.allRows = true
	top := container.NewVBox(container.NewBorder(nil, nil, nil, container.NewHBox(p.back, resultShare(u, d, id).content, showFileButton(u, id)), titleLabel), p.headline)
	if p.problems = problemsLabel(d); p.problems != nil {
		top.Add(p.problems)
	}
	top.Add(state)
	under := fyne.CanvasObject(notes)
	p.energy, p.hardware = newEnergyPane(u, d, u.postName(id, d)), newHardwarePane(u, d, u.postName(id, d))
	if p.energy != nil || p.hardware != nil {
		box := container.NewVBox(notes)
		if p.energy != nil {
			box.Add(p.energy.content)
		}
		if p.hardware != nil {
			box.Add(p.hardware.content)
		}
		under = box
	}
	body := container.NewVSplit(charts, pageScroll(container.NewBorder(nil, under, nil, nil, table)))
	body.Offset = 0.55
	p.content = container.NewBorder(top, nil, nil, nil, body)
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
