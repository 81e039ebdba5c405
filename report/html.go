package report

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"image"
	"io"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// The HTML report: one file a person can send or attach, read in any
// browser with nothing else — no network, no script, its style inline and
// its charts embedded as PNG data. Every text goes through html/template,
// so a label or a server's sentence can never become markup.

// Each chart is drawn twice: wide for a screen (chart.Post's size) and
// narrow for a phone, where the wide one shrunk to 360 pixels would have
// text too small to read; the page picks one by its width (<picture>, no
// script).
const (
	narrowWidth, narrowHeight = 720, 640
	narrowScale               = 1.8
	// narrowBelow is the page width (CSS pixels) under which the narrow
	// drawings are shown.
	narrowBelow = 700
)

// HTML writes the report of docs as one self-contained HTML page: of the
// one document, or of two or more of one plan side by side (the first the
// baseline, as Compared). labels name the documents in the same order, as
// History does ("" or none: their model and time). The page says what
// Report says — the headline, the problems first, the conditions, a
// comparison's verdict, every table — and then the charts the app shows
// for the plan, drawn by the chart package from the shareable documents
// only (Shareable), each run named by its label, model and engine.
func HTML(w io.Writer, docs []plans.Doc, labels []string, opts ...Option) error {
	return writeHTML(w, docs, labels, chartDrawing.draw, opts...)
}

// writeHTML is HTML with its charts drawn by draw (the tests' drawing
// stands in for the PNGs where the page's text is what they read).
func writeHTML(w io.Writer, docs []plans.Doc, labels []string, draw func(chartDrawing, string) (template.HTML, error), opts ...Option) error {
	var (
		r       Report
		err     error
		figures []chartFigure
	)
	switch len(docs) {
	case 0:
		return errors.New("no result to report")
	case 1:
		r, err = Of(docs[0], opts...)
	default:
		r, err = Compared(docs, labels)
	}
	if err != nil {
		return err
	}
	ds, err := drawingsOf(docs, labels)
	if err != nil {
		return err
	}
	if figures, err = drawAll(ds, draw); err != nil {
		return err
	}
	return writeHTMLPage(w, r, figures)
}

// drawingsOf are the charts of docs (one, or several compared), from
// their shareable parts only, every text they draw passed through the
// same redaction as the page's (redact): a label that is the endpoint's
// name is never drawn.
func drawingsOf(docs []plans.Doc, labels []string) ([]chartDrawing, error) {
	shared, private, err := shareableAll(docs)
	if err != nil {
		return nil, err
	}
	ds := comparisonCharts(shared, labels)
	if len(shared) == 1 {
		ds = docCharts(shared[0], labelOf(labels, 0))
		ds = append(ds, powerCharts(shared[0], labelOf(labels, 0))...)
	}
	slices.SortFunc(private, func(a, b string) int { return len(b) - len(a) }) // longest first, as redact
	clean := cleaner(private)
	for i := range ds {
		d := &ds[i]
		d.title, d.none = clean(d.title), clean(d.none)
		if d.spec != nil {
			cleanSpec(d.spec, clean)
		}
		if d.timeline != nil {
			d.timeline.Title, d.timeline.Subtitle = clean(d.timeline.Title), clean(d.timeline.Subtitle)
		}
	}
	return ds, nil
}

// shareableAll is every document as Shareable makes it, and the private
// texts taken out of all of them.
func shareableAll(docs []plans.Doc) ([]plans.Doc, []string, error) {
	shared := make([]plans.Doc, len(docs))
	var private []string
	for i, d := range docs {
		sd, p, err := shareable(d)
		if err != nil {
			return nil, nil, err
		}
		shared[i], private = sd, append(private, p...)
	}
	return shared, private, nil
}

func labelOf(labels []string, i int) string {
	if i < len(labels) {
		return labels[i]
	}
	return ""
}

// chartDrawing is one chart of a report before it is drawn: a chart or a
// request timeline, or, when there is nothing to draw, what is said
// instead.
type chartDrawing struct {
	title    string
	spec     *chart.Spec
	timeline *chart.TimelineSpec
	none     string
}

// chartFigure is a drawing as the page shows it: its PNGs as data URIs, or
// its sentence.
type chartFigure struct {
	Title string
	// Picture is the <picture> element with both PNGs; "" when None says
	// why there is no chart.
	Picture template.HTML
	None    string
}

