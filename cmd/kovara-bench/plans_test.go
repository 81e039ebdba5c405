package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

func TestRunStagesPrintsWikiBlock(t *testing.T) {
	t.Parallel()
	url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, NaturalStop: func(int64) int { return 1 << 20 }})
	out := filepath.Join(t.TempDir(), "stages.json")
	code, stdout, stderr := runCLI("run", "--plan", "stages", "--quick", "--users", "3", "--endpoint", url, "-o", out, "--spec-decode", "none", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"QUICK RUN", "1 user, code prompt (decode_single)", "cold prefill (prefill_tps)", "3 users at once (decode_agg)",
		"---- wiki block ----", "|decode_single=", "|agg_users=3\n", "|spec_decode=none\n", "|engine_family=vLLM\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.StagesDoc.Decode(data)
	if err != nil || !res.Complete || !res.Quick || res.Users.Users != 3 {
		t.Fatalf("%v %+v", err, res)
	}
	// The publish check refuses it, in words.
	code, _, stderr = runCLI("validate", out)
	if code != exitFailed || !strings.Contains(stderr, "three-stage plan result") {
		t.Errorf("validate: exit %d, %s", code, stderr)
	}
}

func TestRunSpecDecPrintsAcceptance(t *testing.T) {
	t.Parallel()
	url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, SpecDecode: &sim.SpecDecode{DraftTokens: 2, Acceptance: 0.5}})
	out := filepath.Join(t.TempDir(), "specdec.json")
	code, stdout, stderr := runCLI("run", "--plan", "specdec", "--endpoint", url, "--concurrency", "1,2", "--requests", "4", "--output-tokens", "64", "-o", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	lines := strings.Split(stdout, "\n")
	// The heading, how the answers ended, the table.
	if len(lines) < 5 || !strings.Contains(lines[1], "answer") || !strings.Contains(lines[2], "Acceptance") || !strings.Contains(lines[2], "Mean acceptance length tok/step") ||
		!strings.Contains(lines[3], "%") || !strings.Contains(stdout, "not publishable") {
		t.Errorf("stdout:\n%s", stdout)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.SpecDecDoc.Decode(data)
	if err != nil || len(res.Levels) != 2 || res.Levels[0].Requests != 4 || res.Settings.MaxTokens != 64 || res.Levels[1].Spec == nil {
		t.Fatalf("%v %+v", err, res)
	}
	code, _, stderr = runCLI("validate", out)
	if code != exitFailed || !strings.Contains(stderr, "never be published") {
		t.Errorf("validate: exit %d, %s", code, stderr)
	}
}

func TestPlanFlagsRefusedWhereTheyDoNotApply(t *testing.T) {
	t.Parallel()
	// Each is refused for its own reason, said exactly (a reachable
	// address, so no refusal comes from the endpoint instead).
	url := startSim(t, fast())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", "nope"}, `--plan "nope": use kovara, stages, specdec, capacity, context, rate, tune or answers`},
		{[]string{"--plan", "answers", "--concurrency", "4", "--against-model", "x"}, "--concurrency applies to --plan kovara or specdec or tune, not to --plan answers"},
		{[]string{"--against", "http://127.0.0.1:1"}, "--against applies to --plan answers, not to --plan kovara"},
		{[]string{"--quick"}, "--quick applies to --plan stages, not to --plan kovara"},
		{[]string{"--users", "4"}, "--users applies to --plan stages or context, not to --plan kovara"},
		{[]string{"--plan", "stages", "--slo-user-tps", "5"}, "--slo-user-tps applies to --plan kovara or capacity or rate, not to --plan stages"},
		{[]string{"--plan", "capacity", "--slo-tpot", "50"}, "--slo-tpot applies to --plan kovara or rate, not to --plan capacity"},
		{[]string{"--plan", "stages", "--requests", "5"}, "--requests applies to --plan kovara or specdec or rate or tune, not to --plan stages"},
		{[]string{"--plan", "stages", "--users", "0"}, "users"},
		{[]string{"--plan", "specdec", "--quick"}, "--quick applies to --plan stages, not to --plan specdec"},
		{[]string{"--plan", "capacity", "--concurrency", "1,2"}, "--concurrency applies to --plan kovara or specdec or tune, not to --plan capacity"},
		{[]string{"--plan", "stages", "--thinking", "maybe"}, `--thinking "maybe": use off or default`},
		{[]string{"--plan", "stages", "--manifest", "x.yaml"}, "--manifest applies to --plan kovara, not to --plan stages"},
	} {
		args := append([]string{"run", "--endpoint", url, "--quiet"}, tc.args...)
		code, stdout, stderr := runCLI(args...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q and nothing run", tc.args, code, stderr, tc.want)
		}
	}
	if code, _, stderr := runCLI("run", "--plan", "stages"); code != exitBadInput || !strings.Contains(stderr, "--endpoint") {
		t.Errorf("no endpoint: exit %d, %q", code, stderr)
	}
	// An unreachable endpoint is exit 2, said in words.
	code, _, stderr := runCLI("run", "--plan", "stages", "--quick", "--endpoint", "http://127.0.0.1:1", "--quiet")
	if code != exitBadInput || !strings.Contains(stderr, "nothing is listening") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

func TestDemoStages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "demo.json")
	code, stdout, stderr := runCLI("demo", "--plan", "stages", "--quick", "--users", "2", "-o", out, "--quiet")
	if code != exitOK || !strings.Contains(stdout, "SIMULATED") || !strings.Contains(stderr, "built-in simulator") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCompareOtherPlans: kovara-bench compare takes two three-stage
