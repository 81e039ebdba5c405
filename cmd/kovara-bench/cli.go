package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kovara/desktop/engine"
)

// Exit codes (README, "Benchmark your server").
const (
	exitOK          = 0
	exitFailed      = 1 // some stage failed
	exitBadInput    = 2 // bad input or unreachable endpoint
	exitInterrupted = 130
)

const usage = `kovara-bench — benchmark an OpenAI-compatible LLM server with the Kovara method

Usage:
  kovara-bench run --endpoint URL [flags]   benchmark a server
  kovara-bench tune [FILE.yaml] --endpoint URL --setting 'NAME=COMMAND' --setting 'NAME=COMMAND' [--model-setting 'NAME=MODEL'] [--rounds R]
                                            is the server faster with this setting? settings compared in interleaved rounds
  kovara-bench check ENDPOINT               test an endpoint, as the app's Test button does
  kovara-bench answers --endpoint A --against B [--against-model M]
                                            did it change the answers? one setting's answer distribution against another's
  kovara-bench demo                         a full run against the built-in simulator
  kovara-bench simulate --listen ADDR       serve the built-in simulator
  kovara-bench record --upstream URL [--listen ADDR] [-o FILE]
                                            record your own traffic: a proxy your clients use, writing a trace with no text in it
  kovara-bench validate FILE                check a results file for publishing (problems: exit 1 unless --accept-problems)
  kovara-bench export RUN -o FILE           write what would be published (never the endpoint's details)
  kovara-bench history [--model M]          list the runs in the local library
  kovara-bench compare [--baseline N] RUN RUN...
                                            compare runs (files or library ids), against the oldest or the N-th
  kovara-bench report RUN... [--format md|csv|html|jsonl] [-o FILE]
                                            a run, or runs compared, as Markdown, CSV or HTML to share (jsonl: every request, private)
  kovara-bench import FILE|FOLDER...        copy results files into the library
  kovara-bench merge FILE... [-o OUT]       one run from the shard files of a run from several machines (run --shard)
  kovara-bench selftest                     how truthfully this machine measures

Run "kovara-bench COMMAND -h" for a command's flags.
`

// cli runs one command and returns the process exit code.
func cli(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitBadInput
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(rest, stdout, stderr)
	case "tune":
		return cmdTune(rest, stdout, stderr)
	case "check":
		return cmdCheck(rest, stdout, stderr)
	case "answers":
		return cmdAnswers(rest, stdout, stderr)
	case "demo":
		return cmdDemo(rest, stdout, stderr)
	case "record":
		return cmdRecord(rest, stdout, stderr)
	case "simulate":
		return cmdSimulate(rest, stdout, stderr)
	case "validate":
		return cmdValidate(rest, stdout, stderr)
	case "export":
		return cmdExport(rest, stdout, stderr)
	case "history":
		return cmdHistory(rest, stdout, stderr)
	case "compare":
		return cmdCompare(rest, stdout, stderr)
	case "report":
		return cmdReport(rest, stdout, stderr)
	case "import":
		return cmdImport(rest, stdout, stderr)
	case "merge":
		return cmdMerge(rest, stdout, stderr)
	case "selftest":
		return cmdSelftest(rest, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "kovara-bench", versionString())
		return exitOK
	}
	fmt.Fprintf(stderr, "kovara-bench: unknown command %q\n\n%s", cmd, usage)
	return exitBadInput
}

// exitFor is the exit code of a failed run or check: bad input (a plan that
// cannot run, an endpoint that cannot be used) or a stage that failed.
func exitFor(err error) int {
	var pe *engine.PlanError
	var ee *engine.EndpointError
	if errors.As(err, &pe) || errors.As(err, &ee) && ee.Kind != engine.ErrRefused {
		return exitBadInput
	}
	return exitFailed
}

// parseFlags parses a command's flags; it reports -h as exitOK and bad
// flags as exitBadInput, having already printed the reason.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (int, bool) {
	return parseFlagsSaying(fs, args, stderr, nil)
}

// parseFlagsSaying is parseFlags, calling say (when not nil) with a bad
// flag's error after the flag package has said it and the command's help:
// a command's last word on it.
func parseFlagsSaying(fs *flag.FlagSet, args []string, stderr io.Writer, say func(error)) (int, bool) {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		if say != nil {
			say(err)
		}
		return exitBadInput, false
	}
	if fs.NArg() > 0 && fs.Name() != "validate" && fs.Name() != "export" && fs.Name() != "compare" && fs.Name() != "import" && fs.Name() != "check" && fs.Name() != "tune" && fs.Name() != "report" {
		fmt.Fprintf(stderr, "kovara-bench %s: unexpected argument %q\n", fs.Name(), strings.Join(fs.Args(), " "))
		return exitBadInput, false
	}
	return 0, true
}

// interruptContext is cancelled by the first Ctrl-C (or SIGTERM); after
// it, the signals are no longer caught, so a second Ctrl-C kills at once.
func interruptContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}