// planCharts are the charts of a plan's result, by plan, the same the
// app's result views draw; every plan has its entry
// (TestEveryPlanHasItsCharts), the three-stage plan one that draws none:
// its cards and table are its result. name is the run's label, model and
// engine.
var planCharts = map[string]func(d plans.Doc, name string) []chartDrawing{
	results.PlanStages: func(plans.Doc, string) []chartDrawing { return nil },
	results.PlanKovara: func(d plans.Doc, name string) []chartDrawing {
		return kovaraCharts(d.(plans.Kovara).File, name)
	},
	results.PlanContext: func(d plans.Doc, name string) []chartDrawing {
		return specsOf(chart.ContextCharts(plans.ResultOf[*results.ContextResult](d), chart.Light()), name)
	},
	results.PlanCapacity: func(d plans.Doc, name string) []chartDrawing {
		return specsOf(chart.CapacityCharts(plans.ResultOf[*results.CapacityResult](d), chart.Light()), name)
	},
	results.PlanSpecDec: func(d plans.Doc, name string) []chartDrawing {
		spec := chart.SpecDecPositionSpec(plans.ResultOf[*results.SpecDecResult](d), chart.Light())
		if len(spec.Series) == 0 {
			return []chartDrawing{{title: spec.Title, none: "No acceptance by draft position: the server reported no drafting counts."}}
		}
		return specsOf([]chart.Spec{spec}, name)
	},
	results.PlanRate: func(d plans.Doc, name string) []chartDrawing {
		return specsOf(chart.RateResultCharts(plans.ResultOf[*results.RateResult](d), chart.Light()), name)
	},
	results.PlanAnswers: answersCharts,
	results.PlanTune: func(d plans.Doc, name string) []chartDrawing {
		r := plans.ResultOf[*results.TuneResult](d)
		var specs []chart.Spec
		for _, c := range r.Plan.Concurrency {
			specs = append(specs, chart.TuneCharts(r, c, chart.Light())...)
		}
		return specsOf(specs, name)
	},
}

// powerCharts are one document's power over its run (chart.PowerOverTime)
// and what its cards did per window (chart.HardwareOverLevels), each when
// its source read it.
func powerCharts(d plans.Doc, label string) []chartDrawing {
	p, ok := plans.Powered(d)
	if !ok {
		return nil
	}
	var specs []chart.Spec
	if spec, ok := chart.PowerOverTime(p, chart.Light()); ok {
		specs = append(specs, spec)
	}
	if spec, ok := chart.HardwareOverLevels(p, chart.Light()); ok {
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil
	}
	return specsOf(specs, chart.RunName(label, d.Model(), chart.EngineName(d.Summary().Engine)))
}

// docCharts are one document's charts, subtitled with its name.
func docCharts(d plans.Doc, label string) []chartDrawing {
	draw, ok := planCharts[d.Kind().ID]
	if !ok {
		return nil
	}
	return draw(d, chart.RunName(label, d.Model(), chart.EngineName(d.Summary().Engine)))
}

func specsOf(specs []chart.Spec, name string) []chartDrawing {
	out := make([]chartDrawing, len(specs))
	for i := range specs {
		specs[i].Subtitle = name
		out[i] = chartDrawing{title: specs[i].Title, spec: &specs[i]}
	}
	return out
}

// kovaraCharts are a Kovara result's charts as the app shows them
// (chart.ResultCharts), inter-token latency by level beside them, and the
// request timeline of the level the app opens its timeline at: the
// busiest level that finished.
func kovaraCharts(f *results.File, name string) []chartDrawing {
	specs := append(chart.ResultCharts(f, chart.Light()), itlSpec(f))
	out := specsOf(specs, name)
	if len(f.Runs) < 2 {
		for i := range out {
			out[i] = chartDrawing{title: out[i].title, none: chart.NoCurve}
		}
	}
	levels := chart.TimelineLevels(f)
	if len(levels) == 0 {
		return append(out, chartDrawing{title: "Every request of a level", none: chart.NoTimeline})
	}
	level := levels[len(levels)-1]
	for _, l := range slices.Backward(levels) {
		if !l.Partial {
			level = l
			break
		}
	}
	spec, err := chart.ResultTimeline(f, level.Concurrency, chart.Light())
	if err != nil {
		return append(out, chartDrawing{title: chart.TimelineTitle(level), none: "No timeline: " + err.Error() + "."})
	}
	spec.Subtitle = name
	return append(out, chartDrawing{title: spec.Title, timeline: &spec})
}

