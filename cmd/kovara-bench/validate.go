package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// maxResultsFile bounds what validate reads.
const maxResultsFile = 64 << 20

// cmdValidate prints the publish payload of a results file, or every
// reason it cannot be published.
func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "kovara-bench validate: give exactly one results file")
		return exitBadInput
	}
	path := fs.Arg(0)
	data, err := storage.ReadBounded(path, maxResultsFile, "a results file")
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench validate: %v\n", err)
		return exitBadInput
	}
	payload, reasons := results.PublishCheck(data)
	if len(reasons) > 0 {
		fmt.Fprintf(stderr, "%s cannot be published:\n", path)
		for _, r := range reasons {
			fmt.Fprintf(stderr, "  - %s\n", r)
		}
		return exitFailed
	}
	fmt.Fprintf(stderr, "%s can be published; this is exactly what would be sent:\n", path)
	stdout.Write(payload)
	return exitOK
}
