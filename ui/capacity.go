package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
)

// CapacityView shows a capacity result: the answer in words, per-user
// speed and TTFT p95 against concurrency with the service level's limits
// and the answer drawn in, and every probed level.
type CapacityView struct {
	content  fyne.CanvasObject
	headline *widget.Label
	problems *widget.Label // results.Warnings' problems, above the charts; nil when none
	rows     [][]string
	speed    *ChartView
	ttft     *ChartView
	back     *widget.Button
	saveAll  []*widget.Button // Save PNG… under each chart
}

var capacityColumns = []string{"Concurrency", "Step", "Requests", "Failed", "Per-user tok/s p50", "p5", "TTFT p95 ms", "Total tok/s", "Service level"}

func capacityRows(r *results.CapacityResult) [][]string {
	var rows [][]string
	for _, p := range r.Probes {
		rows = append(rows, []string{strconv.Itoa(p.Concurrency), p.Step, strconv.Itoa(p.Requests), strconv.Itoa(p.Failed),
			optNum(p.UserTPSP50, 1), optNum(p.UserTPSP5, 1), optNum(p.TTFTP95Ms, 0), strconv.FormatFloat(p.OutputTPS, 'f', 1, 64), p.Verdict()})
	}
	return rows
}

func newCapacityView(u *App, r *results.CapacityResult, id string, saveErr error, onBack func()) *CapacityView {
	v := &CapacityView{rows: capacityRows(r)}
	title := widget.NewLabelWithStyle(fmt.Sprintf("Capacity: %s on %s", r.Model, r.Local.Where()), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.headline = widget.NewLabelWithStyle(r.Headline(), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.headline.Wrapping = fyne.TextWrapWord
	if r.Answer.Capacity == 0 || r.Answer.Uncertain || !r.Complete {
		v.headline.Importance = widget.WarningImportance
	}
	var notes []string
	notes = append(notes, "Service level: "+r.Settings.SLO()+fmt.Sprintf("; %d-token prompts, %d-token answers.", r.Settings.InputTokens, r.Settings.OutputTokens))
	if k := r.KneeLine(); k != "" {
		notes = append(notes, capitalize(k)+".")
	}
	if r.Local.Simulated {
		notes = append(notes, "Simulated: made against the built-in simulator.")
	}
	notes = append(notes, "Kept on this machine; capacity results are never published.")
	if saveErr != nil {
		notes = append(notes, "It could not be saved in the history: "+saveErr.Error())
	}
	state := widget.NewLabel(strings.Join(notes, " "))
	state.Wrapping = fyne.TextWrapWord

	palette := PaletteFor(u.fyne.Settings().Theme(), u.fyne.Settings().ThemeVariant())
	v.speed = NewChartView("Two probed levels are needed for a chart.")
	v.speed.SetSpec(capacitySpeedSpec(r, palette))
	v.ttft = NewChartView("Two probed levels are needed for a chart.")
	v.ttft.SetSpec(capacityTTFTSpec(r, palette))
	chartWithSave := func(view *ChartView, title string) fyne.CanvasObject {
		b := widget.NewButton("Save PNG…", func() { u.saveChart(view, title) })
		v.saveAll = append(v.saveAll, b)
		return container.NewBorder(nil, container.NewHBox(b), nil, nil, view)
	}
	charts := container.NewGridWithColumns(2,
		chartWithSave(v.speed, capacitySpeedSpec(r, palette).Title),
		chartWithSave(v.ttft, capacityTTFTSpec(r, palette).Title))

	table := textTable(v.rows, capacityColumns, "missed: TTFT p95", "Concurrency")
	for i, w := range []float32{110, 80, 90, 70, 150, 70, 120, 110, 250} {
		table.SetColumnWidth(i, w)
	}
	v.back = widget.NewButton("New benchmark", onBack)
	problems, notes := results.Split(r.Warnings())
	warnings := widget.NewLabel(notesText(notes, len(problems) > 0))
	warnings.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(title, v.headline)
	if len(problems) > 0 {
		v.problems = widget.NewLabel(bullets(problems))
		v.problems.Importance = widget.WarningImportance
		v.problems.Wrapping = fyne.TextWrapWord
		top.Add(v.problems)
	}
	top.Add(state)
	top.Add(container.NewHBox(v.back, showFileButton(u, id)))
	body := container.NewVSplit(charts, container.NewBorder(nil, warnings, nil, nil, table))
	body.Offset = 0.55
	v.content = container.NewBorder(top, nil, nil, nil, body)
	return v
}

// capacityLevels are the probed levels in order, each with its first
// probe's numbers (the table lists the repeats).
func capacityLevels(r *results.CapacityResult) []results.CapacityProbe {
	var out []results.CapacityProbe
	for _, p := range r.Probes {
		if !slices.ContainsFunc(out, func(q results.CapacityProbe) bool { return q.Concurrency == p.Concurrency }) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b results.CapacityProbe) int { return a.Concurrency - b.Concurrency })
	return out
}

// capacityFrame is what both charts share: the probed levels on a log2
// x axis, a horizontal limit line across them and a vertical line at the
// answer, from 0 to top.
func capacityFrame(r *results.CapacityResult, title, ylabel string, p Palette, series []Series, limitName string, limit, top float64) ChartSpec {
	levels := capacityLevels(r)
	spec := ChartSpec{Title: title, XLabel: "concurrent users", YLabel: ylabel, XLog: true, YFromZero: true, Palette: p}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range levels {
		c := float64(l.Concurrency)
		spec.XTicks = append(spec.XTicks, c)
		lo, hi = math.Min(lo, c), math.Max(hi, c)
	}
	spec.Series = append(spec.Series, series...)
	if len(levels) > 0 {
		if lo == hi {
			hi = lo * 2
		}
		spec.Series = append(spec.Series, Series{Name: limitName, X: []float64{lo, hi}, Y: []float64{limit, limit}, Kind: Line, Color: 3})
	}
	if c := r.Answer.Capacity; c > 0 {
		spec.Series = append(spec.Series, Series{Name: fmt.Sprintf("capacity: %d", c), X: []float64{float64(c), float64(c)}, Y: []float64{0, top}, Kind: Line, Color: 2})
	}
	return spec
}

// capacitySpeedSpec is per-user tok/s (p50 and p5) against concurrency,
// with the floor.
func capacitySpeedSpec(r *results.CapacityResult, p Palette) ChartSpec {
	var x, p50, p5 []float64
	top := r.Settings.UserTPS
	for _, l := range capacityLevels(r) {
		x = append(x, float64(l.Concurrency))
		p50 = append(p50, valueOr(l.UserTPSP50))
		p5 = append(p5, valueOr(l.UserTPSP5))
		if l.UserTPSP50 != nil {
			top = math.Max(top, *l.UserTPSP50)
		}
	}
	series := []Series{
		{Name: "per user, p50", X: x, Y: p50, Kind: Line, Color: 0},
		{Name: "per user, slowest 5 %", X: x, Y: p5, Kind: Line, Color: 1},
	}
	return capacityFrame(r, "Per-user speed by concurrency", "tok/s", p, series,
		"floor "+strconv.FormatFloat(r.Settings.UserTPS, 'f', -1, 64)+" tok/s", r.Settings.UserTPS, top)
}

// capacityTTFTSpec is TTFT p95 against concurrency, with the ceiling.
func capacityTTFTSpec(r *results.CapacityResult, p Palette) ChartSpec {
	var x, y []float64
	top := r.Settings.TTFTP95Ms
	for _, l := range capacityLevels(r) {
		x = append(x, float64(l.Concurrency))
		y = append(y, valueOr(l.TTFTP95Ms))
		if l.TTFTP95Ms != nil {
			top = math.Max(top, *l.TTFTP95Ms)
		}
	}
	series := []Series{{Name: "TTFT p95", X: x, Y: y, Kind: Line, Color: 0}}
	return capacityFrame(r, "Time to first token p95 by concurrency", "ms", p, series,
		"ceiling "+strconv.FormatFloat(r.Settings.TTFTP95Ms, 'f', -1, 64)+" ms", r.Settings.TTFTP95Ms, top)
}