// itlSpec is inter-token latency's p50, p95 and p99 by level, drawn as
// chart.TTFT draws time to first token.
func itlSpec(f *results.File) chart.Spec {
	spec := chart.TTFT(f, chart.Light())
	spec.Title = "Inter-token latency by concurrency"
	for i, q := range []int{50, 95, 99} {
		var y []float64
		for _, r := range f.Runs {
			v, ok := r.Metrics.ITLMs.At(q)
			if !ok {
				v = math.NaN()
			}
			y = append(y, v)
		}
		spec.Series[i].Y = y
	}
	return spec
}

// comparisonCharts are the charts of documents compared: for Kovara runs
// the app's Compare charts, every run's figure by level on one chart
// (CompareCharts), and their timelines at the busiest level all of them
// finished, on one time scale; for other plans none (their comparison is
// its table).
func comparisonCharts(docs []plans.Doc, labels []string) []chartDrawing {
	if len(docs) < 2 {
		return nil
	}
	files := make([]*results.File, 0, len(docs))
	for _, d := range docs {
		k, ok := d.(plans.Kovara)
		if !ok {
			return nil
		}
		files = append(files, k.File)
	}
	// Each run named as the table's columns name it (its label, else its
	// model and time), and by its engine.
	names := make([]string, len(files))
	for i, f := range files {
		name := chart.RunOf(f, labelOf(labels, i))
		if labelOf(labels, i) == "" {
			name = chart.RunName(runLabel(labels, i, docs[i]), "", chart.EngineOf(f))
		}
		names[i] = fmt.Sprintf("[%d] %s", i+1, name)
	}
	var out []chartDrawing
	for _, s := range CompareCharts(files, names, chart.Light()) {
		out = append(out, chartDrawing{title: s.Title, spec: &s})
	}
	return append(out, sharedTimelines(files, names)...)
}

// sharedTimelines are the runs' timelines at the busiest level every one
// of them finished and kept, on the longest of their time scales.
func sharedTimelines(files []*results.File, names []string) []chartDrawing {
	level := 0
	for _, l := range chart.TimelineLevels(files[0]) {
		all := !l.Partial
		for _, f := range files[1:] {
			all = all && slices.Contains(chart.TimelineLevels(f), chart.TimelineLevel{Concurrency: l.Concurrency})
		}
		if all && l.Concurrency > level {
			level = l.Concurrency
		}
	}
	if level == 0 {
		return []chartDrawing{{title: "Every request of a level", none: chart.NoSharedTimeline}}
	}
	out := make([]chartDrawing, len(files))
	span := 0.0
	for i, f := range files {
		spec, err := chart.ResultTimeline(f, level, chart.Light())
		if err != nil {
			out[i] = chartDrawing{title: names[i], none: "No timeline: " + err.Error() + "."}
			continue
		}
		spec.Subtitle = names[i]
		out[i] = chartDrawing{title: spec.Title + ": " + names[i], timeline: &spec}
		span = math.Max(span, spec.Span)
	}
	for _, d := range out {
		if d.timeline != nil {
			d.timeline.Span = span
		}
	}
	return out
}

