package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/compare/comparetest"
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

// TestCompareNoise: a difference within noise is printed without a mark,
// a change beyond noise with its interval and its mark, and the verdict
// says which run changed in words; runs without raw samples print as
// before, with the sentence that says their differences cannot be told
// from noise. The runs are written to disk from a seeded run of one
// level of 4 users, 40 requests of 8 tokens 4 ms apart
// (comparetest.SynthFile), and its slowed copies: the same samples on
// every machine, so what compare concludes does not wander with the
// machine's load.
func TestCompareNoise(t *testing.T) {
	t.Parallel()
	s := comparetest.Typical(0, 40, 8)
	s.TTFTUs, s.GapUs = 1_000, 4_000
	base := comparetest.SynthFile(1, []int{4}, s)
	dir := t.TempDir()
	write := func(name, created string, f *results.File) string {
		t.Helper()
		f.CreatedAt = created
		data, err := results.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The same run 2 % slower (within noise) and 50 % slower (beyond it):
	// every time stretched alike, so the true change is known.
	slowed := func(factor float64) *results.File {
		f, err := comparetest.Slowed(base, factor)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a := write("a", "2026-01-01T10:00:00Z", base)
	b := write("b", "2026-01-02T10:00:00Z", slowed(1.02))
	c := write("c", "2026-01-03T10:00:00Z", slowed(1.5))

	code, stdout, stderr := runCLI("compare", a, b, c)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	if len(lines) < 3 || lines[0] != "These runs are comparable." || lines[1] != "Run 2 does not differ from the baseline beyond noise." ||
		!strings.HasPrefix(lines[2], "Run 3 is slower at concurrency 4: output tok/s \u221233.3 % (95 % CI \u2212") {
		t.Errorf("verdict:\n%s", stdout)
	}
	var row string
	for _, l := range lines {
		if strings.HasPrefix(l, "4     output tok/s") {
			row = l
		}
	}
	row = strings.TrimSpace(row)
	cells := strings.Fields(row)
	// conc, "output", "tok/s", a's value, b's value and change, c's value
	// and change: no mark between b's change and c's value.
	if len(cells) < 9 || cells[5] != "\u22122.0" || cells[6] != "%" || cells[7] != compareValue(t, c, "output_throughput") ||
		cells[8] != "\u221233.3" || !strings.HasSuffix(row, " %) \u2212") || strings.Count(row, "(") != 1 {
		t.Errorf("output tok/s row %q: want run 2's \u22122.0 %% bare and run 3's \u221233.3 %% with its interval and the worse mark", row)
	}
	if !strings.Contains(stdout, "\nIn brackets after a change: its 95 % CI, shown where the change is beyond noise") {
		t.Errorf("no legend:\n%s", stdout)
	}

	// Saved before samples were kept: today's table and marks, and why.
	bare := func(f *results.File) *results.File {
		for i := range f.Local.Levels {
			f.Local.Levels[i].Samples = nil
		}
		return f
	}
	old := write("old", "2026-01-01T10:00:00Z", bare(slowed(1)))
	oldB := write("oldb", "2026-01-02T10:00:00Z", bare(slowed(1.02)))
	_, stdout, _ = runCLI("compare", old, oldB)
	if want := "These runs are comparable.\nThese runs have no raw samples (saved before raw samples were kept, or imported from a published file, which leaves them out), so their differences cannot be told from noise.\n"; !strings.HasPrefix(stdout, want) {
		t.Errorf("without samples:\n%s\nwant it to start\n%s", stdout, want)
	}
	if !strings.Contains(stdout, "\u22122.0 %\t") && !strings.Contains(stdout, "\u22122.0 %  ") || strings.Contains(stdout, "\u22122.0 % \u2212") || strings.Contains(stdout, "In brackets") {
		t.Errorf("without samples the 2 %% is shown without a mark (no sentence calls it), with no legend:\n%s", stdout)
	}
}

// TestCompareSaysTheOneVerdict: the CLI prints the verdict compare.Compared
// gives, word for word (the app shows the same lines), and marks exactly
// the cells that verdict calls. A run made again like another on the
// same server (seeded levels of 8 users, 100 answers of 16 tokens, one
// gap in a hundred a stall, as a real server's) is "Reproduced" with no
// mark, its ITL p99 "too wide to tell"; the same server 10 % slower is
// "Not reproduced" with a mark on each change it calls.
func TestCompareSaysTheOneVerdict(t *testing.T) {
	t.Parallel()
	s := comparetest.Typical(0, 100, 16)
	s.StallP, s.StallUs = 0.01, 60_000
	dir := t.TempDir()
	orig := comparetest.SynthFile(1, []int{8}, s)
	orig.CreatedAt = "2026-01-01T10:00:00Z"
	again := func(name string, slow float64) string {
		t.Helper()
		s := s
		s.Slow = slow
		f := comparetest.SynthFile(5001, []int{8}, s)
		f.CreatedAt = "2026-01-02T10:00:00Z"
		f.Local.Like = &results.LikeRef{CreatedAt: orig.CreatedAt}
		data, err := results.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	data, err := results.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.json")
	if err := os.WriteFile(first, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		slow   float64
		prefix string
	}{{"the same server", 1, "Reproduced: no metric differs from the original beyond noise."}, {"10 % slower", 1.1, "Not reproduced: "}} {
		t.Run(tc.name, func(t *testing.T) {
			path := again(strings.ReplaceAll(tc.name, " ", "-"), tc.slow)
			code, stdout, stderr := runCLI("compare", first, path)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// Decoded as the CLI decodes them: the files' samples, not the
			// structs in memory.
			v, rows := compare.Compared([]*results.File{readResults(t, first), readResults(t, path)}, nil)
			want := strings.Join(append([]string{v.Sentence()}, v.Changes...), "\n") + "\n"
			if !strings.HasPrefix(stdout, want) || !strings.HasPrefix(v.Changes[0], tc.prefix) {
				t.Errorf("stdout:\n%s\nwant it to begin with the verdict\n%s(its first change beginning %q)", stdout, want, tc.prefix)
			}
			called := 0
			for _, r := range rows {
				if r.Cells[1].Better != 0 {
					called++
				}
			}
			marked := 0
			for _, l := range strings.Split(stdout, "\n") {
				l = strings.TrimRight(l, " ")
				if strings.HasPrefix(l, "8 ") && (strings.HasSuffix(l, " \u2212") || strings.HasSuffix(l, " +")) {
					marked++
				}
				if strings.HasPrefix(l, "8 ") && strings.Contains(l, "ITL p99") && tc.slow == 1 && !strings.HasSuffix(l, "(too wide to tell)") {
					t.Errorf("ITL p99 row %q, want it said too wide to tell", l)
				}
			}
			if marked != called || (tc.slow == 1) != (called == 0) {
				t.Errorf("%d rows marked, the verdict calls %d:\n%s", marked, called, stdout)
			}
		})
	}
}

// compareValue is a run's value of a metric at its first level as the
// table prints it.
func compareValue(t *testing.T, path, id string) string {
	t.Helper()
	m, ok := compare.MetricByID(id)
	if !ok {
		t.Fatal(id)
	}
	v, _ := m.Get(readResults(t, path).Runs[0])
	return compare.FormatValue(m, v)
}
