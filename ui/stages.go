package ui

import (
	"errors"
	"fmt"
	"image/color"
	"net/url"
	"os/exec"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// StagesView shows a three-stage result: each stage's numbers, the wiki
// block with a Copy button, and the warnings.
type StagesView struct {
	u        *App
	content  fyne.CanvasObject
	rows     [][]string
	wiki     *widget.Label
	copyWiki *widget.Button
	table    *fitTable
	cards    *fitTable     // the GPUs the run read; nil when none
	copied   *widget.Label // says the block went to the clipboard
	back     *widget.Button
	state    *widget.Label
	problems *widget.Label // the state and the stages that failed; nil when none
	energy   *energyPane   // under the warnings; nil when the run read no power
	hardware *hardwarePane // under the energy; nil when its source said none of it
}

// frame is the view's content and its back button (viewOf).
func (v *StagesView) frame() (fyne.CanvasObject, *widget.Button) { return v.content, v.back }

const (
	copyWikiText = "Copy wiki block"
	copiedText   = "Copied to the clipboard ✓"
)

func newStagesView(u *App, r *results.StagesResult, id string, saveErr error, onBack func()) *StagesView {
	t := r.Table()
	v := &StagesView{u: u, rows: t.Rows}
	title := widget.NewLabelWithStyle(fmt.Sprintf("Three stages: %s on %s", results.ModelName(r.Model), r.Local.Where()), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	d := plans.NewStages(r)
	// The headline says itself that it was simulated.
	v.state = stateLabel([]string{r.Headline()}, false, "", saveErr)
	attention(v.state, d)
	v.problems = problemsLabel(d)
	v.table = textTable(t.Rows, t.Columns)
	block := r.WikiBlock()
	v.wiki = widget.NewLabelWithStyle(block, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.wiki.Selectable = true
	v.copyWiki = widget.NewButton(copyWikiText, func() { v.onCopy(block) })
	v.back = widget.NewButton("New benchmark", onBack)
	v.copied = widget.NewLabel("")
	v.copied.Importance = widget.SuccessImportance
	buttons := container.NewHBox(v.back, v.copyWiki, resultShare(u, d, id).content, showFileButton(u, id), v.copied)
	warnings := widget.NewLabel(plainWarnings(r.Warnings))
	warnings.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(title, v.state)
	if v.problems != nil {
		top.Add(v.problems)
	}
	top.Add(buttons)
	// The stages and the cards show every row, and scroll together
	// above the wiki block.
	v.table.allRows = true
	tables := container.NewVBox(v.table)
	if ct := r.GPUs.CardsTable(); ct != nil {
		// The cards the run read, as the cmp.wiki protocol reports them.
		v.cards = textTable(ct.Rows, ct.Columns)
		v.cards.allRows = true
		heading := widget.NewLabel(r.GPUs.Heading() + ":")
		heading.Wrapping = fyne.TextWrapWord
		if r.GPUs.Caution != "" {
			heading.Importance = widget.WarningImportance
		}
		tables.Add(heading)
		tables.Add(v.cards)
	}
	// The notes scroll with the tables: under the wiki block they were
	// cut off by the window's bottom when there were many (#35).
	tables.Add(warnings)
	if v.energy = newEnergyPane(u, d, u.postName(id, d)); v.energy != nil {
		tables.Add(v.energy.content)
	}
	if v.hardware = newHardwarePane(u, d, u.postName(id, d)); v.hardware != nil {
		tables.Add(v.hardware.content)
	}
	body := container.NewVSplit(pageScroll(tables), container.NewBorder(widget.NewLabel("Wiki block"), nil, nil, nil, container.NewScroll(v.wiki)))
	body.Offset = 0.5
	v.content = container.NewBorder(top, nil, nil, nil, body)
	return v
}

// onCopy puts the wiki block on the clipboard and says so beside the
// button. (No timer takes the words back: a late UI change from a timer
// is one more thing that can land on a screen that has moved on.)
func (v *StagesView) onCopy(block string) {
	v.u.fyne.Clipboard().SetContent(block)
	v.copied.SetText(copiedText)
}

// SpecDecView shows a speculative-decoding result per level, and the
// acceptance by draft position as a chart.
type SpecDecView struct {
	content   fyne.CanvasObject
	state     *widget.Label
	problems  *widget.Label // the state and the levels that failed; nil when none
	table     *fitTable
	rows      [][]string
	back      *widget.Button
	positions *ChartView
	saves     []*widget.Button // Save PNG… under the chart
	energy    *energyPane      // under the warnings; nil when the run read no power
	hardware  *hardwarePane    // under the energy; nil when its source said none of it
}

// frame is the view's content and its back button (viewOf).
func (v *SpecDecView) frame() (fyne.CanvasObject, *widget.Button) { return v.content, v.back }

func newSpecDecView(u *App, r *results.SpecDecResult, id string, saveErr error, onBack func()) *SpecDecView {
	t := r.Table()
	v := &SpecDecView{rows: t.Rows}
	title := widget.NewLabelWithStyle(fmt.Sprintf("Speculative decoding: %s on %s", results.ModelName(r.Model), r.Local.Where()), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	note := "Representative prompts, each answer free to stop on its own: these numbers are not Kovara records and can never be published."
	// The headline: why levels were not run, how the answers stopped,
	// and whether drafting is worth it (results.SpecDecResult.Headline).
	if h := r.Headline(); h != "" {
		note += " " + h
	}
	if r.Counters == "" {
		note += " The server exposes no speculative-decoding counters, so acceptance is unknown."
	} else {
		note += " Acceptance from " + r.Counters + "."
	}
	v.state = stateLabel([]string{note}, false, "", saveErr)
	d := plans.NewSpecDec(r)
	attention(v.state, d)
	v.problems = problemsLabel(d)
	v.table = textTable(t.Rows, t.Columns)
	v.back = widget.NewButton("New benchmark", onBack)
	warnings := widget.NewLabel(plainWarnings(append(r.LevelNotes(), r.Warnings...)))
	warnings.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(title, v.state)
	if v.problems != nil {
		top.Add(v.problems)
	}
	top.Add(container.NewHBox(v.back, resultShare(u, d, id).content, showFileButton(u, id)))
	v.positions = NewChartView("The server counts no acceptance by draft position.")
	positions := chart.SpecDecPositionSpec(r, PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant()))
	v.positions.SetSpec(positions)
	v.positions.SetRun(u.postName(id, d))
	// Every row, the notes under them, scrolling together: notes fixed
	// under the page were cut off by the window's bottom when there were
	// many (#35).
	v.table.allRows = true
	v.energy, v.hardware = newEnergyPane(u, d, u.postName(id, d)), newHardwarePane(u, d, u.postName(id, d))
	// What goes under the table: the warnings, then what it cost and
	// what the hardware did.
	under := func(more ...fyne.CanvasObject) fyne.CanvasObject {
		objs := append([]fyne.CanvasObject{warnings}, more...)
		if v.energy != nil {
			objs = append(objs, v.energy.content)
		}
		if v.hardware != nil {
			objs = append(objs, v.hardware.content)
		}
		return container.NewVBox(objs...)
	}
	if len(positions.Series) == 0 {
		// No chart to draw (the server counts no acceptance by position):
		// its one sentence under the warnings, not half the page empty
		// beside warnings cut off at 1024×640.
		none := widget.NewLabel(v.positions.Text())
		none.Wrapping = fyne.TextWrapWord
		v.content = container.NewBorder(top, nil, nil, nil, pageScroll(container.NewBorder(nil, under(none), nil, nil, v.table)))
		return v
	}
	body := container.NewVSplit(pageScroll(container.NewBorder(nil, under(), nil, nil, v.table)), savableChart(u, v.positions, positions.Title, &v.saves))
	body.Offset = 0.45
	v.content = container.NewBorder(top, nil, nil, nil, body)
	return v
}

func plainWarnings(ws []string) string {
	if len(ws) == 0 {
		return "No warnings."
	}
	return "Warnings:\n" + bullets(ws)
}

// showFileButton opens the folder holding run id (disabled without one).
func showFileButton(u *App, id string) *widget.Button {
	b := widget.NewButton("Show file", func() {
		if id != "" {
			showFile(u, u.lib.Path(id))
		}
	})
	if id == "" {
		b.Disable()
	}
	return b
}

// showFile opens the folder holding path in the desktop's file manager.
// Where that fails (no xdg-open, no handler for folders), it says so and
// shows the path, selectable, with a button that copies it.
func showFile(u *App, path string) {
	dir, err := url.Parse("file://" + filepath.ToSlash(filepath.Dir(path)))
	if err == nil {
		err = u.fyne.OpenURL(dir)
	}
	if err == nil {
		return
	}
	why := err.Error()
	var missing *exec.Error
	if errors.As(err, &missing) && errors.Is(missing.Err, exec.ErrNotFound) {
		why = "this desktop has no " + missing.Name + " to open folders with"
	}
	msg := widget.NewLabel("The folder could not be opened: " + why + ". The results file is here:")
	msg.Wrapping = fyne.TextWrapWord
	where := widget.NewLabelWithStyle(path, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	where.Selectable = true
	where.Wrapping = fyne.TextWrapBreak
	copyPath := widget.NewButton("Copy path", nil)
	copyPath.OnTapped = func() {
		u.fyne.Clipboard().SetContent(path)
		copyPath.SetText(copiedMarkdown) // it said nothing of having copied
	}
	// A wrapped label takes the width it is given: give it a line's.
	width := canvas.NewRectangle(color.Transparent)
	width.SetMinSize(fyne.NewSize(600, 0))
	content := container.NewStack(width, container.NewVBox(msg, where, container.NewHBox(copyPath)))
	dialog.ShowCustom("Show file", "Close", content, u.win)
}
