// Package simtest starts the built-in simulator for the tests of the
// packages above the engine (the CLI, the app), so each starts it the
// same way.
package simtest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/internal/shellwords"
)

// Start serves the simulator with cfg on a loopback port until the test
// ends, and returns its base URL.
func Start(t testing.TB, cfg sim.Config) string {
	t.Helper()
	srv, url, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return url
}

// Fast is a simulator that answers at once (a token a millisecond, a
// million prompt tokens a second), for tests that count requests and
// outcomes, not speed.
func Fast() sim.Config { return sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6} }

// StandIn makes this test binary a server that a settings comparison
// starts, when the environment variable env says so ("ADDR,PIDFILE"): it
// writes its pid to PIDFILE, serves a fast simulator of the model "m" on
// ADDR until it is sent SIGTERM or interrupted, and exits. Otherwise it
// returns at once. It goes first in TestMain, after serverproc.Supervise.
func StandIn(env string) {
	mode := os.Getenv(env)
	if mode == "" {
		return
	}
	addr, pidfile, _ := strings.Cut(mode, ",")
	_ = os.WriteFile(pidfile, []byte(strconv.Itoa(os.Getpid())), 0o600)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg := sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 1e5, Models: []string{"m"}}
	srv, _, err := sim.Start(cfg, addr)
	if err != nil {
		fmt.Println("cannot listen:", err)
		os.Exit(1)
	}
	<-ctx.Done()
	srv.Close()
	os.Exit(0)
}

// StandInCommand is the command line that starts this test binary as
// StandIn (env) on the loopback port, its pid written to pidfile.
func StandInCommand(env, port, pidfile string) string {
	return env + "=" + shellwords.Quote("127.0.0.1:"+port+","+pidfile) + " " + shellwords.Quote(os.Args[0])
}
