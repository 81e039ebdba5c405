package ui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/report"
	"github.com/kovara/desktop/storage"
)

// CompareScreen shows 2–4 runs side by side: whether they are comparable,
// a metric × run table with the change against the baseline, and overlaid
// charts. The baseline is the oldest run unless the person picks another;
// the others follow oldest to newest (compare.Order).
type CompareScreen struct {
	u       *App
	content *fyne.Container
	empty   *widget.Label // what the place says when nothing is compared

	// The runs chosen in History, in the order it gave them, and the
	// baseline: an index into them, or compare.OldestBaseline.
	ids      []string
	docs     []plans.Doc
	names    []string
	kind     *plans.Kind
	baseline int

	// What is shown, baseline first: the Kovara runs' files (nil for
	// the other plans), their names and the table's rows.
	files  []*results.File
	labels []string
	rows   []compare.Row
	share  *shareBar // Copy as Markdown, Save CSV…, Save report… of what is compared
	// postNames name the runs in full where they are seen without the
	// table (a saved chart's legend): label, model, engine.
	postNames []string

	baselineSelect *widget.Select
	options        []string // baselineSelect's options, oldest run first
	optionRun      []int    // the run (index into ids) of each option

	verdict  *widget.Label
	details  *widget.Label
	table    *widget.Table
	charts   []*ChartView
	saves    []*widget.Button
	views    *container.AppTabs // Table | Charts | Timeline; nil for the other plans
	timeline *TimelinePane
}

func newCompareScreen(u *App) *CompareScreen {
	c := &CompareScreen{u: u, empty: widget.NewLabel("Choose 2 to 4 runs in History and press Compare.")}
	c.content = container.NewStack(container.NewCenter(c.empty))
	return c
}

// compareRuns shows Kovara runs side by side in the Compare place.
func (u *App) compareRuns(ids []string) {
	u.compareKind(ids, plans.KovaraMethod)
}

// compareKind shows runs of one plan (as plans.ComparableKind found) side
// by side in the Compare place.
func (u *App) compareKind(ids []string, kind *plans.Kind) {
	docs, names, ok := u.compareDocs(ids)
	if !ok {
		return
	}
	u.compareScreen.set(ids, docs, names, kind)
	u.tabs.Select(u.compareTab)
}

// compareDocs loads runs of any kind, with their names.
func (u *App) compareDocs(ids []string) ([]plans.Doc, []string, bool) {
	var docs []plans.Doc
	for _, id := range ids {
		d, err := u.lib.LoadDocument(id)
		if err != nil {
			u.showProblem("A run cannot be compared", err.Error())
			return nil, nil, false
		}
		docs = append(docs, d)
	}
	return docs, u.runNames(ids, docs), true
}

// runNames names the runs compared, each unlike the others
// (storage.RunNames: the partial one, the seconds, #n).
func (u *App) runNames(ids []string, docs []plans.Doc) []string {
	runs := make([]storage.Run, len(docs))
	for i, d := range docs {
		runs[i] = storage.Run{Label: u.lib.Annotation(ids[i]).Label, Model: d.Model(), CreatedAt: d.CreatedAt(), Partial: !d.Complete()}
	}
	return storage.RunNames(runs)
}

// set compares these runs, the oldest as the baseline.
func (c *CompareScreen) set(ids []string, docs []plans.Doc, names []string, kind *plans.Kind) {
	c.ids, c.docs, c.names, c.kind = ids, docs, names, kind
	c.baseline = compare.OldestBaseline
	c.newBaselineSelect()
	c.render()
}

// newBaselineSelect offers every run as the baseline, oldest first, the
// current baseline selected.
func (c *CompareScreen) newBaselineSelect() {
	c.optionRun = storage.CompareOrder(c.docs, compare.OldestBaseline)
	c.options = nil
	seen := map[string]int{}
	for _, i := range c.optionRun {
		name := clip.Text(c.names[i], 60)
		// Two runs may share a name (a label used twice): each option
		// must still say which run it is.
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s (%d)", name, seen[name])
		}
		c.options = append(c.options, name)
	}
	c.baselineSelect = widget.NewSelect(c.options, nil)
	c.baselineSelect.PlaceHolder = "Choose the run the others are measured against"
	c.baselineSelect.SetSelected(c.options[slices.Index(c.optionRun, c.baselineRun())])
	c.baselineSelect.OnChanged = c.onBaseline
}

// baselineRun is the index into ids of the run shown as the baseline.
func (c *CompareScreen) baselineRun() int {
	return storage.CompareOrder(c.docs, c.baseline)[0]
}

// onBaseline measures the others against the run of this option.
func (c *CompareScreen) onBaseline(option string) {
	i := slices.Index(c.options, option)
	if i < 0 || c.optionRun[i] == c.baselineRun() {
		return
	}
	c.baseline = c.optionRun[i]
	c.render()
}

