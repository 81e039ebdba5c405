package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/clip"
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// CompareScreen shows 2–4 runs side by side: whether they are comparable,
// a metric × run table with the change against the first run, and
// overlaid charts.
type CompareScreen struct {
	u       *App
	content *fyne.Container

	files  []*results.File
	labels []string
	rows   []compare.Row

	verdict *widget.Label
	details *widget.Label
	table   *widget.Table
	charts  []*ChartView
	saves   []*widget.Button
	views   *container.AppTabs // Table | Charts
}

func newCompareScreen(u *App) *CompareScreen {
	c := &CompareScreen{u: u}
	empty := widget.NewLabel("Choose 2 to 4 runs in History and press Compare.")
	c.content = container.NewStack(container.NewCenter(empty))
	return c
}

// compareRuns loads the runs and shows them in the Compare place.
func (u *App) compareRuns(ids []string) {
	list, _ := u.lib.List()
	byID := map[string]storage.Summary{}
	for _, s := range list {
		byID[s.ID] = s
	}
	var files []*results.File
	var labels []string
	for _, id := range ids {
		f, err := u.lib.Load(id)
		if err != nil {
			u.showProblem("A run cannot be compared", err.Error())
			return
		}
		files = append(files, f)
		labels = append(labels, storage.RunName(byID[id].Label, byID[id].Model, f.CreatedAt))
	}
	u.compareScreen.show(files, labels)
	u.tabs.Select(u.compareTab)
}

func (c *CompareScreen) show(files []*results.File, labels []string) {
	c.files, c.labels = files, labels
	c.rows = compare.Table(files, labels)
	v := compare.VerdictOf(files...)
	c.verdict = widget.NewLabelWithStyle(v.Sentence(), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict.Wrapping = fyne.TextWrapWord
	if v.Comparable {
		c.verdict.Importance = widget.SuccessImportance
	} else {
		c.verdict.Importance = widget.WarningImportance
	}
	var lines []string
	for i, l := range labels {
		lines = append(lines, fmt.Sprintf("[%d] %s", i+1, l))
	}
	for _, d := range v.Differences {
		lines = append(lines, fmt.Sprintf("• %s: %s", d.Label, strings.Join(d.Values, " | ")))
	}
	for _, n := range v.Notes {
		lines = append(lines, "• "+n)
	}
	c.details = widget.NewLabel(strings.Join(lines, "\n"))
	c.details.Wrapping = fyne.TextWrapWord

	c.table = c.newTable(labels, []string{"Level", "Metric"}, []float32{60, 190})

	p := PaletteFor(c.u.fyne.Settings().Theme(), c.u.fyne.Settings().ThemeVariant())
	specs := compareSpecs(files, labels, p)
	c.charts, c.saves = nil, nil
	var boxes []fyne.CanvasObject
	for i, spec := range specs {
		view := NewChartView("No level is shared by two runs.")
		view.SetSpec(spec)
		save := widget.NewButton("Save PNG…", func() { c.u.saveChart(view, specs[i].Title) })
		c.charts = append(c.charts, view)
		c.saves = append(c.saves, save)
		boxes = append(boxes, container.NewBorder(nil, container.NewHBox(save), nil, nil, view))
	}
	charts := container.NewGridWithColumns(2, boxes...)
	top := container.NewVBox(c.verdict, c.details)
	c.views = container.NewAppTabs(
		container.NewTabItem("Table", c.table),
		container.NewTabItem("Charts", charts),
	)
	c.content.Objects = []fyne.CanvasObject{container.NewBorder(top, nil, nil, nil, c.views)}
	c.content.Refresh()
}

// newTable is the metric × run table over c.rows: the leading columns
// (level and metric, or metric alone) and one column per run, each cell
// coloured by whether the run did better or worse than the first.
func (c *CompareScreen) newTable(labels, lead []string, leadWidths []float32) *widget.Table {
	skip := 2 - len(lead) // compareCell counts the level column even when it is not shown
	t := widget.NewTableWithHeaders(
		func() (int, int) { return len(c.rows), len(lead) + len(labels) },
		func() fyne.CanvasObject { return widget.NewLabel("many users, slowest user (tok/s)") },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			text, imp := compareCell(c.rows[id.Row], id.Col+skip)
			l := o.(*widget.Label)
			l.Importance = imp
			l.SetText(text)
		},
	)
	t.ShowHeaderColumn = false
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("Metric", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Row >= 0 || id.Col < 0 {
			return
		}
		text := ""
		if id.Col < len(lead) {
			text = lead[id.Col]
		} else {
			i := id.Col - len(lead)
			text = fmt.Sprintf("[%d] %s", i+1, clip.Text(labels[i], 26))
		}
		o.(*widget.Label).SetText(text)
	}
	for i, w := range leadWidths {
		t.SetColumnWidth(i, w)
	}
	for i := range labels {
		t.SetColumnWidth(len(lead)+i, 200)
	}
	return t
}

// compareCell is one cell of the compare table and its colour: green
// where the run did better than the first for that metric, red where worse.
func compareCell(row compare.Row, col int) (string, widget.Importance) {
	switch col {
	case 0:
		return fmt.Sprint(row.Concurrency), widget.MediumImportance
	case 1:
		label := row.Metric.Label
		if u := row.Metric.Unit; u != "" && !strings.Contains(label, u) {
			label += " (" + u + ")"
		}
		return label, widget.MediumImportance
	}
	cell := row.Cells[col-2]
	if !cell.Present {
		return "—", widget.LowImportance
	}
	text := compare.FormatValue(row.Metric, cell.Value)
	if col > 2 {
		if d := compare.FormatDelta(cell); d != "" {
			text += "  " + d
		}
	}
	switch {
	case col > 2 && cell.Better > 0:
		return text, widget.SuccessImportance
	case col > 2 && cell.Better < 0:
		return text, widget.DangerImportance
	}
	return text, widget.MediumImportance
}

