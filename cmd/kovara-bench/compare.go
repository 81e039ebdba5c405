package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// cmdCompare prints whether two or more runs (results files or library
// ids) measured the same thing, naming every condition that differs and
// every difference to weigh, and a metric × run table with the change
// against the baseline: the oldest run, or the one --baseline names. Runs
// of one kind compare: Kovara runs, three-stage, speculative-decoding or
// capacity results.
func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	baseline := fs.Int("baseline", 0, "the run the others are measured against, by its place among the runs given (1 for the first); the oldest run when not given")
	runs, code, ok := runsAndFlags(fs, args, stderr)
	if !ok {
		return code
	}
	if len(runs) < 2 {
		fmt.Fprintln(stderr, "kovara-bench compare: give two or more runs (results files or ids from kovara-bench history)")
		return exitBadInput
	}
	if *baseline < 0 || *baseline > len(runs) {
		fmt.Fprintf(stderr, "kovara-bench compare: --baseline %d is not one of the runs given: give its place among them, 1 to %d\n", *baseline, len(runs))
		return exitBadInput
	}
	var docs []plans.Doc
	var labels, kinds []string
	var lib *storage.Library
	for _, arg := range runs {
		d, err := storage.LoadArg(arg, &lib, openLibrary)
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench compare: %v\n", err)
			return exitBadInput
		}
		docs = append(docs, d)
		labels = append(labels, storage.ShortName(arg))
		kinds = append(kinds, d.Kind().ID)
	}
	kind, err := plans.ComparableKind(kinds)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench compare: %v\n", err)
		return exitBadInput
	}
	chosen, why := compare.OldestBaseline, "the oldest of these runs; --baseline N picks another"
	if *baseline > 0 {
		chosen, why = *baseline-1, "chosen with --baseline"
	}
	order := storage.CompareOrder(docs, chosen)
	docs, labels = compare.Arrange(docs, order), compare.Arrange(labels, order)
	base := fmt.Sprintf("changes are against [1] %s, the baseline (%s); + better, − worse for that metric", labels[0], why)
	if !kind.HasComparison() {
		var files []*results.File
		for _, d := range docs {
			files = append(files, d.(plans.Kovara).File)
		}
		printComparison(stdout, files, labels)
		fmt.Fprintln(stdout, base)
		return exitOK
	}
	c := kind.Compare(docs, labels)
	fmt.Fprintln(stdout, c.Sentence())
	fmt.Fprintln(stdout)
	printRows(stdout, c.Rows, labels, c.PerLevel)
	for _, l := range compare.DocLegends(c.Rows) {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintln(stdout, base)
	return exitOK
}

// runsAndFlags parses a command's flags wherever they stand among the
// runs it is given ("compare A B --baseline 2" as well as "compare
// --baseline 2 A B", report likewise); after "--" every argument is a run.
func runsAndFlags(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, int, bool) {
	var runs []string
	for {
		if code, ok := parseFlags(fs, args, stderr); !ok {
			return nil, code, false
		}
		if fs.NArg() == 0 {
			return runs, 0, true
		}
		if used := len(args) - fs.NArg(); used > 0 && args[used-1] == "--" {
			return append(runs, fs.Args()...), 0, true
		}
		runs = append(runs, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// printComparison writes Kovara runs side by side: the verdict (each
// run's changes, or whether a run made again like the baseline
// reproduced it, and which runs cannot tell), the cautions, the differing
// conditions and notes, then the table with its marks and the legend of
// its intervals. compare.Compared decides all of it once, and the app's
// Compare shows the same lines and colours the same cells. It returns the
// table's rows for what else is said of them.
func printComparison(w io.Writer, files []*results.File, labels []string) []compare.Row {
	v, rows := compare.Compared(files, labels)
	fmt.Fprintln(w, v.Sentence())
	for _, c := range v.Changes {
		fmt.Fprintln(w, c)
	}
	for _, c := range v.Cautions {
		fmt.Fprintf(w, "  caution: %s\n", c)
	}
	for _, d := range v.Differences {
		fmt.Fprintf(w, "  %s: %s\n", d.Label, strings.Join(d.Values, " | "))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
	printRows(w, rows, labels, true)
	if l := compare.NoiseLegend(rows); l != "" {
		fmt.Fprintln(w, l)
	}
	return rows
}

// printRows writes a metric × run table, with each row's concurrency
// first when the rows are per level.
func printRows(w io.Writer, rows []compare.Row, labels []string, perLevel bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "metric"
	if perLevel {
		head = "conc\tmetric"
	}
	for i, l := range labels {
		head += fmt.Sprintf("\t[%d] %s", i+1, l)
	}
	fmt.Fprintln(tw, head+"\t")
	for _, row := range rows {
		line := row.Metric.Label
		if u := row.Metric.Unit; u != "" && !strings.Contains(row.Metric.Label, u) {
			line += " (" + row.Metric.Unit + ")"
		}
		if perLevel {
			line = fmt.Sprintf("%d\t%s", row.Concurrency, line)
		}
		for i, c := range row.Cells {
			cell := "—"
			if c.Present {
				cell = compare.FormatValue(row.Metric, c.Value)
				if i > 0 {
					if d := compare.FormatChange(c); d != "" {
						cell += " " + d + compare.Mark(c.Better)
					}
				}
			}
			line += "\t" + cell
		}
		fmt.Fprintln(tw, line+"\t")
	}
	tw.Flush()
}
