package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// runMerge runs kovara-bench merge in process.
// runMerge runs kovara-bench merge through the command line's dispatch.
func runMerge(args ...string) (int, string, string) {
	return runCLI(append([]string{"merge"}, args...)...)
}

// Four kovara-bench processes run one plan as shards against one server;
// merge makes one results file of them that validates like any run, and
// refuses what is not one run, saying why.
func TestShardProcessesMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs four shard processes")
	}
	t.Parallel()
	bin := buildBinary(t)
	url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6})
	dir := t.TempDir()
	const n = 4
	start := time.Now().Add(4 * time.Second).UTC().Format(time.RFC3339Nano)
	paths := make([]string, n)
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.json", i+1))
		wg.Go(func() {
			args := append([]string{"run", "--endpoint", url, "--shard", fmt.Sprintf("%d/%d", i+1, n), "--start-at", start,
				"--level-every", "1s", "--quiet", "-o", paths[i]}, smallFlags...)
			cmd := exec.Command(bin, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("shard %d: %v\n%s", i+1, err, stderr.String())
			}
			outs[i] = stdout.String()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// Each shard says its share: at concurrency 4, one user and two of
	// the eight requests; at concurrency 1, shard 1 alone.
	if !strings.Contains(outs[1], "concurrency 4: this shard ran 1 of the 4 users and 2 of the 8 requests (2 succeeded, 0 failed)") ||
		!strings.Contains(outs[1], "concurrency 1: this shard ran 0 of the 1 users and 0 of the 8 requests") ||
		!strings.Contains(outs[0], "concurrency 1: this shard ran 1 of the 1 users and 8 of the 8 requests") {
		t.Errorf("shard 1 said:\n%s\nshard 2 said:\n%s", outs[0], outs[1])
	}
	// A shard alone is not published.
	code, _, stderr := runCLI("validate", paths[0])
	if code != exitFailed || !strings.Contains(stderr, "no run records") || !strings.Contains(stderr, "this file is shard 1 of 4") {
		t.Errorf("validate of a shard: exit %d\n%s", code, stderr)
	}

	merged := filepath.Join(dir, "merged.json")
	code, stdout, stderr := runMerge(append(paths, "-o", merged)...)
	if code != exitOK {
		t.Fatalf("merge: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "TTFT p50") || !strings.Contains(stderr, "merged results written to") || !strings.Contains(stderr, "saved in the library") {
		t.Errorf("merge said:\n%s\n%s", stdout, stderr)
	}
	f := readResults(t, merged)
	if !f.Complete || len(f.Runs) != 2 || f.Local.Merged == nil || f.Local.Merged.Of != n {
		t.Fatalf("merged: complete %v, %d runs, merged %+v", f.Complete, len(f.Runs), f.Local.Merged)
	}
	for i, c := range []int{1, 4} {
		r, s := f.Runs[i], f.Local.Levels[i].Samples
		if r.Concurrency != c || r.Requests != 8 || r.Metrics.RequestsOK != 8 || r.Metrics.TTFTMs.N != 8 || s == nil || s.Slots != c || len(s.Requests) != 8 {
			t.Errorf("level %d: concurrency %d, %d requests, %d ok; samples %v", i+1, r.Concurrency, r.Requests, r.Metrics.RequestsOK, s)
		}
	}
	// validate exits 0 for a file without problems. The only problem a
	// clean merged run may have is a queueing judgement, drawn from the
	// levels' times (a loaded machine can make the simulator look as if it
	// queued): then it exits 1 until the problem is accepted.
	problems := 0
	for _, w := range results.Warnings(f) {
		if w.Severity != results.SeverityProblem {
			continue
		}
		problems++
		if w.Kind != results.WarnQueueing {
			t.Errorf("the merged file has a problem: %s", w.Text)
		}
	}
	if code, _, stderr := runCLI("validate", merged); problems == 0 && code != exitOK || problems > 0 && code != exitFailed {
		t.Errorf("validate of the merged file with %d problems: exit %d\n%s", problems, code, stderr)
	}
	if code, _, stderr := runCLI("validate", "--accept-problems", merged); code != exitOK {
		t.Errorf("validate --accept-problems of the merged file: exit %d\n%s", code, stderr)
	}

	// Refusals: a missing shard; a shard whose conditions differ.
	if code, _, stderr := runMerge(paths[:3]...); code != exitBadInput || !strings.Contains(stderr, "shard 4 of 4 is missing") {
		t.Errorf("merge of three: exit %d\n%s", code, stderr)
	}
	other := readResults(t, paths[1])
	other.Local.Shard.Runs[0].InputTokens = 65
	otherPath := filepath.Join(dir, "other.json")
	if err := writeResults(otherPath, other); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runMerge(paths[0], otherPath, paths[2], paths[3])
	if code != exitBadInput || !strings.Contains(stderr, fmt.Sprintf("shard 2 (%s) differs from shard 1 (%s) in input tokens: 65 against 64", otherPath, paths[0])) {
		t.Errorf("merge of differing shards: exit %d\n%s", code, stderr)
	}
	// An ordinary run is no shard.
	if code, _, stderr := runMerge(merged, paths[0]); code != exitBadInput || !strings.Contains(stderr, merged+" is not a shard file") {
		t.Errorf("merge with a run: exit %d\n%s", code, stderr)
	}
}

// merge's arguments: files are needed, and each must be a results file.
func TestMergeArguments(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"something else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitBadInput, "give the shard files of one run"},
		{[]string{"-o", "x.json"}, exitBadInput, "give the shard files of one run"},
		{[]string{"-h"}, exitOK, "-o"},
		{[]string{"nowhere.json"}, exitBadInput, "nowhere.json"},
		{[]string{bad}, exitBadInput, "bad.json"},
	} {
		code, _, stderr := runMerge(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("merge %v: exit %d, %q; want %d mentioning %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

// run --shard's flags are refused in words before anything is sent.
func TestShardFlagsRefused(t *testing.T) {
	t.Parallel()
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	ep := []string{"run", "--endpoint", "http://127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "5/4", "--start-at", soon, "--level-every", "1m"}, "must be 1 to 4"},
		{[]string{"--start-at", soon}, "give --shard I/N too"},
		{[]string{"--shard", "1/2", "--start-at", "2020-01-01T00:00:00Z", "--level-every", "1m"}, "is already past"},
		{[]string{"--shard", "1/2", "--start-at", soon}, "--level-every"},
		{[]string{"--shard", "1/2", "--start-at", soon, "--level-every", "1m", "--repeat", "2"}, "--repeat and --shard"},
		{[]string{"--shard", "1/2", "--start-at", soon, "--level-every", "1m", "--plan", "stages"}, "Kovara method only"},
		{[]string{"--shard", "1/2", "--start-at", soon, "--level-every", "1m", "--png", "charts"}, "one shard is not a run"},
		{[]string{"--shard", "1/2", "--start-at", soon, "--level-every", "1m", "--users", "3"}, "--users applies to --plan stages"},
	} {
		code, _, stderr := runCLI(append(ep, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}
