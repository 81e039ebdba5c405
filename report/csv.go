package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
)

// CSV writes r for a spreadsheet, with one header row and the units in
// the headers ("TTFT p50 (ms)"); numbers are written plainly (a "." for
// the decimal point, "-" for minus, no thousands separators, no unit),
// and a missing figure is an empty cell.
//
// A result is its table: one row per level, stage or depth, the cells of
// the table the app shows with their units moved to the header. A cell
// with a spread ("196.3 ±1.2 %") is two columns, the figure and "… ±
// (%)"; a cell of several figures ("20 / 0" under "OK / err", an
// interval "-2.0 % … +3.0 %") is a column each; a cell that is no figure
// ("met") stays as text. A
// report of several tables begins each row with its table's title.
//
// A comparison is long, one row per metric × run: Concurrency (when the
// rows are per level), Metric, Unit, Run (1 for the baseline), Label,
// Value, Change (%) against the baseline, Better (1 better, -1 worse, 0
// neither or not judged), Low (%) and High (%) (the change's interval,
// where it was judged against noise).
func CSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	var err error
	if r.Compared != nil {
		err = comparisonCSV(cw, r.Compared)
	} else {
		err = tablesCSV(cw, r.Tables)
	}
	if err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write the CSV: %w", err)
	}
	return nil
}

func tablesCSV(cw *csv.Writer, tables []Table) error {
	titled := len(tables)-joined(tables) > 1
	var prev []string
	for i := 0; i < len(tables); i++ {
		t := tables[i]
		var head []string
		var rows [][]string
		if i+1 < len(tables) && tables[i+1].Join {
			// The columns a joined table's figures share keep its
			// names, so a spreadsheet finds each figure once.
			own := t.Table
			own.Columns = slices.Clone(own.Columns)
			for k, c := range own.Columns {
				if n := results.EnergyCSVName(c); n != "" {
					own.Columns[k] = n
				}
			}
			head, rows = plainTable(own)
			for ; i+1 < len(tables) && tables[i+1].Join; i++ {
				head, rows = joinCSV(head, rows, tables[i+1].Table)
			}
		} else {
			head, rows = plainTable(t.Table)
		}
		if titled {
			head = append([]string{"Table"}, head...)
			for j := range rows {
				rows[j] = append([]string{t.Title}, rows[j]...)
			}
		}
		if !slices.Equal(head, prev) {
			if err := writeCSV(cw, head); err != nil {
				return err
			}
		}
		prev = head
		if err := writeCSV(cw, rows...); err != nil {
			return err
		}
	}
	return nil
}

// joined counts the tables that carry on the one before (Table.Join).
func joined(tables []Table) int {
	n := 0
	for _, t := range tables {
		if t.Join {
			n++
		}
	}
	return n
}

// joinCSV adds the columns of j, by their CSV names, to head and rows:
// each of j's rows onto the row whose first cell names the same level,
// or as a row of its own (the whole run's) with only its own figures. A
// column head already has is left out.
func joinCSV(head []string, rows [][]string, j results.Table) ([]string, [][]string) {
	var take []int
	for k, c := range j.Columns[1:] {
		name := results.EnergyCSVName(c)
		if name == "" {
			name = Heading(c)
		}
		if !slices.Contains(head, name) {
			head = append(head, name)
			take = append(take, k+1)
		}
	}
	width := len(head)
	for r := range rows {
		rows[r] = append(rows[r], make([]string, width-len(rows[r]))...)
	}
	for _, jr := range j.Rows {
		at := slices.IndexFunc(rows, func(r []string) bool { return len(r) > 0 && len(jr) > 0 && r[0] == jr[0] })
		if at < 0 {
			rows = append(rows, make([]string, width))
			at = len(rows) - 1
			rows[at][0] = jr[0]
		}
		for n, k := range take {
			v := ""
			if k < len(jr) && jr[k] != results.Missing {
				v = jr[k]
			}
			rows[at][width-len(take)+n] = v
		}
	}
	return head, rows
}

// splitParts is t with each column whose cells are several figures in
// one made several columns: "OK / err" cells "20 / 0" become an OK and an
// err column, "Answer tokens min / p50 / max" three, and an interval
// "-2.0 % … +3.0 %" a low and a high column. A column is split only when
// every cell of it splits the same way.
func splitParts(t results.Table) results.Table {
	out := results.Table{Rows: make([][]string, len(t.Rows))}
	for i, h := range t.Columns {
		heads := []string{h}
		cellsOf := func(v string) []string { return []string{v} }
		if hs := strings.Split(Heading(h), " / "); len(hs) > 1 {
			prefix := ""
			if w := strings.Fields(hs[0]); len(w) > 1 {
				prefix = strings.Join(w[:len(w)-1], " ") + " "
			}
			heads = []string{hs[0]}
			for _, p := range hs[1:] {
				heads = append(heads, prefix+p)
			}
			cellsOf = func(v string) []string { return strings.Split(v, " / ") }
		} else if columnAll(t, i, func(v string) bool { return len(strings.Split(v, " … ")) == 2 }) {
			heads = []string{Heading(h) + " low", Heading(h) + " high"}
			cellsOf = func(v string) []string { return strings.Split(v, " … ") }
		}
		if len(heads) > 1 && !columnAll(t, i, func(v string) bool { return len(cellsOf(v)) == len(heads) }) {
			heads, cellsOf = []string{h}, func(v string) []string { return []string{v} }
		}
		out.Columns = append(out.Columns, heads...)
		for j, row := range t.Rows {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			parts := make([]string, len(heads))
			if v != "" && v != results.Missing {
				copy(parts, cellsOf(v))
			}
			out.Rows[j] = append(out.Rows[j], parts...)
		}
	}
	return out
}

