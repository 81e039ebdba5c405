package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestCompareBaseline: compare puts the older run first as the baseline
// whatever order the runs are given in, --baseline N (the place among the
// runs given, before or after them) makes another the baseline, the
// verdict names the differing requests per level, and a place that is not
// a run is refused in words.
func TestCompareBaseline(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	dir := t.TempDir()
	run := func(name, requests, created string) string {
		t.Helper()
		out := filepath.Join(dir, name+".json")
		args := []string{"run", "--endpoint", url, "-o", out, "--quiet", "--concurrency", "1", "--requests", requests,
			"--warmup", "2", "--input-tokens", "64", "--output-tokens", "8"}
		if code, _, stderr := runCLI(args...); code != exitOK {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		// The runs are made within a second of each other: their times are
		// set to tell which is older.
		f := readResults(t, out)
		f.CreatedAt = created
		data, err := results.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return out
	}
	older := run("older", "12", "2026-01-05T10:00:00Z")
	newer := run("newer", "8", "2026-02-05T10:00:00Z")

	// header is the table's header line; first and second the columns.
	header := func(stdout string) string {
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, "conc") {
				return l
			}
		}
		return ""
	}
	tests := []struct {
		name    string
		args    []string
		columns string // the header's run columns, in order
		caution string
		base    string
	}{
		{"newer given first: the older is the baseline", []string{newer, older},
			"[1] older  [2] newer", "  caution: run 2 measured 8 requests per level, run 1 12: fewer requests make the tails noisier\n",
			"changes are against [1] older, the baseline (the oldest of these runs; --baseline N picks another)"},
		{"older given first", []string{older, newer},
			"[1] older  [2] newer", "  caution: run 2 measured 8 requests per level, run 1 12",
			"changes are against [1] older, the baseline (the oldest"},
		{"--baseline before the runs", []string{"--baseline", "1", newer, older},
			"[1] newer  [2] older", "  caution: run 2 measured 12 requests per level, run 1 8: fewer requests make the tails noisier\n",
			"changes are against [1] newer, the baseline (chosen with --baseline)"},
		{"--baseline after the runs", []string{older, newer, "--baseline", "2"},
			"[1] newer  [2] older", "  caution: run 2 measured 12 requests per level, run 1 8",
			"changes are against [1] newer, the baseline (chosen with --baseline)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(append([]string{"compare"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(stdout, "These runs are comparable on conditions; weigh these differences before trusting the changes.\n") {
				t.Errorf("verdict:\n%s", stdout)
			}
			if got := header(stdout); !strings.Contains(got, tt.columns) {
				t.Errorf("header %q, want the runs as %q", got, tt.columns)
			}
			if !strings.Contains(stdout, tt.caution) || !strings.Contains(stdout, tt.base) {
				t.Errorf("want %q and %q in:\n%s", tt.caution, tt.base, stdout)
			}
		})
	}

	for _, bad := range []string{"3", "-1"} {
		code, stdout, stderr := runCLI("compare", "--baseline", bad, older, newer)
		if want := "--baseline " + bad + " is not one of the runs given: give its place among them, 1 to 2"; code != exitBadInput || !strings.Contains(stderr, want) || stdout != "" {
			t.Errorf("--baseline %s: exit %d, stderr %q, want exit %d and %q", bad, code, stderr, exitBadInput, want)
		}
	}
}
