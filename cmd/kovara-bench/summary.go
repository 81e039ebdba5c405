package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/kovara/desktop/engine/results"
)

// printSummary writes the per-level table to w: the run's problems above
// it, its notes below (results.Warnings, the words every surface uses).
func printSummary(w io.Writer, f *results.File) {
	ws := results.Warnings(f)
	printProblems(w, f, ws)
	for _, d := range results.ErrorDetails(f) {
		fmt.Fprintf(w, "    first error %s\n", d)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	tel := f.Local.Telemetry
	head := "conc\tok\terr\ttimeout\tout tok/s\treq/s\tTTFT p50\tp95\tp99\tITL p50\tp95\tp99\tlatency p50\tp99\t"
	if tel != nil {
		head += "power W\tpeak W\ttok/J\t"
	}
	fmt.Fprintln(tw, head)
	row := func(r results.Run, note string) {
		m := r.Metrics
		line := fmt.Sprintf("%d%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t",
			r.Concurrency, note, m.RequestsOK, m.RequestsError, m.RequestsTimeout,
			num(m.OutputThroughput, 1), num(m.RequestThroughput, 2),
			p(m.TTFTMs, 50), p(m.TTFTMs, 95), p(m.TTFTMs, 99),
			p(m.ITLMs, 50), p(m.ITLMs, 95), p(m.ITLMs, 99),
			p(m.LatencyMs, 50), p(m.LatencyMs, 99))
		if tel != nil {
			lv := tel.Levels[r.Concurrency]
			line += fmt.Sprintf("%s\t%s\t%s\t", opt(lv.MeanPowerW, 0), opt(lv.PeakPowerW, 0), opt(lv.TokensPerJoule, 2))
		}
		fmt.Fprintln(tw, line)
	}
	for _, r := range f.Runs {
		row(r, "")
	}
	if f.Local.PartialRun != nil {
		row(*f.Local.PartialRun, "*")
	}
	tw.Flush()
	fmt.Fprintln(w, "times in ms; tokens counted by", tokenMethod(f))
	if tel != nil {
		fmt.Fprintf(w, "GPU power from %s: %d GPUs; energy per level integrated over its wall time\n", tel.Host, len(tel.Inventory))
	}
	if f.Local.PartialRun != nil {
		fmt.Fprintln(w, "* interrupted level: partial, kept in local.partial_run, not publishable")
	}
	if note := results.ConnectionNote(f); note != "" {
		fmt.Fprintln(w, note)
	}
	printNotes(w, ws)
}

// printProblems writes a result's problems, one a line, under the state
// that says the result is not clean; nothing when it has none.
func printProblems(w io.Writer, f *results.File, ws []results.Warning) {
	problems, _ := results.Split(ws)
	if len(problems) == 0 {
		return
	}
	fmt.Fprintln(w, results.Headline(f, ws))
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

func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// p formats one percentile, or "-" when the sample is too small for it.
func p(d *results.Dist, q int) string {
	v, ok := d.At(q)
	if !ok {
		return "-"
	}
	return num(v, 1)
}

// opt formats an optional number, "-" when it is missing.
func opt(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return num(*v, prec)
}