// forget takes runs that are no longer in the library (deleted in
// History) out of the comparison; with fewer than two left there is
// nothing to compare and the place says why.
func (c *CompareScreen) forget(ids []string) {
	var keep []int
	for i, id := range c.ids {
		if !slices.Contains(ids, id) {
			keep = append(keep, i)
		}
	}
	if len(keep) == len(c.ids) {
		return
	}
	baseID := ""
	if c.baseline >= 0 {
		baseID = c.ids[c.baseline]
	}
	gone := len(c.ids) - len(keep)
	c.ids, c.docs = compare.Arrange(c.ids, keep), compare.Arrange(c.docs, keep)
	c.names = c.u.runNames(c.ids, c.docs) // what told the runs apart may be gone with the deleted
	if len(c.ids) < 2 {
		msg := "A compared run was deleted; choose runs in History to compare."
		if gone > 1 {
			msg = "The compared runs were deleted; choose runs in History to compare."
		}
		c.clear(msg)
		return
	}
	c.baseline = slices.Index(c.ids, baseID) // OldestBaseline (-1) when the baseline was deleted
	c.newBaselineSelect()
	c.render()
}

// clear shows nothing compared, and says why.
func (c *CompareScreen) clear(why string) {
	*c = CompareScreen{u: c.u, content: c.content, empty: c.empty}
	c.empty.SetText(why)
	c.content.Objects = []fyne.CanvasObject{container.NewCenter(c.empty)}
	c.content.Refresh()
}

// render shows the runs in the order compare.Order gives for the
// baseline: the verdict, the details and the table (and charts).
func (c *CompareScreen) render() {
	order := storage.CompareOrder(c.docs, c.baseline)
	docs, labels := compare.Arrange(c.docs, order), compare.Arrange(c.names, order)
	c.postNames = nil
	var shareLabels []string
	for i, id := range compare.Arrange(c.ids, order) {
		c.postNames = append(c.postNames, c.u.postName(id, docs[i]))
		shareLabels = append(shareLabels, c.u.lib.Annotation(id).Label)
	}
	c.share = newShareBar(c.u, fmt.Sprintf("%d %s compared", len(docs), c.kind.Results), docs, shareLabels)
	if !c.kind.HasComparison() {
		files := make([]*results.File, len(docs))
		for i, d := range docs {
			files[i] = d.(plans.Kovara).File
		}
		c.show(files, labels)
		return
	}
	c.showDocs(c.kind.Compare(docs, labels), labels)
}

// show shows Kovara runs, baseline first: the verdict with which
// differences are beyond noise (compare.Compared), the details with the
// legend of the table's intervals, the table and the charts.
func (c *CompareScreen) show(files []*results.File, labels []string) {
	c.files, c.labels = files, labels
	v, rows := compare.Compared(files, labels)
	c.rows = rows
	imp := widget.WarningImportance
	if v.Clean() {
		imp = widget.SuccessImportance
	}
	// The sentence, each run's changes (or whether a run made again like
	// the baseline reproduced it) and the table's colours are one
	// decision of compare.Compared: nothing here judges a change.
	c.setVerdict(v.Lines(), imp)
	lines := runLines(labels)
	if l := compare.NoiseLegend(rows); l != "" {
		lines = append(lines, l)
	}
	for _, d := range v.Differences {
		lines = append(lines, fmt.Sprintf("• %s: %s", d.Label, strings.Join(d.Values, " | ")))
	}
	for _, n := range v.Notes {
		lines = append(lines, "• "+n)
	}
	c.setDetails(lines)

	c.table = c.newTable(labels, []string{"Level", "Metric"}, []float32{60, 190})

	p := PaletteFor(c.u.fyne.Settings().Theme(), c.u.fyne.Settings().ThemeVariant())
	// On screen the legend says [1], [2] as the table's columns do; the
	// saved PNG, seen without the table, names each run in full.
	short, full := make([]string, len(files)), make([]string, len(files))
	for i := range files {
		short[i] = fmt.Sprintf("[%d]", i+1)
		full[i] = fmt.Sprintf("[%d] %s", i+1, c.postNames[i])
	}
	specs, posted := report.CompareCharts(files, short, p), report.CompareCharts(files, full, p)
	c.charts, c.saves = nil, nil
	var boxes []fyne.CanvasObject
	for i, spec := range specs {
		view := NewChartView("No level is shared by two runs.")
		view.SetSpecs(spec, posted[i])
		save := widget.NewButton("Save PNG…", func() { c.u.saveChart(view, specs[i].Title) })
		c.charts = append(c.charts, view)
		c.saves = append(c.saves, save)
		boxes = append(boxes, container.NewBorder(nil, container.NewHBox(save), nil, nil, view))
	}
	// The charts scroll rather than holding the window taller than a
	// laptop's screen: the place must fit a 1024×640 window.
	charts := container.NewVScroll(container.NewGridWithColumns(2, boxes...))
	c.timeline = newTimelinePane(c.u, files...)
	for i, view := range c.timeline.views {
		view.SetRun(full[i])
	}
	c.views = container.NewAppTabs(
		container.NewTabItem("Table", c.table),
		container.NewTabItem("Charts", charts),
		container.NewTabItem("Timeline", container.NewVScroll(c.timeline.content)),
	)
	c.layout(c.views)
}

