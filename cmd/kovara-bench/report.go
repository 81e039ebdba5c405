package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/report"
	"github.com/kovara/desktop/storage"
)

// reportFormats are report's --format values.
var reportFormats = []string{"md", "csv", "html", "jsonl"}

// cmdReport writes runs (results files or library ids) in a shape to
// paste or share: a Markdown table, CSV for a spreadsheet, one HTML page,
// or every request as JSONL. Several runs of one plan make a comparison,
// against the oldest as compare does. md, csv and html hold nothing
// private (never the endpoint, its models, the server's messages or a
// key); jsonl is every request's times from the run's local section, for
// the person's own analysis, one run at a time.
func cmdReport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	format := fs.String("format", "md", "md (a Markdown table to paste), csv (for a spreadsheet), html (one self-contained page) "+
		"or jsonl (every request of one run, one JSON object a line: local and private, for your own analysis, not to share)")
	out := fs.String("o", "", "write to this file instead of standard output")
	var pf priceFlags
	pf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: kovara-bench report RUN... [--format md|csv|html|jsonl] [-o FILE]")
		fmt.Fprintln(fs.Output(), "  RUN is a results file or an id from kovara-bench history; several runs of one plan are compared.")
		fs.PrintDefaults()
	}
	runs, code, ok := runsAndFlags(fs, args, stderr)
	if !ok {
		return code
	}
	price, err := pf.price()
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench report: %v\n", err)
		return exitBadInput
	}
	if !slices.Contains(reportFormats, *format) {
		fmt.Fprintf(stderr, "kovara-bench report: --format %q is not one of %s\n", *format, strings.Join(reportFormats, ", "))
		return exitBadInput
	}
	if len(runs) == 0 {
		fmt.Fprintln(stderr, "kovara-bench report: give one run, or several to compare (results files or ids from kovara-bench history)")
		return exitBadInput
	}
	if *format == "jsonl" && len(runs) > 1 {
		fmt.Fprintln(stderr, "kovara-bench report: --format jsonl writes one run's requests: give one run")
		return exitBadInput
	}
	var docs []plans.Doc
	var lib *storage.Library
	for _, arg := range runs {
		d, err := storage.LoadArg(arg, &lib, openLibrary)
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench report: %v\n", err)
			return exitBadInput
		}
		docs = append(docs, d)
	}
	if len(docs) > 1 {
		var kinds []string
		for _, d := range docs {
			kinds = append(kinds, d.Kind().ID)
		}
		if _, err := plans.ComparableKind(kinds); err != nil {
			fmt.Fprintf(stderr, "kovara-bench report: %v\n", err)
			return exitBadInput
		}
		// The baseline is the oldest, as compare's.
		docs = compare.Arrange(docs, storage.CompareOrder(docs, compare.OldestBaseline))
	}
	var b bytes.Buffer
	if err := writeReport(&b, *format, docs, report.WithPrice(price)); err != nil {
		fmt.Fprintf(stderr, "kovara-bench report: %v\n", err)
		return exitBadInput
	}
	if *out == "" || *out == "-" {
		stdout.Write(b.Bytes())
		return exitOK
	}
	if err := storage.WriteFileAtomic(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "kovara-bench report: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "wrote %s\n", *out)
	return exitOK
}

// writeReport writes docs (one, or several to compare) in format.
func writeReport(w io.Writer, format string, docs []plans.Doc, opts ...report.Option) error {
	switch format {
	case "jsonl":
		return report.JSONL(w, docs[0])
	case "html":
		return report.HTML(w, docs, nil, opts...)
	}
	var r report.Report
	var err error
	if len(docs) == 1 {
		r, err = report.Of(docs[0], opts...)
	} else {
		r, err = report.Compared(docs, nil)
	}
	if err != nil {
		return err
	}
	if format == "csv" {
		return report.CSV(w, r)
	}
	_, err = io.WriteString(w, report.Markdown(r))
	return err
}
