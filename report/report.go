// Package report writes results in the shapes people paste and share: a
// Markdown table (markdown.go), CSV (csv.go), every request as JSONL
// (jsonl.go) and a self-contained HTML page (html.go). Every format but
// JSONL renders one Report, built here once from the tables the app and
// the CLI already show (plans.Doc.Table, engine/compare's rows) and only
// from what may be shared: Shareable takes the private part of a
// document's local section out before anything reads it.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// Report is one result or one comparison as every format writes it:
// problems first, then the conditions, the verdict (comparisons) and
// the tables.
type Report struct {
	// Title names what it is: "Kovara method: qwen3-8b" or "3 Kovara
	// runs compared".
	Title string
	// Headline is the result's state in a sentence (plans.State), or a
	// comparison's verdict sentence.
	Headline string
	// Problems are what went wrong, said before any figure; for a
	// comparison each is prefixed by its run's "[n]".
	Problems []string
	// Conditions is one line per document: what was measured and how
	// (Conditions); a comparison's lines begin "[n] label:".
	Conditions []string
	// Verdict is a comparison's lines beyond its sentence: each run's
	// changes, cautions, conditions that differ, notes. Nil for a result.
	Verdict []string
	Tables  []Table
	// Notes are a result's lines beside its table that are not problems
	// (plans.Doc.Notes): a warning to read, how a figure was made. A
	// comparison's are in its Verdict.
	Notes []string
	// Legend explains marks in a comparison's cells ("+ better, − worse").
	Legend []string
	// Compared is a comparison's rows as figures, for the formats that
	// write numbers rather than cells (CSV); nil for a result.
	Compared *Rows
}

// Rows are a comparison's metric × run rows and the runs' names: the
// figures Tables[0] shows as text.
type Rows struct {
	Rows     []compare.Row
	Labels   []string
	PerLevel bool
}

// Table is one titled table of a report: the shared cells of
// results.Table, with headings that may hold a line break before their
// unit (Heading puts them on one line).
type Table struct {
	Title string
	results.Table
	// Join: its rows carry on the previous table's, row by row where
	// their first cells name the same level, its columns by their CSV
	// names (results.EnergyCSVName). The CSV writes the two as one; the
	// other formats show two tables.
	Join bool
}

// Option changes what a report says.
type Option func(*options)

type options struct{ price *results.Price }

// WithPrice prices the energy a result drew at p (nil: no cost).
func WithPrice(p *results.Price) Option { return func(o *options) { o.price = p } }

func optionsOf(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Of is the report of one document, built from Shareable(d): nothing of
// its endpoint, served models, server messages, commands or logs. Its
// energy and cost table, when its run read power, follows its own.
func Of(d plans.Doc, opts ...Option) (Report, error) {
	o := optionsOf(opts)
	sd, private, err := shareable(d)
	if err != nil {
		return Report{}, err
	}
	r := Report{
		Title:      d.Kind().Title + ": " + sd.Model(),
		Headline:   sd.Headline(),
		Problems:   sd.Problems(),
		Conditions: []string{Conditions(sd)},
		Tables:     []Table{{Title: tableTitle(sd), Table: sd.Table()}},
		Notes:      sd.Notes(),
	}
	if s := plans.State(sd); plans.NeedsAttention(sd) && !strings.Contains(r.Headline, s) {
		// A plan's own headline is its answer; its state follows when
		// the answer is not the whole story.
		r.Headline += " " + s
	}
	if t, notes := plans.Energy(sd, o.price); t != nil {
		r.Tables = append(r.Tables, Table{Title: results.EnergyTitle, Table: *t, Join: true})
		r.Notes = append(r.Notes, notes...)
	}
	if t := plans.Hardware(sd); t != nil {
		r.Tables = append(r.Tables, Table{Title: results.HardwareTitle, Table: *t, Join: true})
	}
	return redact(r, private), nil
}

// Compared is the report of two or more documents of one plan, side by
// side; labels name them in the same order ("" for a name from the model
// and time). Kovara runs are compared as the app's Compare screen and
// `kovara-bench compare` do (compare.Compared: changes beyond noise from
// the raw samples); the other plans by their Kind.Compare. The first
// document is the baseline.
func Compared(docs []plans.Doc, labels []string) (Report, error) {
	if len(docs) < 2 {
		return Report{}, fmt.Errorf("a comparison takes two or more runs, not %d", len(docs))
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.Kind().ID)
	}
	kind, err := plans.ComparableKind(ids)
	if err != nil {
		return Report{}, err
	}
	if kind != plans.KovaraMethod && !kind.HasComparison() {
		return Report{}, fmt.Errorf("%s are not compared with each other: give one at a time", kind.Results)
	}
	shared := make([]plans.Doc, len(docs))
	var private []string
	names := make([]string, len(docs))
	for i, d := range docs {
		sd, p, err := shareable(d)
		if err != nil {
			return Report{}, err
		}
		shared[i], private = sd, append(private, p...)
		names[i] = runLabel(labels, i, sd)
	}
	r := Report{Title: fmt.Sprintf("%d %s compared", len(docs), kind.Results)}
	for i, d := range shared {
		r.Conditions = append(r.Conditions, fmt.Sprintf("[%d] %s: %s", i+1, names[i], Conditions(d)))
		for _, p := range d.Problems() {
			r.Problems = append(r.Problems, fmt.Sprintf("[%d] %s", i+1, p))
		}
	}
	base := fmt.Sprintf("Changes are against [1] %s, the baseline; + better, − worse for that metric.", names[0])
	if !kind.HasComparison() {
		files := make([]*results.File, len(shared))
		for i, d := range shared {
			files[i] = d.(plans.Kovara).File
		}
		v, rows := compare.Compared(files, names)
		r.Headline = v.Sentence()
		r.Verdict = append(r.Verdict, v.Changes...)
		for _, c := range v.Cautions {
			r.Verdict = append(r.Verdict, "caution: "+c)
		}
		for _, d := range v.Differences {
			r.Verdict = append(r.Verdict, d.Label+": "+strings.Join(d.Values, " | "))
		}
		for _, n := range v.Notes {
			r.Verdict = append(r.Verdict, "note: "+n)
		}
		r.Tables = []Table{{Title: "Metric × run", Table: RowsTable(rows, names, true)}}
		r.Compared = &Rows{Rows: rows, Labels: names, PerLevel: true}
		if t, ok := repeatsTable(files); ok {
			// One plan run several times: its figures with how far the
			// runs spread, the way repeated benchmarks are posted.
			// The verdict already says what the spread means.
			r.Tables = append(r.Tables, Table{Title: "Repeats: mean ± the farthest run", Table: t})
		}
		if l := compare.NoiseLegend(rows); l != "" {
			r.Legend = append(r.Legend, l)
		}
	} else {
		c := kind.Compare(shared, names)
		r.Headline = c.Sentence()
		r.Tables = []Table{{Title: "Metric × run", Table: RowsTable(c.Rows, names, c.PerLevel)}}
		r.Compared = &Rows{Rows: c.Rows, Labels: names, PerLevel: c.PerLevel}
		r.Legend = append(r.Legend, compare.DocLegends(c.Rows)...)
	}
	r.Legend = append(r.Legend, base)
	return redact(r, private), nil
}

