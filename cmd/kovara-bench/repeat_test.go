package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// --repeat 3 runs the plan three times with fresh prompts, keeps each
// run as one of a group, writes -o beside itself per run and shows the
// spread between them.
func TestRepeatRunsAGroup(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", out, "--repeat", "3"}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	var seeds []int64
	var group string
	for i := 1; i <= 3; i++ {
		f := readResults(t, numbered(out, &results.RunGroup{Index: i}))
		g := f.Local.Group
		if g == nil || g.Index != i || g.Of != 3 || g.ID == "" || (group != "" && g.ID != group) {
			t.Fatalf("run %d group %+v, want %d of 3 in one group", i, g, i)
		}
		group = g.ID
		if slices.Contains(seeds, f.Runs[0].Seed) {
			t.Errorf("run %d reused seed %d: the prompts must be fresh each time", i, f.Runs[0].Seed)
		}
		seeds = append(seeds, f.Runs[0].Seed)
	}
	for _, want := range []string{"run 1 of 3", "run 3 of 3", "Each of the 3 runs takes "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	for _, want := range []string{"The 3 runs of the same plan came out up to", "conc  metric", "output tok/s (tok/s)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRepeatRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--repeat", "0"}, "--repeat 0 is not allowed"},
		{[]string{"--repeat", "11"}, "give 1 to 10 runs"},
		{[]string{"--repeat", "2", "--seed", "5"}, "leave --seed out"},
		{[]string{"--repeat", "2", "--plan", "stages"}, "--repeat runs the Kovara method only"},
		{[]string{"--like", "nowhere.json", "--requests", "5"}, "--like takes the run's own requests"},
		{[]string{"--like", "no-such-run"}, "--like: no-such-run is neither a results file nor a run in the library"},
	} {
		code, _, stderr := runCLI(append([]string{"run", "--endpoint", "http://127.0.0.1:9"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// --like runs the plan a file's records ran, names it in the new run,
// and compares the two.
func TestLikeReproducesARun(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	dir := t.TempDir()
	first := filepath.Join(dir, "first.json")
	if code, _, stderr := runCLI("run", "--endpoint", url, "-o", first, "--concurrency", "2,1", "--requests", "6", "--warmup", "1",
		"--input-tokens", "80", "--output-tokens", "6", "--timeout", "30"); code != exitOK {
		t.Fatalf("first run: exit %d\n%s", code, stderr)
	}
	again := filepath.Join(dir, "again.json")
	code, stdout, stderr := runCLI("run", "--endpoint", url, "--like", first, "-o", again)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "running again like first: model kovara-sim-8b; 80-token prompts, 6-token answers; concurrency 2,1; 6 requests each after 1 warmup; timeout 30s") {
		t.Errorf("stderr does not say the plan:\n%s", stderr)
	}
	orig, f := readResults(t, first), readResults(t, again)
	if f.Local.Like == nil || f.Local.Like.CreatedAt != orig.CreatedAt || f.Local.Like.ID != "" {
		t.Errorf("like %+v, want the first run's created_at %s", f.Local.Like, orig.CreatedAt)
	}
	if len(f.Runs) != 2 || f.Runs[0].Concurrency != 2 || f.Runs[1].Concurrency != 1 {
		t.Fatalf("levels %d, want 2 then 1", len(f.Runs))
	}
	r, o := f.Runs[0], orig.Runs[0]
	if r.InputTokens != o.InputTokens || r.OutputTokens != o.OutputTokens || r.Requests != o.Requests || r.Warmup != o.Warmup ||
		r.Environment.TimeoutS != 30 || r.ModelID != o.ModelID || r.Seed == o.Seed {
		t.Errorf("conditions %+v\nwant those of %+v with a fresh seed", r, o)
	}
	for _, want := range []string{"[1] first", "[2] again 1", "output tok/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the comparison lacks %q:\n%s", want, stdout)
		}
	}
	// Six tiny requests on a loopback simulator may or may not reproduce,
	// or be too few to tell (engine/compare's TestReproduction holds the
	// verdict itself); the verdict is said either way, once: the
	// comparison's own lines say it (run --like printed it a second time).
	said := 0
	for _, line := range strings.Split(stdout, "\n") {
		for _, p := range []string{"Reproduced: ", "Not reproduced: ", "Whether it reproduced cannot be told from noise: "} {
			if strings.HasPrefix(strings.TrimSpace(line), p) {
				said++
			}
		}
	}
	if said != 1 {
		t.Errorf("the reproduction verdict is said %d times, want once:\n%s", said, stdout)
	}
}
