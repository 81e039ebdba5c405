package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kovara/desktop/storage"
)

// cmdExport writes the document to publish of one run (a results file or
// a library id): the results file without its local section, exactly what
// the app's Export saves and validate prints (results.PublishCheck). A run
// that cannot be published writes nothing; one with problems is written
// only with --accept-problems.
func cmdExport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	out := fs.String("o", "", "where to write the document to publish (- for standard output)")
	accept := fs.Bool("accept-problems", false, "write it even when the run has problems (failed requests, prompt-cache hits, …), having read them")
	// The run may come before or after the flags.
	var run string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		run, args = args[0], args[1:]
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if run == "" && fs.NArg() == 1 {
		run = fs.Arg(0)
	} else if fs.NArg() > 0 || run == "" {
		fmt.Fprintln(stderr, "kovara-bench export: give exactly one run (a results file or an id from kovara-bench history) and -o FILE")
		return exitBadInput
	}
	if *out == "" {
		fmt.Fprintln(stderr, "kovara-bench export: say where to write it with -o FILE (- for standard output)")
		return exitBadInput
	}
	var lib *storage.Library
	data, err := storage.ReadArg(run, &lib, openLibrary)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench export: %v\n", err)
		return exitBadInput
	}
	payload, code := publishCheck(storage.ShortName(run), data, *accept, stderr)
	if code != exitOK {
		if payload != nil {
			fmt.Fprintln(stderr, "kovara-bench export: nothing written")
		}
		return code
	}
	if *out == "-" {
		stdout.Write(payload)
		return exitOK
	}
	if err := storage.WriteFileAtomic(*out, payload, 0o644); err != nil {
		fmt.Fprintf(stderr, "kovara-bench export: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "wrote %s\n", *out)
	return exitOK
}
