package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

var tuneSmall = []string{"--concurrency", "1,2", "--requests", "4", "--warmup", "1", "--input-tokens", "32", "--output-tokens", "8", "--rounds", "2"}

// The demo compares the simulator's two models: the verdict is the first
// line, every run is in the library labelled with its setting and round,
// and the comparison is one entry of its own.
func TestTuneDemo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tune.json")
	code, stdout, stderr := runCLI(append([]string{"demo", "--plan", "tune", "-o", out}, tuneSmall...)...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.HasPrefix(first, "q8 ") || !strings.Contains(first, "than q4") && !strings.Contains(first, "beyond noise") {
		t.Errorf("first line %q, want the verdict on q8 against q4", first)
	}
	if !strings.Contains(stdout, "Answers at temperature 0: q8 against q4 token by token: same top token ") || !strings.Contains(stdout, "beyond the floor on KL divergence") || !strings.Contains(stdout, "q8's answers differ from q4's in 10 of 10 prompts") {
		t.Errorf("no answers check in:\n%s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := plans.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	res := d.(plans.Tune).Result
	if len(res.Runs) != 4 || !res.Local.Simulated {
		t.Fatalf("%d runs, simulated %v", len(res.Runs), res.Local.Simulated)
	}
	lib, err := openLibrary()
	if err != nil {
		t.Fatal(err)
	}
	list, err := lib.List()
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, s := range list {
		labels[s.ID] = s.Label
	}
	for _, r := range res.Runs {
		want := res.Settings[r.Setting].Name + ", round " + strconv.Itoa(r.Round) + " of 2 (settings comparison)"
		if r.RunID == "" || labels[r.RunID] != want {
			t.Errorf("run %q is labelled %q, want %q", r.RunID, labels[r.RunID], want)
		}
	}
	if !slices.ContainsFunc(list, func(s storage.Summary) bool { return s.Plan == results.PlanTune && s.CreatedAt == res.CreatedAt }) {
		t.Error("the comparison itself is not in the library")
	}
}

// tuneServer is a --setting that starts this test binary as kovara-bench
// simulate on port.
func tuneServer(name, port string, extra ...string) string {
	args := append([]string{"simulate", "--listen", "127.0.0.1:" + port, "--model", "m", "--token-interval", "1ms"}, extra...)
	return name + "=" + cliArgsEnv + "=" + shellwords.Quote(shellwords.Join(args)) + " " + shellwords.Quote(os.Args[0])
}

// Two settings the app starts itself, from --setting (their environment
// before the program, as a shell would take it), and a third whose server
// cannot start: it fails with the server's own words, the others run, and
// the exit code says a setting failed.
func TestTuneCommandSettings(t *testing.T) {
	port := serverproctest.FreePort(t)
	args := []string{"tune", "--endpoint", "http://127.0.0.1:" + port, "--no-answers",
		"--setting", tuneServer("slow", port, "--batch-slowdown", "0.5"),
		"--setting", tuneServer("fast", port),
		"--setting", "broken=" + shellwords.Quote(os.Args[0]) + " --no-such-flag",
	}
	code, stdout, stderr := runCLI(append(args, tuneSmall...)...)
	if code != exitFailed {
		t.Fatalf("exit %d, want 1 (a setting failed)\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "problem: setting broken could not be measured: the server exited before it answered") {
		t.Errorf("the failed setting is not said:\n%s", stdout)
	}
	for _, want := range []string{"round 1 of 2, slow: starting the server", "round 2 of 2, fast: measuring", "round 1 of 2, broken: starting the server"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress does not say %q:\n%s", want, stderr)
		}
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Error("a server still answers after the comparison")
	}
}

// A settings file's commands are shown and asked about before anything
// runs; without a terminal to ask on it is refused until --yes.
func TestTuneFileConfirmed(t *testing.T) {
	port := serverproctest.FreePort(t)
	dir := t.TempDir()
	setting := func(name string) string {
		_, cmd, _ := strings.Cut(tuneServer(name, port), "=")
		return "  - name: " + name + "\n    command: '" + strings.ReplaceAll(cmd, "'", "''") + "'\n"
	}
	text := "endpoint: http://127.0.0.1:" + port + "\nrounds: 1\nanswers: false\nplan:\n  concurrency: [1]\n  requests: 2\n  output_tokens: 8\n  input_tokens: 32\nsettings:\n" + setting("a") + setting("b")
	path := filepath.Join(dir, "tune.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("tune", path)
	if code != exitBadInput || !strings.Contains(stderr, "runs these commands on this machine") || !strings.Contains(stderr, "run again with --yes") {
		t.Fatalf("unconfirmed: exit %d\n%s", code, stderr)
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Fatal("a server runs before the file was confirmed")
	}
	code, stdout, stderr := runCLI("tune", "--yes", path)
	if code != exitOK {
		t.Fatalf("confirmed: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Confirmed once, the same file runs again without asking.
	code, _, stderr = runCLI("tune", path)
	if code != exitOK || strings.Contains(stderr, "runs these commands") {
		t.Fatalf("again: exit %d\n%s", code, stderr)
	}
	// A key the file should not have is refused with its line.
	if err := os.WriteFile(path, []byte(text+"  - name: c\n    modle: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI("tune", "--yes", path)
	if code != exitBadInput || !strings.Contains(stderr, "tune.yaml:15: settings[2].modle: unknown key (did you mean \"model\"?)") {
		t.Fatalf("unknown key: exit %d\n%s", code, stderr)
	}
}

func TestTuneFlagsRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tune", "--setting", "a=x", "--setting", "b=y"}, "give the server with --endpoint"},
		{[]string{"tune", "--endpoint", "http://127.0.0.1:1", "--setting", "nocommand"}, "--setting \"nocommand\": write NAME=COMMAND"},
		{[]string{"tune", "--endpoint", "http://127.0.0.1:1", "--model-setting", "a=m"}, "takes 2 to 8 settings, not 1"},
		{[]string{"run", "--endpoint", "http://127.0.0.1:1", "--rounds", "3"}, "--rounds applies to --plan tune, not to --plan kovara"},
		{[]string{"tune", "--endpoint", "http://127.0.0.1:1", "--model-setting", "a=m", "--model-setting", "b=n", "--seed", "3"}, "--seed applies to --plan kovara or capacity or context or rate, not to --plan tune"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(tt.args...)
		if code != exitBadInput || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, %q; want 2 saying %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestCommandSetting(t *testing.T) {
	t.Parallel()
	s, err := commandSetting("np4=OLLAMA_NUM_PARALLEL=4 OLLAMA_HOST=127.0.0.1:11434 ollama serve")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "np4" || s.Command != "ollama serve" || !slices.Equal(s.Env, []string{"OLLAMA_NUM_PARALLEL=4", "OLLAMA_HOST=127.0.0.1:11434"}) {
		t.Errorf("got %+v", s)
	}
	if _, err := commandSetting("x=llama-server | tee log"); err == nil {
		t.Error("a shell pipe was taken as a command")
	}
}

// The endpoint at one port, where another server answers, and settings
// whose llama-server commands give their own --port (#47): the CLI says
// so in one sentence each before anything starts, and the runs measure
// the commands' servers.
func TestTuneSaysWhereTheCommandListens(t *testing.T) {
	other := fast()
	other.Models = []string{"other"}
	endpoint := startSim(t, other)
	port := serverproctest.FreePort(t)
	llama := filepath.Join(t.TempDir(), "llama-server") // this test binary, by that name
	if err := os.Symlink(os.Args[0], llama); err != nil {
		t.Fatal(err)
	}
	serve := shellwords.Join([]string{"simulate", "--listen", "127.0.0.1:" + port, "--model", "m", "--token-interval", "1ms"})
	setting := func(name string) string {
		return name + "=" + cliArgsEnv + "=" + shellwords.Quote(serve) + " " + shellwords.Join([]string{llama, "-m", "x.gguf", "--port", port})
	}
	args := append([]string{"tune", "--endpoint", endpoint, "--no-answers", "--model", "m", "--setting", setting("A"), "--setting", setting("B")}, tuneSmall...)
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(stderr, "\n")
	ep := strings.TrimPrefix(endpoint, "http://")
	want := []string{
		"The endpoint is " + ep + " but setting A's command listens on 127.0.0.1:" + port + " (its --port): the runs go to " + port + ".",
		"The endpoint is " + ep + " but setting B's command listens on 127.0.0.1:" + port + " (its --port): the runs go to " + port + ".",
	}
	if len(lines) < 3 || !slices.Equal(lines[:2], want) || !strings.HasPrefix(lines[2], "comparing 2 settings") {
		t.Errorf("the output begins %q\nwant %q, then the comparison", lines[:min(3, len(lines))], want)
	}
	if strings.Contains(stdout, "could not be measured") {
		t.Errorf("a setting was not measured:\n%s", stdout)
	}
}
