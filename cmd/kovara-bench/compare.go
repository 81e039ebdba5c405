package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// cmdCompare prints whether two or more runs (results files or library
// ids) measured the same thing, naming every condition that differs, and
// a metric × run table with the change against the first. Runs of one kind
// compare: Kovara runs, three-stage results or speculative-decoding
// results.
func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(stderr, "kovara-bench compare: give two or more runs (results files or ids from kovara-bench history)")
		return exitBadInput
	}
	var docs []storage.Document
	var labels, plans []string
	var lib *storage.Library
	for _, arg := range fs.Args() {
		d, err := storage.LoadArg(arg, &lib, openLibrary)
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench compare: %v\n", err)
			return exitBadInput
		}
		docs = append(docs, d)
		labels = append(labels, storage.ShortName(arg))
		plans = append(plans, d.Plan)
	}
	kind, err := storage.ComparableKind(plans)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench compare: %v\n", err)
		return exitBadInput
	}
	if kind == storage.PlanKovara {
		var files []*results.File
		for _, d := range docs {
			files = append(files, d.File)
		}
		printComparison(stdout, files, labels)
		return exitOK
	}
	c := storage.CompareOthers(kind, docs, labels)
	fmt.Fprintln(stdout, c.Sentence())
	fmt.Fprintln(stdout)
	printRows(stdout, c.Rows, labels, c.PerLevel)
	return exitOK
}

func printComparison(w io.Writer, files []*results.File, labels []string) {
	v := compare.VerdictOf(files...)
	fmt.Fprintln(w, v.Sentence())
	for _, d := range v.Differences {
		fmt.Fprintf(w, "  %s: %s\n", d.Label, strings.Join(d.Values, " | "))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	fmt.Fprintln(w)
	printRows(w, compare.Table(files, labels), labels, true)
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
					if d := compare.FormatDelta(c); d != "" {
						cell += " " + d + mark(c.Better)
					}
				}
			}
			line += "\t" + cell
		}
		fmt.Fprintln(tw, line+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w, "changes are against run [1]; + better, − worse for that metric")
}

func mark(better int) string {
	switch better {
	case 1:
		return " +"
	case -1:
		return " −"
	}
	return ""
}
