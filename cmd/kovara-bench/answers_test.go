package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/sim"
)

// TestAnswersCommand: kovara-bench answers says the figures against the
// floor on its first line and exits 0; a server it cannot read exits 1
// with the reason; missing or wrong flags exit 2.
func TestAnswersCommand(t *testing.T) {
	t.Parallel()
	base := startSim(t, sim.Config{Personality: sim.LlamaCpp})
	drifted := startSim(t, sim.Config{Personality: sim.LlamaCpp, Answers: sim.Distribution{Drift: 0.8, DriftSeed: 3}})
	restarts := fast()
	restarts.Answers.ChatRestarts = true
	vllm := startSim(t, restarts)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // the first line's start
		stderr string
	}{
		{"a drifted setting", []string{"answers", "--endpoint", base, "--against", drifted, "--answer-prompts", "2", "--positions", "6", "--quiet"}, exitOK,
			"kovara-sim-8b against kovara-sim-8b: same top token ", ""},
		{"a vLLM that does not continue", []string{"answers", "--endpoint", base, "--against", vllm, "--answer-prompts", "1", "--positions", "2", "--quiet"}, exitFailed,
			"", "the other setting, along the code answer: the server does not continue a final assistant message (it answers it again from its start)"},
		{"no other setting", []string{"answers", "--endpoint", base}, exitBadInput,
			"", "give the other setting: --against ENDPOINT, --against-model MODEL, or both"},
		{"no positions", []string{"answers", "--endpoint", base, "--against", drifted, "--positions", "0"}, exitBadInput,
			"", "--positions and --top must be at least 1, --answer-prompts from 1 to 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(tt.args...)
			if code != tt.code || !strings.HasPrefix(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d\nstdout %q\nstderr %q\nwant exit %d, stdout from %q, stderr with %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
			if tt.code == exitOK && !strings.Contains(stdout, "beyond the floor on KL divergence") {
				t.Errorf("a drift of 0.8 is not called beyond the floor:\n%s", stdout)
			}
		})
	}
}

// TestSimulateAnswersFlags: "kovara-bench simulate --answers-drift"
// serves a model whose distributions are that far from another
// simulator's, read through the chat route, and "--chat-restarts" one
// the answers measurement refuses in one sentence; a negative drift is
// bad input.
func TestSimulateAnswersFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := buildBinary(t)
	serve := func(extra ...string) string {
		cmd := exec.Command(bin, append([]string{"simulate", "--listen", "127.0.0.1:0"}, extra...)...)
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		url, err := sim.ReadServingURL(out)
		if err != nil {
			t.Fatal(err)
		}
		return url
	}
	base, drifted, restarts := serve("--model", "q8"), serve("--model", "q4", "--answers-drift", "0.5"), serve("--chat-restarts")
	small := []string{"--answer-prompts", "1", "--positions", "16", "--quiet"}
	code, stdout, stderr := runCLI(append([]string{"answers", "--endpoint", base, "--against", drifted}, small...)...)
	if code != exitOK || !strings.HasPrefix(stdout, "q4 against q8: ") || !strings.Contains(stdout, "beyond the floor on KL divergence") {
		t.Errorf("a drifted simulator: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = runCLI(append([]string{"answers", "--endpoint", base, "--against", restarts}, small...)...)
	if code != exitFailed || !strings.Contains(stderr, "does not continue a final assistant message") {
		t.Errorf("a simulator that restarts: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := runCLI("simulate", "--answers-drift", "-1"); code != exitBadInput || !strings.Contains(stderr, "--answers-drift is a standard deviation") {
		t.Errorf("a negative drift: exit %d, %s", code, stderr)
	}
}