// columnAll: every figure of column i (the missing ones aside; at least
// one) satisfies ok.
func columnAll(t results.Table, i int, ok func(string) bool) bool {
	any := false
	for _, row := range t.Rows {
		if i >= len(row) || row[i] == "" || row[i] == results.Missing {
			continue
		}
		if !ok(row[i]) {
			return false
		}
		any = true
	}
	return any
}

// plainTable is t with its figures as plain numbers, their units moved
// into the headings and spreads in columns of their own.
func plainTable(t results.Table) ([]string, [][]string) {
	t = splitParts(t)
	type column struct {
		head   string
		cells  []string
		spread []string // nil: no cell of the column had a spread
	}
	cols := make([]column, len(t.Columns))
	for i, h := range t.Columns {
		c := column{head: Heading(h)}
		unit, sameUnit := "", true
		for _, row := range t.Rows {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			n, u, spread, ok := figure(v)
			switch {
			case v == results.Missing || v == "":
				v = ""
			case ok:
				v = n
				if unit == "" {
					unit = u
				} else if u != unit {
					sameUnit = false
				}
				if spread != "" && c.spread == nil {
					c.spread = make([]string, len(c.cells))
				}
			}
			c.cells = append(c.cells, v)
			if c.spread != nil {
				c.spread = append(c.spread, spread)
			}
		}
		if unit != "" && sameUnit && !strings.HasSuffix(c.head, "("+unit+")") {
			c.head += " (" + unit + ")"
		}
		cols[i] = c
	}
	var head []string
	rows := make([][]string, len(t.Rows))
	for _, c := range cols {
		head = append(head, c.head)
		if c.spread != nil {
			base, _, _ := strings.Cut(c.head, " (")
			head = append(head, base+" ± (%)")
		}
		for j := range rows {
			rows[j] = append(rows[j], c.cells[j])
			if c.spread != nil {
				rows[j] = append(rows[j], c.spread[j])
			}
		}
	}
	return head, rows
}

// figure reads a cell that is one figure: a number, perhaps with a unit
// ("40.0 tok/s", "70.0 %") and a spread ("196.3 ±1.2 %"), the way the
// shared tables write them. ok is false for anything else.
func figure(cell string) (num, unit, spread string, ok bool) {
	s := strings.ReplaceAll(cell, "−", "-")
	if i := strings.Index(s, " ±"); i >= 0 {
		sp := strings.TrimSuffix(strings.TrimSpace(s[i+len(" ±"):]), " %")
		if _, err := strconv.ParseFloat(sp, 64); err != nil {
			return "", "", "", false
		}
		spread, s = sp, s[:i]
	}
	n, u, _ := strings.Cut(s, " ")
	if u != "" && !slices.Contains(units, u) {
		return "", "", "", false
	}
	if _, err := strconv.ParseFloat(n, 64); err != nil {
		return "", "", "", false
	}
	return strings.TrimPrefix(n, "+"), u, spread, true
}

func comparisonCSV(cw *csv.Writer, c *Rows) error {
	var head []string
	if c.PerLevel {
		head = append(head, "Concurrency")
	}
	head = append(head, "Metric", "Unit", "Run", "Label", "Value", "Change (%)", "Better", "Low (%)", "High (%)")
	if err := writeCSV(cw, head); err != nil {
		return err
	}
	for _, row := range c.Rows {
		for i, cell := range row.Cells {
			var rec []string
			if c.PerLevel {
				rec = append(rec, strconv.Itoa(row.Concurrency))
			}
			label := cell.Label
			if i < len(c.Labels) {
				label = c.Labels[i]
			}
			value, change, low, high := "", "", "", ""
			if cell.Present {
				value = plainNumber(cell.Value)
				if cell.HasDelta {
					change = percent(cell.Delta)
				}
				if cell.Noise != compare.NoiseUnknown {
					low, high = percent(cell.Low), percent(cell.High)
				}
			}
			rec = append(rec, row.Metric.Label, row.Metric.Unit, strconv.Itoa(i+1), label, value, change, strconv.Itoa(cell.Better), low, high)
			if err := writeCSV(cw, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// plainNumber is v as a spreadsheet reads it: the shortest exact decimal,
// empty for what is not a number.
func plainNumber(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// percent is a relative change (0.12) in percent with two decimals
// ("12.00"), empty where it has no end.
func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x*100, 'f', 2, 64)
}

// writeCSV writes records with every text cell made safe for a
// spreadsheet (csvText); encoding/csv quotes the rest.
func writeCSV(cw *csv.Writer, recs ...[]string) error {
	for _, rec := range recs {
		out := make([]string, len(rec))
		for i, f := range rec {
			out[i] = csvText(f)
		}
		if err := cw.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// csvText keeps a text cell from being read as a formula: a spreadsheet
// runs a cell that begins with =, @, a tab, or a + or - before a call or a
// link to another program ("-1+cmd|' /C calc'!A0"), and a label or a
// model's name came from a person or a server. Such a cell gets a leading
// apostrophe, the spreadsheets' own mark for "this is text"; a signed
// number or an interval ("-3.1 % … +9.0 %") stays as it is.
func csvText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '@', '\t', '\r':
	case '+', '-':
		if !strings.ContainsAny(s, "=(!|\"") {
			return s
		}
	default:
		return s
	}
	return "'" + s
}
