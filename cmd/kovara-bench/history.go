package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/storage"
)

// cmdHistory lists the local results library, newest first.
func cmdHistory(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	model := fs.String("model", "", "only runs whose model contains this text")
	limit := fs.Int("n", 0, "show at most this many runs (0: all)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	lib, err := openLibrary()
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench history: %v\n", err)
		return exitFailed
	}
	list, err := lib.List()
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench history: %v\n", err)
		return exitFailed
	}
	list = storage.Filter(list, storage.Query{Model: *model})
	if *limit > 0 && len(list) > *limit {
		list = list[:*limit]
	}
	if len(list) == 0 {
		if *model != "" {
			fmt.Fprintf(stderr, "no runs of a model matching %q in %s\n", *model, lib.Dir())
		} else {
			fmt.Fprintf(stderr, "no runs yet in %s: try kovara-bench demo\n", lib.Dir())
		}
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DATE\tID\tENDPOINT\tMODEL\tENGINE\tKIND\tLEVELS\tBEST TOK/S\tSTATUS\tLABEL")
	for _, s := range list {
		if s.Unreadable != "" {
			fmt.Fprintf(tw, "-\t%s\t\t\t\t\t\t\tunreadable: %s\t\n", s.ID, clip.Line(s.Unreadable, 90))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			localTime(s.CreatedAt), s.ID, dash(s.EndpointName), dash(s.Model), dash(s.Engine), dash(s.KindLine()),
			levels(s), s.Best(), s.State(), s.Label)
	}
	tw.Flush()
	return exitOK
}

func localTime(rfc string) string {
	t, err := time.Parse(time.RFC3339, rfc)
	if err != nil {
		return rfc
	}
	return t.Local().Format("2006-01-02 15:04")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func levels(s storage.Summary) string {
	return dash(s.LevelList())
}

// cmdImport copies results files (and every .json file in the folders
// given) into the library after validating them, writing its index once a
// batch, however many files there are.
func cmdImport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "kovara-bench import: give one or more results files or folders")
		return exitBadInput
	}
	lib, err := openLibrary()
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench import: %v\n", err)
		return exitFailed
	}
	paths := storage.ImportPaths(fs.Args())
	if len(paths) == 0 {
		fmt.Fprintf(stderr, "kovara-bench import: no .json files in %s\n", strings.Join(fs.Args(), ", "))
		return exitBadInput
	}
	ctx, stop := interruptContext()
	defer stop()
	report, err := lib.ImportFiles(ctx, paths, nil)
	code := exitOK
	for _, f := range report.Files {
		if f.Err != nil {
			fmt.Fprintf(stderr, "kovara-bench import: %v\n", f.Err)
			code = exitFailed
			continue
		}
		fmt.Fprintf(stdout, "imported %s as %s\n", f.Path, f.Summary.ID)
	}
	if len(paths) > 1 {
		fmt.Fprintln(stdout, report.Sentence())
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "kovara-bench import: stopped after %d of %d files; what was imported stays in the library\n", len(report.Files), len(paths))
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "kovara-bench import: %v\n", err)
		return exitFailed
	}
	return code
}