// CompareCharts are Kovara runs' figures by level on one chart each, as
// the app's Compare screen shows them: output throughput, TTFT (p50 a
// line, p95 dots), ITL p50 and per-user against total throughput. One
// series per run over the union of their levels, a gap where a run lacks
// a level (never a zero); names are the runs' names in the legend.
func CompareCharts(files []*results.File, names []string, p chart.Palette) []chart.Spec {
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
				if v, ok := get(r); ok && r.Concurrency == l {
					ys[i] = v
				}
			}
		}
		return ys
	}
	spec := func(title, ylabel string, ids ...string) chart.Spec {
		s := chart.Spec{Title: title, XLabel: "concurrent streams", YLabel: ylabel, YFromZero: true, XLog: true, XTicks: ticks, Palette: p}
		for i, f := range files {
			for j, id := range ids {
				m, _ := compare.MetricByID(id)
				name, kind := names[i], chart.Line
				if j > 0 {
					// A second statistic of the run: dots over its line,
					// the run named by its number.
					name, _, _ = strings.Cut(name, " ")
					kind = chart.Scatter
				}
				if len(ids) > 1 {
					name += " " + strings.TrimPrefix(strings.TrimPrefix(id, "ttft_"), "itl_")
				}
				ys := byLevel(f, m.Get)
				if !slices.ContainsFunc(ys, func(y float64) bool { return !math.IsNaN(y) }) {
					continue // nothing measured: no legend entry for it
				}
				s.Series = append(s.Series, chart.Series{Name: name, X: ticks, Y: ys, Kind: kind, Color: i})
			}
		}
		return s
	}
	// The TTFT chart promises p95 dots only where some are drawn: runs
	// of fewer than 20 requests a level have none, and their legend
	// listed "[1] p95" over no dot.
	ttft := spec("Time to first token by concurrency (p50 line, p95 dots)", "ms", "ttft_p50", "ttft_p95")
	if !slices.ContainsFunc(ttft.Series, func(s chart.Series) bool { return s.Kind == chart.Scatter }) {
		ttft.Title = "Time to first token p50 by concurrency (no p95: fewer than 20 successes a level)"
	}
	trade := chart.Spec{Title: "Per-user against total throughput", XLabel: "total tok/s", YLabel: "per-user tok/s", YFromZero: true, Palette: p}
	for i, f := range files {
		var x, y []float64
		for _, pt := range compare.TradeOff(f) {
			x, y = append(x, pt.Total), append(y, pt.PerUser)
		}
		trade.Series = append(trade.Series, chart.Series{Name: names[i], X: x, Y: y, Kind: chart.Line, Color: i})
	}
	return []chart.Spec{
		spec("Output throughput by concurrency", "tok/s", "output_throughput"),
		ttft,
		spec("Inter-token latency p50 by concurrency", "ms", "itl_p50"),
		trade,
	}
}