// compareSpecs are the overlaid charts: one series per run over the union
// of their levels, a gap (NaN) where a run lacks a level — never a zero.
func compareSpecs(files []*results.File, labels []string, p Palette) []ChartSpec {
	var levels []int
	for _, f := range files {
		for _, r := range f.Runs {
			if !slices.Contains(levels, r.Concurrency) {
				levels = append(levels, r.Concurrency)
			}
		}
	}
	slices.Sort(levels)
	ticks := make([]float64, len(levels))
	for i, l := range levels {
		ticks[i] = float64(l)
	}
	byLevel := func(f *results.File, get func(results.Run) (float64, bool)) []float64 {
		ys := make([]float64, len(levels))
		for i, l := range levels {
			ys[i] = math.NaN()
			for _, r := range f.Runs {
				if r.Concurrency == l {
					if v, ok := get(r); ok {
						ys[i] = v
					}
				}
			}
		}
		return ys
	}
	metric := func(id string) func(results.Run) (float64, bool) {
		m, _ := compare.MetricByID(id)
		return m.Get
	}
	spec := func(title, ylabel string, ids ...string) ChartSpec {
		s := ChartSpec{Title: title, XLabel: "concurrent streams", YLabel: ylabel, YFromZero: true, XLog: true, XTicks: ticks, Palette: p}
		for i, f := range files {
			for j, id := range ids {
				name := fmt.Sprintf("[%d]", i+1)
				if len(ids) > 1 {
					name += " " + strings.TrimPrefix(strings.TrimPrefix(id, "ttft_"), "itl_")
				}
				kind := Line
				if j > 0 {
					kind = Scatter // a second statistic of the same run: dots over its line
				}
				s.Series = append(s.Series, Series{Name: name, X: ticks, Y: byLevel(f, metric(id)), Kind: kind, Color: i})
			}
		}
		return s
	}
	trade := ChartSpec{Title: "Per-user against total throughput", XLabel: "total tok/s", YLabel: "per-user tok/s", YFromZero: true, Palette: p}
	for i, f := range files {
		var x, y []float64
		for _, pt := range compare.TradeOff(f) {
			x = append(x, pt.Total)
			y = append(y, pt.PerUser)
		}
		trade.Series = append(trade.Series, Series{Name: fmt.Sprintf("[%d]", i+1), X: x, Y: y, Kind: Line, Color: i})
	}
	_ = labels
	return []ChartSpec{
		spec("Output throughput", "tok/s", "output_throughput"),
		spec("Time to first token (p50 line, p95 dots)", "ms", "ttft_p50", "ttft_p95"),
		spec("Inter-token latency p50", "ms", "itl_p50"),
		trade,
	}
}

// saveChart writes a chart as PNG where the user chooses.
func (u *App) saveChart(view *ChartView, title string) {
	img := view.Image()
	if img == nil {
		u.showProblem("Nothing to save", "This chart has nothing drawn yet.")
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		defer w.Close()
		if err := EncodePNG(img, w); err != nil {
			u.showProblem("The chart was not saved", err.Error())
		}
	}, u.win)
	d.SetFileName(chartFileName(title))
	d.Show()
}

// chartFileName is a chart's title as a file name: lower case, every run
// of other characters than letters and digits one dash.
func chartFileName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-") + ".png"
}

// compareDocs loads runs of one of the other plans, with their names.
func (u *App) compareDocs(ids []string) ([]storage.Document, []string, bool) {
	list, _ := u.lib.List()
	labels := map[string]string{}
	for _, s := range list {
		labels[s.ID] = s.Label
	}
	var docs []storage.Document
	var names []string
	for _, id := range ids {
		d, err := u.lib.LoadDocument(id)
		if err != nil {
			u.showProblem("A run cannot be compared", err.Error())
			return nil, nil, false
		}
		docs = append(docs, d)
		names = append(names, storage.RunName(labels[id], d.Model(), d.CreatedAt()))
	}
	return docs, names, true
}

// compareOthers shows three-stage or speculative-decoding results side by
// side.
func (u *App) compareOthers(ids []string, plan string) {
	docs, names, ok := u.compareDocs(ids)
	if !ok {
		return
	}
	u.compareScreen.showDocs(storage.CompareOthers(plan, docs, names), names)
	u.tabs.Select(u.compareTab)
}

// showDocs shows a comparison of one of the other plans' results: the
// verdict and the metric × run table (per level when the rows are).
func (c *CompareScreen) showDocs(cmp storage.Comparison, labels []string) {
	c.files, c.labels = nil, labels
	c.rows = cmp.Rows
	c.verdict = widget.NewLabelWithStyle(cmp.Sentence(), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict.Wrapping = fyne.TextWrapWord
	var lines []string
	for i, l := range labels {
		lines = append(lines, fmt.Sprintf("[%d] %s", i+1, l))
	}
	c.details = widget.NewLabel(strings.Join(lines, "\n"))
	if cmp.PerLevel {
		c.table = c.newTable(labels, []string{"Level", "Metric"}, []float32{60, 240})
	} else {
		c.table = c.newTable(labels, []string{"Metric"}, []float32{300})
	}
	c.charts, c.saves, c.views = nil, nil, nil
	c.content.Objects = []fyne.CanvasObject{container.NewBorder(container.NewVBox(c.verdict, c.details), nil, nil, nil, c.table)}
	c.content.Refresh()
}
