package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

func TestRunCapacity(t *testing.T) {
	t.Parallel()
	// Two slots, 40-token answers of ~2 ms a token: a third user waits
	// about 80 ms for a slot, over the 30 ms ceiling.
	url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6, BatchCapacity: 2})
	out := filepath.Join(t.TempDir(), "capacity.json")
	code, stdout, stderr := runCLI("run", "--plan", "capacity", "--endpoint", url, "--input-tokens", "64", "--output-tokens", "40",
		"--warmup", "2", "--slo-user-tps", "5", "--slo-ttft-p95", "30", "--max-concurrency", "16", "-o", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; last != "capacity: 2 concurrent users (per-user ≥ 5 tok/s, TTFT p95 ≤ 30 ms); 3 missed on TTFT p95" {
		t.Errorf("last line %q", last)
	}
	for _, want := range []string{"conc  ", "per-user tok/s p50", "TTFT p95 ms", "missed: TTFT p95", "  repeat  ",
		"Your server holds 2 people at ≥ 5 tok/s each with TTFT p95 ≤ 30 ms; at 3, TTFT p95 passes 30 ms ("} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.DecodeCapacity(data)
	if err != nil || res.Answer.Capacity != 2 || len(res.Runs) != len(res.Probes) || res.Settings.MaxConcurrency != 16 {
		t.Fatalf("%v %+v", err, res)
	}
	code, _, stderr = runCLI("validate", out)
	if code != exitFailed || !strings.Contains(stderr, "capacity plan result") {
		t.Errorf("validate: exit %d, %s", code, stderr)
	}
}

func TestRunCapacityOneUserMisses(t *testing.T) {
	t.Parallel()
	url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6})
	code, stdout, stderr := runCLI("run", "--plan", "capacity", "--endpoint", url, "--input-tokens", "64", "--output-tokens", "16",
		"--warmup", "0", "--slo-user-tps", "100000", "-o", filepath.Join(t.TempDir(), "c.json"), "--quiet")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitFailed, stderr)
	}
	if !strings.Contains(stdout, "Even one person at a time misses the service level") || !strings.Contains(stdout, "the slowest 5 % got") ||
		!strings.HasSuffix(strings.TrimSpace(stdout), "capacity: 0 concurrent users (per-user ≥ 100000 tok/s, TTFT p95 ≤ 2000 ms); 1 missed on per-user tok/s") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func TestCapacityFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", "capacity", "--concurrency", "1,2"}, "--concurrency does not apply to --plan capacity"},
		{[]string{"--plan", "capacity", "--requests", "50"}, "--requests does not apply to --plan capacity"},
		{[]string{"--slo-user-tps", "10"}, "--slo-user-tps applies to --plan capacity"},
		{[]string{"--plan", "stages", "--max-concurrency", "10"}, "--max-concurrency applies to --plan capacity"},
		{[]string{"--plan", "capacity", "--slo-ttft-p95", "0"}, "the TTFT p95 ceiling 0 ms is not allowed"},
		{[]string{"--plan", "capacity", "--max-concurrency", "0"}, "maximum concurrency 0 is not allowed"},
	} {
		code, _, stderr := runCLI(append([]string{"run", "--endpoint", "http://127.0.0.1:9"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitBadInput, tc.want)
		}
	}
}
