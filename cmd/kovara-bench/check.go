package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/hw"
)

// cmdCheck is the app's endpoint Test from a terminal: the model list, the
// engine, what a streaming chat request was accepted with, the server's
// /metrics and the GPU source, in the same words (engine.TestEndpoint).
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var f runFlags
	fs.StringVar(&f.endpoint, "endpoint", "", "a saved endpoint's name, or the server's address (or give it as the argument)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "KOVARA_API_KEY", "environment variable that holds the API key")
	fs.BoolVar(&f.insecure, "insecure", false, "accept a self-signed or otherwise unverified https certificate")
	fs.StringVar(&f.gpu, "gpu", "", "GPU telemetry: local, ssh://user@host or http://host:9400/metrics (a saved endpoint's own source otherwise)")
	fs.StringVar(&f.wall, "wall", "", wallUsage)
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	switch {
	case fs.NArg() == 1 && f.endpoint == "":
		f.endpoint = fs.Arg(0)
	case fs.NArg() > 1 || (fs.NArg() == 1 && f.endpoint != ""):
		fmt.Fprintf(stderr, "kovara-bench check: give one endpoint, not %q\n", strings.Join(fs.Args(), " "))
		return exitBadInput
	case f.endpoint == "":
		fmt.Fprintln(stderr, "kovara-bench check: give the server, e.g. kovara-bench check http://192.168.1.10:8000, or the name of a saved endpoint")
		return exitBadInput
	}
	if _, err := hw.ParseSource(f.gpu); err != nil {
		fmt.Fprintf(stderr, "kovara-bench check: --gpu: %v\n", err)
		return exitBadInput
	}
	if err := f.checkWall(); err != nil {
		fmt.Fprintf(stderr, "kovara-bench check: %v\n", err)
		return exitBadInput
	}
	ep, err := f.resolveEndpoint(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench check: %v\n", err)
		return exitBadInput
	}
	ctx, stop := interruptContext()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	lines, err := engine.TestEndpoint(ctx, ep)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	if err != nil {
		return exitFor(err)
	}
	return exitOK
}
