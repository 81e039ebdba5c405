package main

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// TestKovaraWorkloadFlags: --shared-prefix, --prefix-groups and --turns
// reach the Kovara plan; --prompts stays the rate plan's.
func TestKovaraWorkloadFlags(t *testing.T) {
	t.Parallel()
	f, set := flagsOf(t, "--plan", "kovara", "--shared-prefix", "2000", "--prefix-groups", "3", "--turns", "4")
	if err := checkPlanFlags("kovara", set); err != nil {
		t.Fatal(err)
	}
	p, err := f.plan(set)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Workload, (setup.Workload{SharedPrefix: 2000, PrefixGroups: 3, Turns: 4}); got != want {
		t.Errorf("workload %+v, want %+v", got, want)
	}
	f, set = flagsOf(t, "--plan", "kovara")
	if p, err = f.plan(set); err != nil || p.Workload.Set() {
		t.Errorf("no flags: workload %+v, %v; want the method's prompts", p.Workload, err)
	}
	for _, fl := range []string{"--prompts", "--prompts-skip-bad"} {
		args := []string{"--plan", "kovara", fl}
		if fl == "--prompts" {
			args = append(args, "mine.jsonl")
		}
		_, set := flagsOf(t, args...)
		if err := checkPlanFlags("kovara", set); err == nil || !strings.Contains(err.Error(), fl+" applies to --plan rate") {
			t.Errorf("%s with the Kovara plan: %v", fl, err)
		}
	}
}

// TestKovaraWorkloadPrinted: the CLI's Kovara result says the workload,
// the prefix check and the turns among its notes, and the check's
// headline.
func TestKovaraWorkloadPrinted(t *testing.T) {
	t.Parallel()
	f := &results.File{Complete: true, Runs: []results.Run{{Concurrency: 1, Requests: 8, Metrics: results.Metrics{RequestsOK: 8, TokenCountMethod: results.TokenCountServerUsage}}},
		Local: results.Local{Workload: &results.Workload{SharedPrefix: 400, PrefixGroups: 1, Turns: 2},
			PrefixCheck: &results.PrefixCheck{Pairs: 5, WarmTTFTMs: 20, ColdTTFTMs: 100},
			Levels:      []results.LevelLocal{{Concurrency: 1, ByTurn: []results.TurnFigures{{Turn: 1, Requests: 4, OK: 4}, {Turn: 2, Requests: 4, OK: 4}}}}}}
	var b strings.Builder
	printSummary(&b, f)
	for _, want := range []string{"note: The requests: a shared 400-token system prompt, 2-turn conversations.", "note: The shared prefix alone",
		"note: At concurrency 1, by turn", "With the shared prefix cached, the time to first token was"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the printed result lacks %q:\n%s", want, b.String())
		}
	}
}
