package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/record"
	"github.com/kovara/desktop/storage"
)

// cmdRecord is `kovara-bench record`: the recording proxy (issue #51)
// between a person's clients and their server, writing a trace with no
// text in it until Ctrl-C.
func cmdRecord(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8099", "where the clients connect instead of the server (this machine only, unless another address is given)")
	upstream := fs.String("upstream", "", "the server the requests go on to, like http://127.0.0.1:8080")
	out := fs.String("o", "", "the trace file to append to (default: a new file in the library's traces folder)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if *upstream == "" {
		fmt.Fprintln(stderr, "kovara-bench record: --upstream is the server to record, like --upstream http://127.0.0.1:8080")
		return exitBadInput
	}
	up, err := url.Parse(strings.TrimRight(*upstream, "/"))
	if err != nil || up.Host == "" || (up.Scheme != "http" && up.Scheme != "https") {
		fmt.Fprintf(stderr, "kovara-bench record: --upstream %q should be the server's address, like http://127.0.0.1:8080\n", *upstream)
		return exitBadInput
	}
	path := *out
	if path == "" {
		dirs, err := storage.DefaultDirs()
		if err == nil {
			path, err = storage.NewTracePath(dirs.Data, time.Now())
		}
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench record: %v (give -o FILE)\n", err)
			return exitBadInput
		}
	}
	w, err := trace.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench record: %v\n", err)
		return exitBadInput
	}
	defer w.Close()
	p, err := record.New(record.Options{Upstream: up, Trace: w})
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench record: %v\n", err)
		return exitBadInput
	}
	ctx, stop := interruptContext()
	defer stop()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench record: could not listen on %s: %v\n", *listen, err)
		return exitBadInput
	}
	if words := record.ReachWords(*listen); words != "" {
		fmt.Fprintln(stderr, words)
	}
	fmt.Fprintf(stdout, "Recording: point your clients at http://%s (the requests go on to %s); the trace is %s. Ctrl-C stops.\n", ln.Addr(), up.Redacted(), path)
	done := make(chan error, 1)
	go func() { done <- record.Serve(ctx, ln, p, 5*time.Second) }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	said := int64(0)
	for {
		select {
		case err := <-done:
			n := p.Requests()
			if err != nil {
				fmt.Fprintf(stderr, "kovara-bench record: %v\n", err)
				fmt.Fprintf(stdout, "Recorded %d requests to %s.\n", n, path)
				return exitFailed
			}
			fmt.Fprintf(stdout, "Recorded %d requests to %s.\n", n, path)
			return exitOK
		case <-tick.C:
			if n := p.Requests(); n != said {
				said = n
				fmt.Fprintf(stderr, "%d requests recorded\n", n)
			}
		}
	}
}