// RowsTable is a comparison's metric × run rows as a table, the cells as
// `kovara-bench compare` prints them: each run's figure and, after the
// baseline's, its change with "+" (better) or "−" (worse); the level
// first when the rows are per level. Headings carry the unit on a second
// line ("TTFT p50\nms" reads "TTFT p50 (ms)" in one line).
func RowsTable(rows []compare.Row, labels []string, perLevel bool) results.Table {
	var t results.Table
	if perLevel {
		t.Columns = append(t.Columns, "Concurrency")
	}
	t.Columns = append(t.Columns, "Metric")
	for i, l := range labels {
		t.Columns = append(t.Columns, fmt.Sprintf("[%d] %s", i+1, l))
	}
	for _, row := range rows {
		var cells []string
		if perLevel {
			cells = append(cells, strconv.Itoa(row.Concurrency))
		}
		metric := row.Metric.Label
		if u := row.Metric.Unit; u != "" && !strings.Contains(metric, u) {
			metric += " (" + u + ")"
		}
		cells = append(cells, metric)
		for i, c := range row.Cells {
			cell := results.Missing
			if c.Present {
				cell = compare.FormatValue(row.Metric, c.Value)
				if i > 0 {
					if d := compare.FormatChange(c); d != "" {
						cell += " " + d + compare.Mark(c.Better)
					}
				}
			}
			cells = append(cells, cell)
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// repeatsTable is the runs of one repeated plan (one local.group) as one
// table: per level and metric the runs' mean, ± the farthest run from it
// as a share of it ("512.3 ±2.1 %", as the context plan's spreads), and
// their range. ok is false unless every file is of the same group.
func repeatsTable(files []*results.File) (results.Table, bool) {
	for _, f := range files {
		if g := f.Local.Group; g == nil || g.ID == "" || g.ID != files[0].Local.Group.ID {
			return results.Table{}, false
		}
	}
	rows := compare.GroupSpread(files)
	if len(rows) == 0 {
		return results.Table{}, false
	}
	t := results.Table{Columns: []string{"Concurrency", "Metric", "Runs", "Mean ± farthest", "Min", "Max"}}
	for _, row := range rows {
		metric := row.Metric.Label
		if u := row.Metric.Unit; u != "" && !strings.Contains(metric, u) {
			metric += " (" + u + ")"
		}
		mean := compare.FormatValue(row.Metric, row.Mean)
		if row.Mean != 0 && row.Max > row.Min {
			far := max(row.Max-row.Mean, row.Mean-row.Min) / math.Abs(row.Mean) * 100
			mean += " ±" + strconv.FormatFloat(far, 'f', 1, 64) + " %"
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(row.Concurrency), metric, strconv.Itoa(row.Runs), mean,
			compare.FormatValue(row.Metric, row.Min), compare.FormatValue(row.Metric, row.Max)})
	}
	return t, true
}

// runLabel is the i-th run's name: its label, else its model and time.
func runLabel(labels []string, i int, d plans.Doc) string {
	if i < len(labels) && labels[i] != "" {
		return labels[i]
	}
	name := d.Model()
	if t, err := time.Parse(time.RFC3339, d.CreatedAt()); err == nil {
		name += " " + t.UTC().Format("01-02 15:04")
	}
	return name
}

func tableTitle(d plans.Doc) string {
	if d.Kind() == plans.KovaraMethod {
		return "Per level"
	}
	return d.Kind().Results
}

// units are the units a heading may end in (its second line, or its last
// word): Heading puts them in brackets.
var units = []string{"ms", "tok/s", "tok/step", "W", "MiB", "%", "s"}

// Heading is a table heading on one line with its unit in brackets:
// "TTFT p50\nms" → "TTFT p50 (ms)", "Latency\np50 ms" → "Latency p50
// (ms)", "Power cap W" → "Power cap (W)"; others as results.Flat.
func Heading(h string) string {
	flat := results.Flat(h)
	i := strings.LastIndex(flat, " ")
	if i < 0 || !slices.Contains(units, flat[i+1:]) {
		return flat
	}
	return flat[:i] + " (" + flat[i+1:] + ")"
}

// Conditions is the one line of the conditions that matter for reading
// a result's figures: the model, the engine and its version, the
// accelerator and how many when known, the lengths, the plan and when it
// ran. Only shareable parts are read: never the endpoint.
func Conditions(d plans.Doc) string {
	parts := []string{"model " + d.Model()}
	c := conditionsOf(d)
	if e := d.Summary().Engine; e != "" {
		parts = append(parts, chart.EngineName(e))
	}
	if c.accelerator != "" {
		parts = append(parts, c.accelerator)
	}
	parts = append(parts, c.lengths...)
	parts = append(parts, "plan: "+d.Kind().Title)
	if t, err := time.Parse(time.RFC3339, d.CreatedAt()); err == nil {
		parts = append(parts, t.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if d.Simulated() {
		parts = append(parts, "simulated")
	}
	return strings.Join(parts, " · ")
}

type conditions struct {
	accelerator string
	lengths     []string
}

// docFields are the document fields the conditions come from, read from
// its JSON so that every plan's document is read alike (a Kovara file's
// and a capacity result's runs, a plan's settings, the GPUs its
// telemetry listed).
type docFields struct {
	Runs     []results.Run  `json:"runs"`
	Settings map[string]any `json:"settings"`
	Plan     map[string]any `json:"plan"`
	Local    struct {
		Telemetry *struct {
			Inventory []results.GPU `json:"inventory"`
		} `json:"telemetry"`
	} `json:"local"`
}

// lengthKeys are the settings' lengths in tokens, in the order said.
var lengthKeys = []struct{ key, say string }{
	{"input_tokens", "%d tokens in"},
	{"output_tokens", "%d tokens out"},
	{"max_tokens", "answers up to %d tokens"},
	{"decode_tokens", "%d tokens decoded"},
	{"prefill_target_tokens", "%d-token prefill"},
	{"users", "%d at once"},
}

func conditionsOf(d plans.Doc) conditions {
	var c conditions
	data, err := d.Marshal()
	if err != nil {
		return c
	}
	var f docFields
	if json.Unmarshal(data, &f) != nil {
		// Settings that are a list (a settings comparison's) are not
		// lengths; read the rest without them.
		f = docFields{}
		var g struct {
			Runs []results.Run `json:"runs"`
			Plan map[string]any
		}
		_ = json.Unmarshal(data, &g)
		f.Runs, f.Plan = g.Runs, g.Plan
	}
	if len(f.Runs) > 0 {
		r := f.Runs[0]
		if r.Accelerator != nil && *r.Accelerator != "" {
			c.accelerator = *r.Accelerator
			if r.GPUCount != nil && *r.GPUCount > 0 {
				c.accelerator = strconv.Itoa(*r.GPUCount) + "× " + c.accelerator
			}
		}
		if f.Settings == nil && f.Plan == nil {
			c.lengths = append(c.lengths, fmt.Sprintf("%d tokens in", r.InputTokens), fmt.Sprintf("%d tokens out", r.OutputTokens))
			levels := make([]string, 0, len(f.Runs))
			for _, r := range f.Runs {
				levels = append(levels, strconv.Itoa(r.Concurrency))
			}
			c.lengths = append(c.lengths, "concurrency "+strings.Join(levels, ", "))
		}
	}
	if t := f.Local.Telemetry; c.accelerator == "" && t != nil && len(t.Inventory) > 0 {
		c.accelerator = strconv.Itoa(len(t.Inventory)) + "× " + t.Inventory[0].Name
	}
	for _, m := range []map[string]any{f.Settings, f.Plan} {
		for _, k := range lengthKeys {
			if v, ok := m[k.key].(float64); ok && v > 0 {
				say := fmt.Sprintf(k.say, int(v))
				if k.key == "users" {
					say = fmt.Sprintf("%d %s at once", int(v), results.Plural(int(v), "user", "users"))
				}
				c.lengths = append(c.lengths, say)
			}
		}
	}
	return c
}
