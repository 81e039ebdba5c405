package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans/planstest"
)

// TestRunCapacity runs the plan from the command line against the
// simulator. What the search concludes there rests on live timing, so
// this holds only what any machine gives: the exit code the saved answer
// calls for, a valid file with a run per probe, and the output being what
// printCapacity and the answer line print for the saved document. The
// words of an answer are TestFinishCapacity's, on a captured document.
func TestRunCapacity(t *testing.T) {
	t.Parallel()
	// Two slots, 40-token answers of ~2 ms a token: a third user waits
	// about 80 ms for a slot, over the 30 ms ceiling, so the search
	// bisects and repeats.
	url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6, BatchCapacity: 2})
	out := filepath.Join(t.TempDir(), "capacity.json")
	code, stdout, stderr := runCLI("run", "--plan", "capacity", "--endpoint", url, "--input-tokens", "64", "--output-tokens", "40",
		"--warmup", "2", "--slo-user-tps", "5", "--slo-ttft-p95", "30", "--max-concurrency", "16", "-o", out, "--quiet")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d and no result file (%v); stderr:\n%s", code, err, stderr)
	}
	res, err := results.CapacityDoc.Decode(data)
	if err != nil || !res.Complete || len(res.Probes) == 0 || len(res.Runs) != len(res.Probes) || res.Settings.MaxConcurrency != 16 {
		t.Fatalf("%v %+v", err, res)
	}
	want := exitOK
	if res.Answer.Capacity == 0 {
		want = exitFailed
	}
	if code != want {
		t.Errorf("exit %d with capacity %d, want %d; stderr:\n%s", code, res.Answer.Capacity, want, stderr)
	}
	var b strings.Builder
	printCapacity(&b, res)
	if got, want := stdout, b.String()+res.AnswerLine()+"\n"; got != want {
		t.Errorf("stdout\n%s\nwant what the saved document prints\n%s", got, want)
	}
	if !strings.Contains(stdout, "Concurrency  ") || !strings.Contains(stderr, "result written to "+out) {
		t.Errorf("stdout lacks the table or stderr the file:\n%s\n%s", stdout, stderr)
	}
	code, _, stderr = runCLI("validate", out)
	if code != exitFailed || !strings.Contains(stderr, "capacity plan result") {
		t.Errorf("validate: exit %d, %s", code, stderr)
	}
}

// TestFinishCapacity: what the command prints and exits with for a
// capacity result, from documents: the real llama-server's search
// (8 users, 9 missing on TTFT p95 on both probes) and a search where one
// user already missed.
func TestFinishCapacity(t *testing.T) {
	t.Parallel()
	llama := planstest.LlamaCapacity(t)
	f := func(v float64) *float64 { return &v }
	none := &results.CapacityResult{
		PlanHeader: results.PlanHeader{Format: results.FormatCapacity, FormatVersion: 1, Complete: true, Model: "tiny-model"},
		Settings:   results.CapacitySettings{UserTPS: 100000, TTFTP95Ms: 2000, InputTokens: 64, OutputTokens: 16, MaxConcurrency: 256},
		Probes: []results.CapacityProbe{{Concurrency: 1, Requests: 20, Step: results.StepDouble, Missed: []string{results.LimitUserTPS},
			UserTPSP50: f(480), UserTPSP5: f(455), TTFTP95Ms: f(4), OutputTPS: 450}},
		Answer: results.CapacityAnswer{MissedAt: 1, Missed: 1, MissedOn: []string{results.LimitUserTPS}},
	}
	for _, tc := range []struct {
		name     string
		r        *results.CapacityResult
		code     int
		headline string // the start of the line before the last
		end      string // and its end
		last     string
		table    []string
	}{
		{"llama-server", llama, exitOK,
			"Your server holds 8 people at ≥ 20 tok/s each with TTFT p95 ≤ 2 s; at 8, the first probe met both limits (TTFT p95 1.06 s",
			"at 9, on the first probe TTFT p95 passes 2 s (2.45 s, 1.2× the ceiling), and on the repeat TTFT p95 passes 2 s (2.32 s, 1.2× the ceiling).",
			"capacity: 8 concurrent users (per-user ≥ 20 tok/s, TTFT p95 ≤ 2000 ms); 9 missed on TTFT p95",
			[]string{"Concurrency  ", "Per-user tok/s p50", "TTFT p95 ms", "missed: TTFT p95", "  repeat  ", "  bisect  "}},
		{"one user misses", none, exitFailed,
			"Even one person at a time misses the service level", "the slowest 5 % got 455.0 tok/s).",
			"capacity: 0 concurrent users (per-user ≥ 100000 tok/s, TTFT p95 ≤ 2000 ms); 1 missed on per-user tok/s",
			[]string{"Concurrency  ", "missed: per-user tok/s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "capacity.json")
			var stdout, stderr strings.Builder
			code := finishCapacity(tc.r, nil, runFlags{output: out}, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			if len(lines) < 2 || lines[len(lines)-1] != tc.last || lines[len(lines)-2] != tc.r.Headline() ||
				!strings.HasPrefix(lines[len(lines)-2], tc.headline) || !strings.HasSuffix(lines[len(lines)-2], tc.end) {
				t.Errorf("stdout ends %q, want the headline (%q … %q) and %q", lines[max(len(lines)-2, 0):], tc.headline, tc.end, tc.last)
			}
			for _, want := range tc.table {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			saved, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := results.CapacityDoc.Decode(saved); err != nil || back.Answer.Capacity != tc.r.Answer.Capacity || len(back.Probes) != len(tc.r.Probes) {
				t.Errorf("saved %v %+v", err, back)
			}
		})
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
		{[]string{"--plan", "capacity", "--concurrency", "1,2"}, "--concurrency applies to --plan kovara or specdec or tune, not to --plan capacity"},
		{[]string{"--plan", "capacity", "--requests", "50"}, "--requests applies to --plan kovara or specdec or rate or tune, not to --plan capacity"},
		{[]string{"--plan", "context", "--slo-user-tps", "10"}, "--slo-user-tps applies to --plan kovara or capacity or rate"},
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

// TestPrintCapacityDisturbed: the CLI prints what the engine says of a
// disturbed search: the disagreement at 3 as a problem before the table,
// the knee as a fall, and the headline quoting both probes at 3.
func TestPrintCapacityDisturbed(t *testing.T) {
	t.Parallel()
	r := planstest.DisturbedCapacity()
	var b strings.Builder
	printCapacity(&b, r)
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got, want := lines[len(lines)-1], r.Headline(); got != want {
		t.Errorf("last line %q, want the headline %q", got, want)
	}
	for _, want := range []string{
		"\n  problem: The two probes at 3 users disagree (per-user p50 26.0 vs 124.0 tok/s, total 70.0 vs 350.0 tok/s, TTFT p95 3.2 s vs 491 ms; one met the service level and one missed it): ",
		"\nthroughput knee: 2 concurrent users; total tokens/s fell 95 % from 2 to 4 users (480.0 to 24.0 tok/s)\n",
		"; at 3, on the first probe TTFT p95 passes 2 s (3.2 s, 1.6× the ceiling), while the repeat met both limits (TTFT p95 491 ms, the slowest 5 % at 110.0 tok/s).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "problem: The two probes") > strings.Index(out, "Concurrency  ") {
		t.Errorf("the disagreement comes after the table:\n%s", out)
	}
}
