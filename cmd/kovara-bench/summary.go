package main

import (
	"fmt"
	"io"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// printSummary writes the per-level table to w: the run's problems above
// it, its notes below (results.Warnings, the words every surface uses).
func printSummary(w io.Writer, f *results.File) {
	ws := results.Warnings(f)
	printProblems(w, plans.Kovara{File: f})
	for _, d := range results.ErrorDetails(f) {
		fmt.Fprintf(w, "    first error %s\n", d)
	}
	printTable(w, results.ResultTable(f))
	tel := f.Local.Telemetry
	fmt.Fprintln(w, "times in ms; tokens counted by", tokenMethod(f))
	if tel != nil {
		from := tel.Host
		if tel.Tool != "" {
			from = tel.Tool + " on " + tel.Host
		}
		fmt.Fprintf(w, "GPU power from %s: %d GPUs; energy per level integrated over its wall time\n", from, len(tel.Inventory))
	}
	if f.Local.PartialRun != nil {
		fmt.Fprintln(w, "(partial): the interrupted level, kept in local.partial_run, not publishable")
	}
	if note := results.ConnectionNote(f); note != "" {
		fmt.Fprintln(w, note)
	}
	if g := results.GoodputLine(f); g != "" {
		fmt.Fprintln(w, g)
	}
	if p := f.Local.PrefixCheck.Headline(); p != "" {
		fmt.Fprintln(w, p)
	}
	printNotes(w, ws)
}

// printProblems writes a result's problems, one a line, under its state
// (plans.State), the same for every plan; nothing when it has none.
func printProblems(w io.Writer, d plans.Doc) {
	problems := d.Problems()
	if len(problems) == 0 {
		return
	}
	fmt.Fprintln(w, plans.State(d))
	for _, p := range problems {
		fmt.Fprintf(w, "  problem: %s\n", p)
	}
}

// printNotes writes a result's notes, one a line.
func printNotes(w io.Writer, ws []results.Warning) {
	_, notes := results.Split(ws)
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

func tokenMethod(f *results.File) string {
	for _, r := range f.Runs {
		return r.Metrics.TokenCountMethod
	}
	if f.Local.PartialRun != nil {
		return f.Local.PartialRun.Metrics.TokenCountMethod
	}
	return "-"
}
