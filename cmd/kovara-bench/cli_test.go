package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/sim/simtest"
	"github.com/kovara/desktop/internal/serverproc"
	"github.com/kovara/desktop/internal/shellwords"
)

// cliArgsEnv makes the test binary run the CLI with these arguments.
const cliArgsEnv = "KOVARA_TEST_CLI_ARGS"

// TestMain points the app's folders at a temp folder: tests never touch
// the user's real library.
func TestMain(m *testing.M) {
	serverproc.Supervise()
	if args := os.Getenv(cliArgsEnv); args != "" {
		// This binary as the CLI itself: a server a settings
		// comparison's test starts (kovara-bench simulate).
		words, _ := shellwords.Split(args)
		os.Exit(cli(words, os.Stdout, os.Stderr))
	}
	home, err := os.MkdirTemp("", "kovara-cli-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("KOVARA_DESKTOP_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

var (
	startSim = simtest.Start
	fast     = simtest.Fast
)

// runCLI runs the command in process and returns its exit code and output.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli(args, &out, &errb)
	return code, out.String(), errb.String()
}

func readResults(t *testing.T, path string) *results.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Decode(data)
	if err != nil {
		t.Fatalf("%s does not validate: %v", path, err)
	}
	return f
}

var smallFlags = []string{"--concurrency", "1,4", "--requests", "8", "--warmup", "2", "--input-tokens", "64", "--output-tokens", "8"}