// showDocs shows a comparison of one of the other plans' results, baseline
// first: the verdict and the metric × run table (per level when the rows
// are). Their verdict weighs conditions only, so it is never shown as good
// news in the success colour.
func (c *CompareScreen) showDocs(cmp plans.Comparison, labels []string) {
	c.files, c.labels = nil, labels
	c.rows = cmp.Rows
	imp := widget.MediumImportance
	if !cmp.Like {
		imp = widget.WarningImportance
	}
	c.setVerdict([]string{cmp.Sentence()}, imp)
	c.setDetails(append(runLines(labels), compare.DocLegends(cmp.Rows)...))
	if cmp.PerLevel {
		c.table = c.newTable(labels, []string{"Level", "Metric"}, []float32{60, 240})
	} else {
		c.table = c.newTable(labels, []string{"Metric"}, []float32{300})
	}
	c.charts, c.saves, c.views = nil, nil, nil
	c.layout(c.table)
}

// setVerdict shows the verdict's lines, the first a sentence, the others
// each a change beyond noise or a difference to weigh.
func (c *CompareScreen) setVerdict(lines []string, imp widget.Importance) {
	c.verdict = widget.NewLabelWithStyle(strings.Join(lines, "\n• "), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	c.verdict.Wrapping = fyne.TextWrapWord
	c.verdict.Importance = imp
}

func (c *CompareScreen) setDetails(lines []string) {
	c.details = widget.NewLabel(strings.Join(lines, "\n"))
	c.details.Wrapping = fyne.TextWrapWord
}

// runLines name the runs as the table's columns do, the baseline marked.
func runLines(labels []string) []string {
	var lines []string
	for i, l := range labels {
		line := fmt.Sprintf("[%d] %s", i+1, l)
		if i == 0 {
			line += " (baseline: the changes are against it)"
		}
		lines = append(lines, line)
	}
	return lines
}

// layout puts the baseline choice above the verdict and details, and
// those above the table (or the Table | Charts tabs); the person can move
// the divider between them. The verdict and details scroll, so however
// many notes there are the place fits a 1024×640 window.
func (c *CompareScreen) layout(body fyne.CanvasObject) {
	// The share buttons share the baseline's row: they take no height.
	choice := container.NewBorder(nil, nil, widget.NewLabel("Baseline"), c.share.content, c.baselineSelect)
	info := container.NewVScroll(container.NewVBox(c.verdict, c.details))
	info.SetMinSize(fyne.NewSize(0, compareInfoMinHeight))
	split := container.NewVSplit(info, body)
	split.Offset = 0.3
	c.content.Objects = []fyne.CanvasObject{container.NewBorder(choice, nil, nil, nil, split)}
	c.content.Refresh()
}

// compareInfoMinHeight keeps the verdict's first lines in view however
// far the divider is moved.
const compareInfoMinHeight = 80

// newTable is the metric × run table over c.rows: the leading columns
// (level and metric, or metric alone) and one column per run, each cell
// coloured by whether the run did better or worse than the baseline (the
// first).
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
			text = fmt.Sprintf("[%d] %s", i+1, labels[i])
		}
		// Shortened to the column's width: a long run name ran into the
		// next heading.
		l := o.(*widget.Label)
		l.SetText(fitText(text, l.Size().Width, l.TextStyle))
	}
	for i, w := range leadWidths {
		t.SetColumnWidth(i, w)
	}
	// The runs share what the leading columns leave of a 1024-pixel-wide
	// window, so four runs show without scrolling sideways; a column
	// whose changes carry their intervals is as wide as they need (the
	// table then scrolls sideways rather than cut one).
	run := compareTableWidth
	for _, w := range leadWidths {
		run -= w
	}
	run = min(max(run/float32(max(len(labels), 1)), compareRunMinWidth), compareRunMaxWidth)
	for i := range labels {
		w := run
		for _, row := range c.rows {
			text, _ := compareCell(row, 2+i)
			w = max(w, widget.NewLabel(text).MinSize().Width)
		}
		t.SetColumnWidth(len(lead)+i, w)
	}
	return t
}

// The compare table's widths: what the whole table may take, and the
// narrowest and widest a run's column is (a value with its change,
// "1007.8 −4.3 %", needs the narrowest).
const (
	compareTableWidth  float32 = 960
	compareRunMinWidth float32 = 150
	compareRunMaxWidth float32 = 200
)

// compareCell is one cell of the compare table and its colour: green
// where the run did better than the baseline for that metric, red where
// worse, only where the verdict calls the change (compare.Cell's
// Better); such a change shows its interval after it, and one that
// cannot be judged says why (compare.FormatChange).
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
		if d := compare.FormatChange(cell); d != "" {
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

// saveChart writes a chart as PNG where the user chooses, as it stands
// alone outside the app (ChartView.PostImage), offering its title as the
// file's name.
func (u *App) saveChart(view *ChartView, title string) {
	img, err := view.PostImage()
	if err != nil {
		u.showProblem("Nothing to save", capitalize(err.Error())+".")
		return
	}
	u.saveImage(img, title)
}
