package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// cmdCompare prints the comparability verdict and a metric × run table of
// two or more runs, each a results file or a library id.
func cmdCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() < 2 {
		fmt.Fprintln(stderr, "kovara-bench compare: give two or more runs (results files or ids from kovara-bench history)")
		return exitBadInput
	}
	var files []*results.File
	var labels []string
	var lib *storage.Library
	for _, arg := range fs.Args() {
		f, label, err := loadRun(arg, &lib)
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench compare: %v\n", err)
			return exitBadInput
		}
		files = append(files, f)
		labels = append(labels, label)
	}
	printComparison(stdout, files, labels)
	return exitOK
}

// loadRun reads a results file by path, or a run of the library by id.
func loadRun(arg string, lib **storage.Library) (*results.File, string, error) {
	if _, err := os.Stat(arg); err == nil {
		data, err := storage.ReadBounded(arg, maxResultsFile, "a results file")
		if err != nil {
			return nil, "", err
		}
		f, err := results.Decode(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", arg, err)
		}
		return f, shortLabel(arg), nil
	}
	if *lib == nil {
		l, err := openLibrary()
		if err != nil {
			return nil, "", fmt.Errorf("%s is not a file, and the library cannot be opened: %w", arg, err)
		}
		*lib = l
	}
	f, err := (*lib).Load(arg)
	if err != nil {
		return nil, "", fmt.Errorf("%s is neither a results file nor a run in the library (%v)", arg, err)
	}
	return f, shortLabel(arg), nil
}

func shortLabel(s string) string {
	s = s[strings.LastIndexAny(s, `/\`)+1:]
	s = strings.TrimSuffix(s, ".json")
	// Library ids start with their time; the model and short id tell runs apart.
	if len(s) > 16 && s[8] == '-' && s[15] == '_' {
		s = s[16:]
	}
	if len(s) > 24 {
		s = s[:24] + "…"
	}
	return s
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "conc\tmetric"
	for i, l := range labels {
		head += fmt.Sprintf("\t[%d] %s", i+1, l)
	}
	fmt.Fprintln(tw, head+"\t")
	for _, row := range compare.Table(files, labels) {
		line := fmt.Sprintf("%d\t%s", row.Concurrency, row.Metric.Label)
		if u := row.Metric.Unit; u != "" && !strings.Contains(row.Metric.Label, u) {
			line += " (" + row.Metric.Unit + ")"
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
