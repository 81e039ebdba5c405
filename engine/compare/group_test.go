package compare

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
)

// grouped marks files as runs of one repeated plan.
func grouped(id string, files ...*results.File) {
	for i, f := range files {
		f.Local.Group = &results.RunGroup{ID: id, Index: i + 1, Of: len(files)}
	}
}

// shiftedRun is a fresh simulated run moved whole by factor, as a busy
// machine moves a run without anything inside it showing it.
func shiftedRun(t *testing.T, seed uint64, factor float64) *results.File {
	t.Helper()
	f, err := comparetest.Slowed(comparetest.SynthFile(seed, []int{1, 8}, comparetest.Typical(1, 100, 64)), factor)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func changed(rows []Row, id string, run int) (Cell, bool) {
	for _, r := range rows {
		if r.Metric.ID == id && r.Concurrency == 1 {
			return r.Cells[run], r.Cells[run].Noise == BeyondNoise
		}
	}
	return Cell{}, false
}

// Two runs of one repeated plan that came out 12 % apart make a 9 %
// difference of a third run noise, which it is not without them.
func TestRepeatedPlanRaisesTheBar(t *testing.T) {
	t.Parallel()
	a1, a2, b := shiftedRun(t, 1, 1), shiftedRun(t, 2, 1.12), shiftedRun(t, 3, 1.09)
	_, rows := Compared([]*results.File{a1, a2, b}, nil)
	if c, beyond := changed(rows, "per_user_throughput", 2); !beyond {
		t.Fatalf("without a group, a 9 %% slowdown should be called: %+v", c)
	}
	grouped("g1", a1, a2)
	v, rows := Compared([]*results.File{a1, a2, b}, nil)
	if c, beyond := changed(rows, "per_user_throughput", 2); beyond {
		t.Errorf("a 9 %% difference within the repeated plan's 12 %% spread was called a change: %+v", c)
	}
	if got := strings.Join(v.Changes, "\n"); !strings.Contains(got, "Runs 1 and 2 are one repeated plan. The 2 runs of the same plan came out up to") {
		t.Errorf("changes do not say the repeated plan's spread:\n%s", got)
	}
	// The baseline's own repeat is never a change from it.
	for _, r := range rows {
		if c := r.Cells[1]; c.Noise == BeyondNoise || c.Better != 0 {
			t.Errorf("%s at %d: run 2, a repeat of the baseline's plan, judged %v (better %d)", r.Metric.ID, r.Concurrency, c.Noise, c.Better)
		}
	}
}

// Two repeated plans are compared by their runs' means, against the
// spread between each plan's runs.
func TestGroupAgainstGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		factor float64
		want   string
	}{
		{"a real slowdown", 1.5, "output tok/s at 1 \u2212"},
		{"the same setting", 1.0, "no difference beyond noise in output tok/s at 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a1, a2 := shiftedRun(t, 11, 1), shiftedRun(t, 12, 1.03)
			b1, b2 := shiftedRun(t, 13, tc.factor), shiftedRun(t, 14, tc.factor*1.02)
			grouped("a", a1, a2)
			grouped("b", b1, b2)
			v, _ := Compared([]*results.File{a1, a2, b1, b2}, nil)
			got := strings.Join(v.Changes, "\n")
			if !strings.Contains(got, "As groups (mean of each plan's runs, the interval from the spread between them): runs 3 and 4 against runs 1 and 2: ") ||
				!strings.Contains(got, tc.want) {
				t.Errorf("changes lack %q:\n%s", tc.want, got)
			}
			// Run by run the groups are not judged: a whole run's shift
			// is what the groups are for.
			if strings.Contains(got, "Run 3 is") || strings.Contains(got, "Run 4 does not") {
				t.Errorf("two repeated plans were judged run by run:\n%s", got)
			}
		})
	}
}

func TestGroupSpread(t *testing.T) {
	t.Parallel()
	a, b, c := shiftedRun(t, 21, 1), shiftedRun(t, 22, 1.1), shiftedRun(t, 23, 0.95)
	rows := GroupSpread([]*results.File{a, b, c})
	for _, r := range rows {
		if r.Metric.ID == "output_throughput" && r.Concurrency == 1 {
			if r.Runs != 3 || r.Spread < 0.08 || r.Spread > 0.25 || r.Min > r.Mean || r.Max < r.Mean {
				t.Errorf("spread %+v, want 3 runs about 15 %% apart", r)
			}
			return
		}
	}
	t.Fatal("no output tok/s row at 1 user")
}

func TestReproduction(t *testing.T) {
	t.Parallel()
	// Four requests a level bound nothing: neither "Reproduced" nor not.
	tiny := comparetest.Typical(0, 4, 8)
	a := comparetest.SynthFile(35, []int{2}, tiny)
	_, rows := Compared([]*results.File{a, comparetest.SynthFile(36, []int{2}, tiny)}, nil)
	if got, want := Reproduction(rows, 1), "Whether it reproduced cannot be told from noise: "+tooShort+"."; got != want {
		t.Errorf("four requests: %q, want %q", got, want)
	}
	orig := shiftedRun(t, 31, 1)
	for _, tc := range []struct {
		name   string
		again  *results.File
		strip  bool
		prefix string
	}{
		{"the same", shiftedRun(t, 32, 1.01), false, "Reproduced: no metric differs from the original beyond noise."},
		{"a third slower", shiftedRun(t, 33, 1.5), false, "Not reproduced: output tok/s at 1 \u2212"},
		{"published, no samples", shiftedRun(t, 34, 1.01), true, "Whether it reproduced cannot be told from noise: a run has no raw samples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := orig
			if tc.strip {
				o = &results.File{Format: orig.Format, FormatVersion: orig.FormatVersion, CreatedAt: orig.CreatedAt, Complete: true, Runs: orig.Runs}
			}
			_, rows := Compared([]*results.File{o, tc.again}, nil)
			if got := Reproduction(rows, 1); !strings.HasPrefix(got, tc.prefix) {
				t.Errorf("got %q, want it to begin %q", got, tc.prefix)
			}
		})
	}
}

// TestSpreadSentenceNamesTheGroupsRuns: the sentence counts the group's
// runs, and says so when its widest metric came from fewer of them (a
// percentile one run could not give, shown as —): three runs once read
// "The 2 runs of the same plan…" because one had no ITL p50 at 4 users.
func TestSpreadSentenceNamesTheGroupsRuns(t *testing.T) {
	t.Parallel()
	tput, itl := Metrics[0], Metrics[0]
	for _, m := range Metrics {
		switch m.ID {
		case "output_throughput":
			tput = m
		case "itl_p50":
			itl = m
		}
	}
	tests := []struct {
		name string
		rows []SpreadRow
		want string
	}{
		{"every run", []SpreadRow{{Concurrency: 1, Metric: tput, Runs: 3, Min: 90, Max: 110, Mean: 100, Spread: 0.2}},
			"The 3 runs of the same plan came out up to 20.0 % apart (" + tput.Label + " at concurrency 1: "},
		{"two of three", []SpreadRow{{Concurrency: 1, Metric: tput, Runs: 3, Min: 95, Max: 105, Mean: 100, Spread: 0.1},
			{Concurrency: 4, Metric: itl, Runs: 2, Min: 0.1, Max: 0.8, Mean: 0.45, Spread: 1.5}},
			"The 3 runs of the same plan came out up to 150.0 % apart (" + itl.Label + " at concurrency 4, measured by 2 of them: "},
	}
	for _, tt := range tests {
		if got := SpreadSentence(tt.rows); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: got %q, want it to begin %q", tt.name, got, tt.want)
		}
	}
}
