package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// cmdMerge makes one results file of the shard files of a run measured
// from several client machines (engine.Merge, docs/distributed.md): saved
// in the library like any run, with a copy at -o, and its summary
// printed. Shards that cannot be merged are refused with every reason.
func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also write the merged results file here (it is always saved in the library)")
	// The files may come before, between or after the flags.
	var paths []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitBadInput
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "kovara-bench merge: give the shard files of one run (every kovara-bench run --shard I/N file), e.g. kovara-bench merge shard-*.json -o merged.json")
		return exitBadInput
	}
	files := make([]*results.File, 0, len(paths))
	names := make([]string, 0, len(paths))
	for _, p := range paths {
		data, err := storage.ReadBounded(p, maxResultsFile, "a results file")
		if err == nil {
			var f *results.File
			if f, err = results.Decode(data); err == nil {
				files = append(files, f)
				names = append(names, p)
				continue
			}
		}
		fmt.Fprintf(stderr, "kovara-bench merge: %s: %v\n", p, err)
		return exitBadInput
	}
	merged, err := engine.Merge(files, names)
	if err != nil {
		fmt.Fprintln(stderr, "kovara-bench merge: the shards cannot be merged:")
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "  - %s\n", line)
		}
		return exitBadInput
	}
	printSummary(stdout, merged)
	saved := false
	if lib, err := openLibrary(); err != nil {
		fmt.Fprintf(stderr, "warning: the results library cannot be used (%v); the merged results go to a file instead\n", err)
	} else if id, err := lib.Save("", merged); err != nil {
		fmt.Fprintf(stderr, "kovara-bench merge: could not save into the library: %v\n", err)
	} else {
		saved = true
		fmt.Fprintf(stderr, "saved in the library as %s (%s)\n", id, lib.Path(id))
	}
	path := *out
	if path == "" && !saved {
		path = "kovara-merged-" + time.Now().Format("20060102-150405") + ".json"
	}
	if path != "" {
		if err := writeResults(path, merged); err != nil {
			fmt.Fprintf(stderr, "kovara-bench merge: could not write the merged file: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stderr, "merged results written to %s\n", path)
	}
	return exitOK
}
