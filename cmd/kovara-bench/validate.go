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

// cmdValidate prints the published document of a results file (the file
// without its local section), or every reason it cannot be published.
// The file's warnings come first; when one is a problem (failed requests,
// a prompt cache, …) it exits 1 unless --accept-problems says the user has
// read them.
func cmdValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	accept := fs.Bool("accept-problems", false, "exit 0 even when the results file has problems (failed requests, prompt-cache hits, …), having read them")
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
	payload, code := publishCheck(path, data, *accept, stderr)
	if payload != nil {
		stdout.Write(payload)
	}
	return code
}

// publishCheck says on stderr whether the results file data (named name)
// can be published, with its warnings, and returns the document to publish
// — nil when it cannot be — and the exit code: 1 when it cannot, or when
// it has problems the user has not accepted. validate and export share it,
// so they judge a file alike.
func publishCheck(name string, data []byte, accept bool, stderr io.Writer) ([]byte, int) {
	payload, reasons := results.PublishCheck(data)
	var problems []string
	if f, err := results.Decode(data); err == nil {
		var notes []string
		problems, notes = results.Split(results.Warnings(f))
		if len(problems) > 0 {
			fmt.Fprintf(stderr, "%s: %s\n", name, results.Headline(f, results.Warnings(f)))
		}
		for _, p := range problems {
			fmt.Fprintf(stderr, "  problem: %s\n", p)
		}
		for _, n := range notes {
			fmt.Fprintf(stderr, "  note: %s\n", n)
		}
	}
	if len(reasons) > 0 {
		fmt.Fprintf(stderr, "%s cannot be published:\n", name)
		for _, r := range reasons {
			fmt.Fprintf(stderr, "  - %s\n", r)
		}
		return nil, exitFailed
	}
	if len(problems) > 0 && !accept {
		fmt.Fprintf(stderr, "%s can be published only as it is, with the %s above; this is exactly what would be sent (exit 1: pass --accept-problems once you have read them):\n",
			name, results.Plural(len(problems), "problem", "problems"))
		return payload, exitFailed
	}
	fmt.Fprintf(stderr, "%s can be published; this is exactly what would be sent (the run records, never the endpoint's details):\n", name)
	return payload, exitOK
}