func TestRunWritesFileAndTable(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", out}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"checking endpoint", "This plan takes ", " at the tested speed (", "level 2 of 2", "results written to"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	f := readResults(t, out)
	if !f.Complete || len(f.Runs) != 2 || f.Runs[1].Metrics.RequestsOK != 8 {
		t.Errorf("file complete=%v runs=%d", f.Complete, len(f.Runs))
	}
	// Eight requests a level are too few for the tails: a note says so.
	// Nothing else is said but, maybe, a queueing judgement, drawn from
	// the level's times (a loaded machine can make the simulator look as
	// if it queued), or the note on chunks read together (a busy machine
	// reads the simulator's 2-ms tokens late, several at once: CI beside
	// stress-ng showed it).
	ws := results.Warnings(f)
	var said []string
	for _, w := range ws {
		if w.Kind != results.WarnQueueing && w.Kind != results.WarnMerged {
			said = append(said, w.Text)
		}
	}
	if want := []string{"p95 and p99 are missing at concurrency 1 and 4 (a percentile needs 20 successes for p95 and 100 for p99; the plan asks 8 a level)"}; !slices.Equal(said, want) {
		t.Errorf("the file's warnings %q, want %q", said, want)
	}
	// The summary: the file's problems above the table (a headline, then
	// each), the table, its units line, the file's notes below.
	problems, notes := results.Split(ws)
	var above []string
	if len(problems) > 0 {
		above = append(above, results.Headline(f, ws))
		for _, p := range problems {
			above = append(above, "  problem: "+p)
		}
	}
	var below []string
	for _, n := range notes {
		below = append(below, "note: "+n)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	k := len(above)
	if len(lines) != k+4+len(below) || !slices.Equal(lines[:k], above) || !strings.Contains(lines[k], "TTFT p50") ||
		!strings.HasPrefix(strings.TrimSpace(lines[k+1]), "1 ") || !strings.HasPrefix(strings.TrimSpace(lines[k+2]), "4 ") ||
		!strings.HasPrefix(lines[k+3], "times in ms") || !slices.Equal(lines[k+4:], below) {
		t.Errorf("summary table:\n%s\nwant above it %q, below it %q", stdout, above, below)
	}
}

func TestBadInputExit2(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "--endpoint"},
		{[]string{"run", "--endpoint", "http://h", "--concurrency", "0"}, "concurrency 0"},
		{[]string{"run", "--endpoint", "http://h", "--concurrency", "1,x"}, "not a whole number"},
		{[]string{"run", "--endpoint", "http://h", "--concurrency", "64", "--requests", "10"}, "or more requests per level"},
		{[]string{"run", "--endpoint", "http://h", "--input-tokens", "0"}, "input tokens"},
		{[]string{"run", "--endpoint", "http://h", "--output-tokens", "-5"}, "output tokens"},
		{[]string{"run", "--endpoint", "http://h", "--timeout", "soon"}, "--timeout"},
		{[]string{"run", "--endpoint", "gopher://h"}, "only http://"},
		{[]string{"run", "--endpoint", "http://h", "--bogus"}, "flag provided but not defined"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"validate"}, "exactly one"},
		{[]string{"selftest", "--sim-nice", "-5"}, "--sim-nice must be between 0 and 19"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(tc.args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}

func TestEndpointProblemsInWords(t *testing.T) {
	t.Parallel()
	answer := func(status int, body string) string {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(ts.Close)
		return ts.URL
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	multi := sim.Config{Models: []string{"m-a", "m-b"}}
	tests := []struct {
		name string
		url  string
		args []string
		want string
	}{
		{"unreachable", closedURL, nil, "is the server running"},
		{"401", answer(401, `{"error":{"message":"bad key"}}`), nil, "goes in the environment variable KOVARA_API_KEY (--api-key-env names another)"},
		{"404", answer(404, "nope"), nil, "/v1"},
		{"html", answer(200, "<html><body>hello</body></html>"), nil, "web page"},
		{"not a list", answer(200, `[1,2,3]`), nil, "model list"},
		{"several models", startSim(t, multi), nil, "m-a, m-b"},
		{"model not served", startSim(t, fast()), []string{"--model", "llama"}, `does not serve "llama"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"run", "--endpoint", tc.url, "-o", filepath.Join(t.TempDir(), "r.json")}, tc.args...)
			code, _, stderr := runCLI(args...)
			if code != exitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 mentioning %q", code, stderr, tc.want)
			}
		})
	}
}

func TestDemoSmall(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo.json")
	code, stdout, stderr := runCLI(append([]string{"demo", "-o", out}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f := readResults(t, out)
	if !f.Local.Simulated || !f.Complete || len(f.Runs) != 2 {
		t.Errorf("demo file simulated=%v complete=%v runs=%d", f.Local.Simulated, f.Complete, len(f.Runs))
	}
	if !strings.Contains(stdout, "Output tok/s") {
		t.Errorf("no summary:\n%s", stdout)
	}
	// And validate refuses it, saying why.
	code, _, stderr = runCLI("validate", out)
	if code != exitFailed || !strings.Contains(stderr, "simulator") {
		t.Errorf("validate simulated: exit %d, %s", code, stderr)
	}
}

func TestValidatePrintsPayload(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", out}, smallFlags...)...); code != exitOK {
		t.Fatal(stderr)
	}
	code, stdout, stderr := runCLI("validate", out)
	if code != exitOK {
		t.Fatalf("validate: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"runs"`) || !strings.Contains(stdout, `"manifest": null`) || strings.Contains(stdout, "127.0.0.1") || strings.Contains(stdout, "local") {
		t.Errorf("payload:\n%s", stdout)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildBinary builds kovara-bench once per test run, without cgo.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kovara-bench-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "kovara-bench")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return binPath
}

// TestSimulateServes starts "kovara-bench simulate", asks it for its
// models, and stops it with SIGINT.
func TestSimulateServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := buildBinary(t)
	cmd := exec.Command(bin, "simulate", "--listen", "127.0.0.1:0", "--personality", "llamacpp", "--model", "tiny-1b")
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	url, err := sim.ReadServingURL(out)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"tiny-1b"`) {
		t.Errorf("models: %s", body)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("simulate did not exit cleanly on SIGINT: %v", err)
	}
}

// TestInterruptKeepsFinishedLevels builds the binary, starts a run, sends
// SIGINT during the second level and checks exit 130 and the file.
func TestInterruptKeepsFinishedLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := buildBinary(t)
	cfg := fast()
	cfg.TokenInterval = 5 * time.Millisecond
	url := startSim(t, cfg)
	out := filepath.Join(dir, "r.json")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--endpoint", url, "-o", out, "--concurrency", "2,2",
		"--requests", "40", "--warmup", "0", "--input-tokens", "32", "--output-tokens", "20")
	stderr, _ := cmd.StderrPipe()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "level 2 of 2") {
			time.Sleep(200 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want 130; stderr:\n%s", err, log.String())
	}
	f := readResults(t, out)
	if f.Complete || len(f.Runs) != 1 || f.Local.PartialRun == nil {
		t.Fatalf("complete=%v runs=%d partial=%v", f.Complete, len(f.Runs), f.Local.PartialRun != nil)
	}
	if !strings.Contains(stdout.String(), "interrupted level") {
		t.Errorf("summary should mark the partial level:\n%s", stdout.String())
	}
	code, _, vstderr := runCLI("validate", out)
	if code != exitFailed || !strings.Contains(vstderr, "interrupted") {
		t.Errorf("validate incomplete: exit %d: %s", code, vstderr)
	}
}

// TestRunAgainstLlamaCpp: against a server that closes the connection after
// every answer and keeps a prompt cache (the llamacpp personality), no
// request fails, the summary says what the slots did, and a second run
// with the same --seed warns that its prompts came from the cache while a
// run without --seed does not.
func TestRunAgainstLlamaCpp(t *testing.T) {
	t.Parallel()
	cfg := fast()
	cfg.Personality = sim.LlamaCpp
	url := startSim(t, cfg)
	run := func(extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"run", "--endpoint", url, "-o", filepath.Join(t.TempDir(), "r.json")}, smallFlags...)
		code, stdout, stderr := runCLI(append(args, extra...)...)
		if code != exitOK {
			t.Fatalf("exit %d, stderr:\n%s", code, stderr)
		}
		return stdout, stderr
	}
	stdout, stderr := run("--seed", "11")
	if !strings.Contains(stdout, "The server closed the connection after every answer; each slot reconnected between requests, outside the measured time") {
		t.Errorf("summary lacks the connection note:\n%s", stdout)
	}
	if strings.Contains(stdout+stderr, "prompt cache") {
		t.Errorf("first run warned about the cache:\n%s", stdout)
	}
	// A cache hit is a problem: said above the table, after the state.
	stdout, _ = run("--seed", "11")
	lines := strings.Split(stdout, "\n")
	if len(lines) < 3 || lines[0] != "Finished, with a problem: read it before trusting the figures." ||
		!strings.HasPrefix(lines[1], "  problem: at concurrency ") || !strings.Contains(lines[1], "from its prompt cache") || !strings.Contains(lines[1], "--seed 11") {
		t.Errorf("second run with the same seed:\n%s", stdout)
	}
	if stdout, stderr = run(); strings.Contains(stdout+stderr, "prompt cache") {
		t.Errorf("a run with a fresh seed warned about the cache:\n%s", stdout)
	}
}

// TestCheckSaysWhatTheAppsTestSays: kovara-bench check prints the lines of
// engine.TestEndpoint, the Endpoints screen's Test, and exits 2 when the
// endpoint cannot be reached.
func TestCheckSaysWhatTheAppsTestSays(t *testing.T) {
	t.Parallel()
	cfg := fast()
	cfg.Personality = sim.LlamaCpp
	url := startSim(t, cfg)
	code, stdout, stderr := runCLI("check", url)
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, stdout, stderr)
	}
	want, err := engine.TestEndpoint(context.Background(), setup.Endpoint{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	// The speed is measured again by each Test: its figures differ.
	speed := func(l string) bool { return strings.HasPrefix(l, "Speed: ") }
	want = slices.DeleteFunc(want, speed)
	if got := slices.DeleteFunc(strings.Split(strings.TrimSpace(stdout), "\n"), speed); !slices.Equal(got, want) {
		t.Errorf("check printed\n%s\nthe app's Test says\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range []string{"Engine: llama.cpp", "Streaming chat on kovara-sim-8b: accepted", "Server metrics: llama.cpp /metrics answers", "Speed: ", "the default plan ("} {
		if !strings.Contains(stdout, w) {
			t.Errorf("check lacks %q:\n%s", w, stdout)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	code, stdout, _ = runCLI("check", "--endpoint", "http://"+addr)
	if code != exitBadInput || !strings.HasPrefix(stdout, "Failed: nothing is listening on "+addr) {
		t.Errorf("unreachable: exit %d, %q", code, stdout)
	}
	if code, _, _ := runCLI("check"); code != exitBadInput {
		t.Errorf("no endpoint: exit %d", code)
	}
}
