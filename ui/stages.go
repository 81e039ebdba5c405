package ui

import (
	"errors"
	"fmt"
	"image/color"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
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
	copied   *widget.Label // says the block went to the clipboard
	back     *widget.Button
	state    *widget.Label
}

const (
	copyWikiText = "Copy wiki block"
	copiedText   = "Copied to the clipboard ✓"
)

// stagesRows is the stages table: one row per measured request or stage.
func stagesRows(r *results.StagesResult) [][]string {
	var rows [][]string
	for _, d := range r.Decode {
		note := ""
		if d.Short {
			note = "short answer (< 90 % of max)"
		}
		if d.Error != "" {
			note = d.Error
		}
		rows = append(rows, []string{"decode, " + d.Prompt + " prompt", strconv.Itoa(d.CompletionTokens) + " tokens",
			optNum(d.TTFTMs, 0), optNum(d.DecodeTPS, 1), note})
	}
	if p := r.Prefill; p != nil {
		tokens := "—"
		if p.PromptTokens != nil {
			tokens = strconv.Itoa(*p.PromptTokens) + " prompt tokens"
		}
		rows = append(rows, []string{"cold prefill", tokens, optNum(p.TTFTMs, 0), optNum(p.PrefillTPS, 0), p.Error})
	}
	if u := r.Users; u != nil {
		note := fmt.Sprintf("per user: mean %s, slowest %s tok/s", optNum(u.PerUserMeanTPS, 1), optNum(u.PerUserMinTPS, 1))
		if u.Queued {
			note = "QUEUED: " + u.QueueNote
		}
		rows = append(rows, []string{fmt.Sprintf("%d users at once", u.Users), strconv.Itoa(u.CompletionTokens) + " tokens",
			optNum(u.TTFTMsMax, 0) + " (max)", optNum(u.AggregateTPS, 1), note})
	}
	return rows
}

var stagesColumns = []string{"Stage", "Tokens", "TTFT ms", "tok/s", "Note"}