// drawAll draws every drawing wide and narrow. A chart with too few
// points to draw says so instead.
func drawAll(ds []chartDrawing, draw func(chartDrawing, string) (template.HTML, error)) ([]chartFigure, error) {
	out := make([]chartFigure, 0, len(ds))
	for _, d := range ds {
		f := chartFigure{Title: d.title, None: d.none}
		var err error
		if f.Picture, err = draw(d, f.Title); errors.Is(err, chart.ErrTooFewPoints) {
			f.None = "Fewer than two points have this figure: nothing to draw."
		} else if err != nil {
			return nil, fmt.Errorf("draw %q: %w", d.title, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// draw is d's two PNGs in a <picture>, the narrow one under narrowBelow
// pixels; "" when d has nothing to draw.
func (d chartDrawing) draw(alt string) (template.HTML, error) {
	if d.spec == nil && d.timeline == nil {
		return "", nil
	}
	var uris [2]string
	for i, narrow := range []bool{false, true} {
		png, err := encodePNG(d.render(narrow))
		if err != nil {
			return "", err
		}
		uris[i] = "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	}
	return picture(uris[1], uris[0], alt), nil
}

// render draws d at the wide or the narrow size.
func (d chartDrawing) render(narrow bool) (*image.RGBA, error) {
	if d.spec != nil {
		s := chart.Post(*d.spec)
		if narrow {
			s.Width, s.Height, s.Scale = narrowWidth, narrowHeight, narrowScale
		}
		return chart.Render(s)
	}
	s := chart.PostTimeline(*d.timeline)
	if narrow {
		s.Width, s.Height, s.Scale = narrowWidth, narrowHeight, narrowScale
	}
	return chart.RenderTimeline(s)
}

// picture shows the narrow image under narrowBelow pixels and the wide
// one above. The data URIs are written whole (html/template would write
// each "+" of the base64 as an entity): base64 holds no character HTML
// reads in a quoted attribute. The alt text is escaped.
func picture(narrow, wide, alt string) template.HTML {
	return template.HTML(fmt.Sprintf(`<picture><source media="(max-width: %dpx)" srcset="%s"><img src="%s" alt="%s"></picture>`,
		narrowBelow-1, narrow, wide, template.HTMLEscapeString(alt)))
}

func encodePNG(img *image.RGBA, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := chart.EncodePNG(img, &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// cleanSpec passes every text a chart draws through clean.
func cleanSpec(s *chart.Spec, clean func(string) string) {
	s.Title, s.Subtitle, s.XLabel, s.YLabel = clean(s.Title), clean(s.Subtitle), clean(s.XLabel), clean(s.YLabel)
	for i := range s.Series {
		s.Series[i].Name = clean(s.Series[i].Name)
	}
	for i := range s.XTickLabels {
		s.XTickLabels[i] = clean(s.XTickLabels[i])
	}
}

// page is what the template writes.
type htmlPage struct {
	Report
	Tables  []htmlTable
	Figures []chartFigure
}

type htmlTable struct {
	Title   string
	Columns []htmlCell
	Rows    [][]htmlCell
}

// htmlCell is a cell and whether its column holds figures (aligned
// right, as numbers are); a heading's unit goes on a line of its own, so
// a table of a dozen figures fits 1280 pixels.
type htmlCell struct {
	Text, Unit string
	// Class is the cell's: "num" for figures, and in a comparison
	// "better" or "worse" where a run's change is beyond noise, coloured
	// as the app's Compare colours it.
	Class string
}

// headingCell is a table heading with its unit apart: "TTFT p50\nms" is
// "TTFT p50" over "(ms)".
func headingCell(h string, numeric bool) htmlCell {
	flat := Heading(h)
	if i := strings.LastIndex(flat, " ("); i > 0 && strings.HasSuffix(flat, ")") {
		return htmlCell{Text: flat[:i], Unit: flat[i+1:], Class: numClass(numeric)}
	}
	return htmlCell{Text: flat, Class: numClass(numeric)}
}

// figureColumn: a column of figures (numericColumn), or one with no figure at
// all (a p99 no level had enough requests for), aligned as its
// neighbours.
func figureColumn(t results.Table, i int) bool {
	for _, row := range t.Rows {
		if i < len(row) && row[i] != results.Missing {
			return numericColumn(t, i)
		}
	}
	return len(t.Rows) > 0
}

// capitalized is s begun with a capital, as a heading ("context
// results" is a plan's results in a sentence).
func capitalized(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func numClass(numeric bool) string {
	if numeric {
		return "num"
	}
	return ""
}

// marks are a comparison's cells' classes, by row and column: a run's
// change better or worse than the baseline beyond noise (compare.Cell's
// Better); nil for a result.
func marks(r Report, t int) [][]string {
	c := r.Compared
	if c == nil || t != 0 || len(r.Tables) == 0 || len(r.Tables[0].Rows) != len(c.Rows) {
		return nil
	}
	first := 1 // the metric's column
	if c.PerLevel {
		first++
	}
	out := make([][]string, len(c.Rows))
	for i, row := range c.Rows {
		out[i] = make([]string, first+len(row.Cells))
		for j, cell := range row.Cells {
			switch {
			case j == 0 || !cell.Present:
			case cell.Better > 0:
				out[i][first+j] = "better"
			case cell.Better < 0:
				out[i][first+j] = "worse"
			}
		}
	}
	return out
}

func writeHTMLPage(w io.Writer, r Report, figures []chartFigure) error {
	p := htmlPage{Report: r, Figures: figures}
	for ti, t := range r.Tables {
		pt := htmlTable{Title: capitalized(t.Title)}
		marked := marks(r, ti)
		numeric := make([]bool, len(t.Columns))
		for i, c := range t.Columns {
			numeric[i] = figureColumn(t.Table, i)
			pt.Columns = append(pt.Columns, headingCell(c, numeric[i]))
		}
		for ri, row := range t.Rows {
			cells := make([]htmlCell, len(t.Columns))
			for i := range cells {
				if i < len(row) {
					cells[i].Text = row[i]
				}
				cells[i].Class = numClass(numeric[i])
				if ri < len(marked) && i < len(marked[ri]) && marked[ri][i] != "" {
					cells[i].Class = strings.TrimSpace(cells[i].Class + " " + marked[ri][i])
				}
			}
			pt.Rows = append(pt.Rows, cells)
		}
		p.Tables = append(p.Tables, pt)
	}
	var b bytes.Buffer
	if err := htmlTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

var htmlTemplate = template.Must(template.New("report").Parse(htmlPageText))

// htmlPageText reads at 1280 pixels and on a phone (390): the text in one
// column, sentences at most 75 characters wide, tables as wide as they
// need inside their own scrolling box (never the page's; a shadow at its
// edge says there is more), charts as wide as the column.
const htmlPageText = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Kovara Desktop">
<title>{{.Title}}</title>
<style>
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#fff;color:#1f2328;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif}
main{max-width:1200px;margin:0 auto;padding:28px 24px 40px}
h1{font-size:1.7rem;line-height:1.25;margin:0 0 .4em;overflow-wrap:anywhere}
h2{font-size:1.25rem;margin:1.8em 0 .6em;padding-bottom:.25em;border-bottom:1px solid #d0d7de}
h3{font-size:1.05rem;margin:1.4em 0 .5em}
p,li{max-width:75ch;overflow-wrap:anywhere}
ul{padding-left:1.4em;margin:.4em 0}
li{margin:.2em 0}
.headline{font-size:1.08rem;font-weight:600;margin:.6em 0;padding-left:.8em;border-left:4px solid #0969da}
.problems{margin:1.2em 0;padding:.8em 1.1em;border:2px solid #cf222e;border-radius:8px;background:#fff5f5}
.problems h2{margin:0 0 .3em;padding:0;border:0;color:#a40e26;font-size:1.15rem}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid #d0d7de;border-radius:8px;
background:linear-gradient(to right,#fff 30%,rgba(255,255,255,0)),linear-gradient(to right,rgba(255,255,255,0),#fff 70%) 100% 0,
radial-gradient(farthest-side at 0 50%,rgba(0,0,0,.18),rgba(0,0,0,0)),radial-gradient(farthest-side at 100% 50%,rgba(0,0,0,.18),rgba(0,0,0,0)) 100% 0;
background-repeat:no-repeat;background-size:40px 100%,40px 100%,14px 100%,14px 100%;background-attachment:local,local,scroll,scroll}
table{border-collapse:collapse;min-width:100%;font-variant-numeric:tabular-nums;font-size:.9rem}
th,td{padding:6px 10px;text-align:left;white-space:nowrap;border-bottom:1px solid #eaeef2}
th{background:rgba(27,31,36,.04);vertical-align:bottom;font-weight:600;white-space:normal;min-width:5em}
.unit{font-weight:400;color:#57606a}
th{overflow-wrap:normal;word-break:keep-all}
tbody tr:last-child td{border-bottom:0}
tbody tr:nth-child(even){background:rgba(27,31,36,.02)}
.num{text-align:right}
td.better{background:#dafbe1;color:#116329}
td.worse{background:#ffebe9;color:#a40e26}
.legend{color:#57606a;font-size:.9rem}
figure{margin:1.2em 0 2em}
figure img{display:block;width:100%;height:auto;border:1px solid #d0d7de;border-radius:8px}
figcaption{color:#57606a;font-size:.9rem;margin-top:.3em}
.none{padding:1em;border:1px dashed #d0d7de;border-radius:8px;color:#57606a}
footer{margin-top:2.5em;padding-top:.8em;border-top:1px solid #d0d7de;color:#57606a;font-size:.85rem}
@media (max-width:699px){
main{padding:16px 12px 28px}
h1{font-size:1.35rem}
h2{font-size:1.12rem}
th,td{padding:6px 9px}
}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{with .Headline}}<p class="headline">{{.}}</p>
{{end}}
{{- with .Problems}}<section class="problems">
<h2>{{if eq (len .) 1}}A problem{{else}}{{len .}} problems{{end}}</h2>
<ul>
{{range .}}<li>{{.}}</li>
{{end}}</ul>
</section>
{{end}}
{{- with .Conditions}}<section>
<h2>Conditions</h2>
<ul>
{{range .}}<li>{{.}}</li>
{{end}}</ul>
</section>
{{end}}
{{- with .Verdict}}<section>
<h2>Verdict</h2>
<ul>
{{range .}}<li>{{.}}</li>
{{end}}</ul>
</section>
{{end}}
{{- range .Tables}}<section>
<h2>{{.Title}}</h2>
<div class="scroll"><table>
<thead><tr>{{range .Columns}}<th{{with .Class}} class="{{.}}"{{end}}>{{.Text}}{{with .Unit}}<br><span class="unit">{{.}}</span>{{end}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{with .Class}} class="{{.}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
</section>
{{end}}
{{- range .Legend}}<p class="legend">{{.}}</p>
{{end}}
{{- with .Notes}}<section>
<h2>Notes</h2>
<ul>
{{range .}}<li>{{.}}</li>
{{end}}</ul>
</section>
{{end}}
{{- with .Figures}}<section>
<h2>Charts</h2>
{{range .}}<figure>
{{if .Picture}}{{.Picture}}
{{else}}<h3>{{.Title}}</h3>
<p class="none">{{.None}}</p>
{{end}}</figure>
{{end}}</section>
{{end}}
<footer>Measured with Kovara Desktop.</footer>
</main>
</body>
</html>
`
