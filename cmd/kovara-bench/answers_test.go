package main

import (
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