func newStagesView(u *App, r *results.StagesResult, id string, saveErr error, onBack func()) *StagesView {
	v := &StagesView{u: u, rows: stagesRows(r)}
	title := widget.NewLabelWithStyle(fmt.Sprintf("Three stages: %s on %s", r.Model, r.Local.Where()), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	var state []string
	switch {
	case r.Complete && len(r.Warnings) > 0:
		// Never "Complete." above a list of what went wrong.
		state = append(state, fmt.Sprintf("Finished, with %d %s below: read %s before trusting the figures.",
			len(r.Warnings), results.Plural(len(r.Warnings), "warning", "warnings"), results.Plural(len(r.Warnings), "it", "them")))
	case r.Complete:
		state = append(state, "Complete.")
	default:
		state = append(state, "Stopped before every stage finished.")
	}
	if r.Quick {
		state = append(state, "Quick mode: a smoke test, not the plan's numbers.")
	}
	if r.Local.Simulated {
		state = append(state, "Simulated: made against the built-in simulator.")
	}
	state = append(state, "Tokens counted by: "+r.TokenSource+".")
	if saveErr != nil {
		state = append(state, "It could not be saved in the history: "+saveErr.Error())
	}
	v.state = widget.NewLabel(strings.Join(state, " "))
	v.state.Wrapping = fyne.TextWrapWord
	v.table = textTable(v.rows, stagesColumns)
	block := r.WikiBlock()
	v.wiki = widget.NewLabelWithStyle(block, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.wiki.Selectable = true
	v.copyWiki = widget.NewButton(copyWikiText, func() { v.onCopy(block) })
	v.back = widget.NewButton("New benchmark", onBack)
	v.copied = widget.NewLabel("")
	v.copied.Importance = widget.SuccessImportance
	buttons := container.NewHBox(v.back, v.copyWiki, showFileButton(u, id), v.copied)
	warnings := widget.NewLabel(plainWarnings(r.Warnings))
	warnings.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(title, v.state, buttons)
	body := container.NewVSplit(v.table, container.NewBorder(widget.NewLabel("Wiki block"), warnings, nil, nil, container.NewScroll(v.wiki)))
	body.Offset = 0.35
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
	table     *fitTable
	rows      [][]string
	back      *widget.Button
	positions *ChartView
}

// specDecColumns are the table's headings, on two lines where a heading is
// wider than its numbers.
var specDecColumns = []string{"Concurrency", "OK", "Output\ntok/s", "Decode\ntok/s", "Answer tokens\nmin / p50 / max", "Acceptance", "Mean\nlength",
	"Per answer\np50 [min–max]", "Per answer\nmean length"}

func specDecRows(r *results.SpecDecResult) [][]string {
	var rows [][]string
	for _, l := range r.Levels {
		spread := "—"
		if t := l.OutputTokens; t != nil {
			spread = fmt.Sprintf("%d / %s / %d", t.Min, strconv.FormatFloat(t.P50, 'f', -1, 64), t.Max)
		}
		acc, length := "—", "—"
		if l.Spec != nil {
			if l.Spec.AcceptanceRate != nil {
				acc = percent(*l.Spec.AcceptanceRate)
			}
			length = optNum(l.Spec.MeanAcceptanceLength, 2)
		}
		perAcc, perLen := "—", "—"
		if pr := l.PerRequest; pr != nil {
			if sp := pr.RateSpread; sp != nil {
				perAcc = fmt.Sprintf("%s [%s–%s]", percent(sp.P50), percent(sp.Min), percent(sp.Max))
			}
			perLen = optNum(pr.MeanAcceptanceLength, 2)
		}
		rows = append(rows, []string{strconv.Itoa(l.Concurrency), fmt.Sprintf("%d / %d", l.OK, l.Requests),
			optNum(l.OutputTPS, 1), optNum(l.MeanDecodeTPS, 1), spread, acc, length, perAcc, perLen})
	}
	return rows
}

func newSpecDecView(u *App, r *results.SpecDecResult, id string, saveErr error, onBack func()) *SpecDecView {
	v := &SpecDecView{rows: specDecRows(r)}
	title := widget.NewLabelWithStyle(fmt.Sprintf("Speculative decoding: %s on %s", r.Model, r.Local.Where()), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	note := "Representative prompts, each answer free to stop on its own: these numbers are not Kovara records and can never be published."
	if stops := r.Stops(); stops != "" {
		note += " " + stops
	}
	if r.Counters == "" {
		note += " The server exposes no speculative-decoding counters, so acceptance is unknown."
	} else {
		note += " Acceptance from " + r.Counters + "."
	}
	if saveErr != nil {
		note += " It could not be saved in the history: " + saveErr.Error()
	}
	v.state = widget.NewLabel(note)
	v.state.Wrapping = fyne.TextWrapWord
	v.table = textTable(v.rows, specDecColumns)
	v.back = widget.NewButton("New benchmark", onBack)
	warnings := widget.NewLabel(plainWarnings(append(r.LevelNotes(), r.Warnings...)))
	warnings.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(title, v.state, container.NewHBox(v.back, showFileButton(u, id)))
	v.positions = NewChartView("The server counts no acceptance by draft position.")
	v.positions.SetSpec(positionSpec(r, PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())))
	body := container.NewVSplit(v.table, v.positions)
	body.Offset = 0.45
	v.content = container.NewBorder(top, warnings, nil, nil, body)
	return v
}

func percent(share float64) string { return strconv.FormatFloat(share*100, 'f', 1, 64) + " %" }

// positionSpec charts acceptance by draft position, one line per level:
// the share of drafting steps whose draft was accepted at each position
// (the figure --spec-draft-n-max and num_speculative_tokens are tuned by).
func positionSpec(r *results.SpecDecResult, p chart.Palette) chart.Spec {
	spec := chart.Spec{Title: "Accepted by draft position", XLabel: "draft position", YLabel: "% of steps", YFromZero: true, Palette: p}
	for i, l := range r.Levels {
		if l.Spec == nil || len(l.Spec.PerPosition) == 0 {
			continue
		}
		var x, y []float64
		for pos, v := range l.Spec.PerPosition {
			x = append(x, float64(pos+1))
			y = append(y, 100*v)
			if len(spec.XTicks) < len(l.Spec.PerPosition) {
				spec.XTicks = append(spec.XTicks, float64(pos+1))
			}
		}
		spec.Series = append(spec.Series, chart.Series{Name: fmt.Sprintf("concurrency %d", l.Concurrency), X: x, Y: y, Kind: chart.Line, Color: i})
	}
	return spec
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
	copyPath := widget.NewButton("Copy path", func() { u.fyne.Clipboard().SetContent(path) })
	// A wrapped label takes the width it is given: give it a line's.
	width := canvas.NewRectangle(color.Transparent)
	width.SetMinSize(fyne.NewSize(600, 0))
	content := container.NewStack(width, container.NewVBox(msg, where, container.NewHBox(copyPath)))
	dialog.ShowCustom("Show file", "Close", content, u.win)
}