// results, or two speculative-decoding results, and refuses to mix kinds.
func TestCompareOtherPlans(t *testing.T) {
	t.Parallel()
	url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, NaturalStop: func(int64) int { return 1 << 20 },
		SpecDecode: &sim.SpecDecode{DraftTokens: 2, Acceptance: 0.5}})
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		code, _, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", out, "--quiet"}, args...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr:\n%s", name, code, stderr)
		}
		return out
	}
	st1 := run("stages-1.json", "--plan", "stages", "--quick", "--users", "2", "--spec-decode", "none")
	st2 := run("stages-2.json", "--plan", "stages", "--quick", "--users", "2", "--spec-decode", "none")
	sd1 := run("specdec-1.json", "--plan", "specdec", "--concurrency", "1,2", "--requests", "4", "--output-tokens", "32")
	sd2 := run("specdec-2.json", "--plan", "specdec", "--concurrency", "1", "--requests", "4", "--output-tokens", "32")

	code, stdout, stderr := runCLI("compare", st1, st2)
	if code != exitOK || !strings.HasPrefix(stdout, "These three-stage results measured the same thing.") ||
		!strings.Contains(stdout, "decode, code prompt (tok/s)") || !strings.Contains(stdout, "[2] stages-2") ||
		!strings.Contains(stdout, "Each figure here is one measurement") {
		t.Errorf("three-stage compare: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("compare", sd1, sd2)
	if code != exitOK || !strings.HasPrefix(stdout, "These speculative-decoding results measured the same thing.") ||
		!strings.Contains(stdout, "mean acceptance length") || !strings.Contains(stdout, "2     output (tok/s)") {
		t.Errorf("speculative-decoding compare: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr = runCLI("compare", st1, sd1); code != exitBadInput || !strings.Contains(stderr, "one kind") {
		t.Errorf("mixed kinds: exit %d, %s", code, stderr)
	}
}

// TestPrintedTablesAreTheShared: the CLI prints each result kind's table
// from the same definition the app shows (results.Table), every cell of a
// row on that row's line.
func TestPrintedTablesAreTheShared(t *testing.T) {
	t.Parallel()
	tps, gen, width := 88.2, 4, 16
	st := &results.StagesResult{Complete: true, Model: "m", TokenSource: "usage",
		Decode: []results.DecodeStage{{Prompt: "code", CompletionTokens: 1024, MaxTokens: 1024, DecodeTPS: &tps}},
		Users:  &results.UsersStage{Users: 4, Error: "2 of 4 requests failed"},
		GPUs:   &results.StagesGPUs{Source: results.GPUSourceSSH, Cards: []results.GPUCard{{Index: 0, Name: "NVIDIA GeForce RTX 3090", PCIeGenLoad: &gen, PCIeWidthLoad: &width}}}}
	var out strings.Builder
	printStages(&out, st)
	lines := strings.Split(out.String(), "\n")
	tables := append([][]string{}, st.Table().Rows...)
	tables = append(tables, st.GPUs.CardsTable().Rows...)
	for _, row := range tables {
		found := false
		for _, l := range lines {
			all := true
			for _, cell := range row {
				all = all && strings.Contains(l, cell)
			}
			found = found || all
		}
		if !found {
			t.Errorf("no printed line holds the row %q:\n%s", row, out.String())
		}
	}
	if !strings.Contains(out.String(), "GPUs read over ssh:") {
		t.Errorf("the GPU table's heading is missing:\n%s", out.String())
	}
}

// TestEveryPlanHasABuilder: every registered plan but the Kovara method
// (which run.go runs) builds from the flags through its planCLIs entry,
// so --plan takes it — tune and answers too, which also have commands of
// their own.
func TestEveryPlanHasABuilder(t *testing.T) {
	t.Parallel()
	for _, k := range plans.All {
		got, want := planCLIs[k.ID].build != nil, k != plans.KovaraMethod
		if got != want {
			t.Errorf("%s: has a builder %v, want %v", k.ID, got, want)
		}
	}
}
