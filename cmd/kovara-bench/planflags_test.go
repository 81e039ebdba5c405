package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// flagsOf parses run's flags as cmdRun does, with the set it reads.
func flagsOf(t *testing.T, args ...string) (runFlags, map[string]bool) {
	t.Helper()
	var f runFlags
	fs := runCommand.flagSet(&f)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return f, set
}

// TestPlanTimeoutAndThinking: each plan takes --timeout when given and
// keeps its own default otherwise (900 s for the three-stage,
// speculative-decoding and context plans); the three-stage and
// speculative-decoding plans ask the server not to think unless
// --thinking default, and refuse a --thinking they do not know.
func TestPlanTimeoutAndThinking(t *testing.T) {
	t.Parallel()
	type got struct {
		timeout  time.Duration
		thinking bool // the server's own thinking (--thinking default)
	}
	builders := map[string]func(f *runFlags, set map[string]bool) (got, error){
		"stages": func(f *runFlags, set map[string]bool) (got, error) {
			p, err := f.stagesPlan(set)
			return got{p.Timeout, p.ServerThinking}, err
		},
		"specdec": func(f *runFlags, set map[string]bool) (got, error) {
			p, err := f.specDecPlan(set)
			return got{p.Timeout, p.ServerThinking}, err
		},
		"context": func(f *runFlags, set map[string]bool) (got, error) {
			p, err := f.contextPlan(set)
			return got{p.Timeout, false}, err
		},
	}
	tests := []struct {
		name string
		args []string
		want got
		err  string
	}{
		{"defaults", nil, got{setup.PlanTimeout, false}, ""},
		{"--timeout given", []string{"--timeout", "45s"}, got{45 * time.Second, false}, ""},
		{"--timeout refused", []string{"--timeout", "soon"}, got{}, "--timeout"},
	}
	for plan, build := range builders {
		for _, tc := range tests {
			t.Run(plan+" "+tc.name, func(t *testing.T) {
				f, set := flagsOf(t, tc.args...)
				g, err := build(&f, set)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("err %v, want one about %s", err, tc.err)
					}
					return
				}
				if err != nil || g != tc.want {
					t.Errorf("%+v, %v; want %+v", g, err, tc.want)
				}
			})
		}
	}
	for _, plan := range []string{"stages", "specdec"} {
		f, set := flagsOf(t, "--thinking", "default")
		if g, err := builders[plan](&f, set); err != nil || !g.thinking {
			t.Errorf("%s --thinking default: %+v, %v; want the server's own thinking", plan, g, err)
		}
		f, set = flagsOf(t, "--thinking", "maybe")
		if _, err := builders[plan](&f, set); err == nil || !strings.Contains(err.Error(), "--thinking") {
			t.Errorf("%s --thinking maybe: %v, want it refused", plan, err)
		}
	}
}

func TestEngineWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    results.Detection
		want string
	}{
		{results.Detection{Family: results.FamilyLlamaCpp, Version: "b9749"}, "llama.cpp b9749"},
		{results.Detection{Family: results.FamilyVLLM}, "vLLM"},
		{results.Detection{Version: "0.1"}, "not recognised"},
		{results.Detection{}, "not recognised"},
	}
	for _, tc := range tests {
		if got := engineWords(tc.d); got != tc.want {
			t.Errorf("engineWords(%+v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestSetLevels: --concurrency, when given, is the plan's levels; left
// out, the plan keeps its own; refused, it says which flag.
func TestSetLevels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want []int
		err  bool
	}{
		{nil, []int{7}, false},
		{[]string{"--concurrency", "1,4,16"}, []int{1, 4, 16}, false},
		{[]string{"--concurrency", "four"}, nil, true},
	}
	for _, tc := range tests {
		f, set := flagsOf(t, tc.args...)
		levels := []int{7}
		err := f.setLevels(set, &levels)
		if tc.err {
			if err == nil || !strings.Contains(err.Error(), "--concurrency") {
				t.Errorf("%q: %v, want --concurrency refused", tc.args, err)
			}
			continue
		}
		if err != nil || !slices.Equal(levels, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.args, levels, err, tc.want)
		}
	}
	f, set := flagsOf(t, "--concurrency", "2,8")
	if p, err := f.specDecPlan(set); err != nil || !slices.Equal(p.Levels, []int{2, 8}) {
		t.Errorf("specdec --concurrency 2,8: %v, %v", p.Levels, err)
	}
}

// TestCountsOnlyWhenGiven: --requests and --output-tokens set the
// speculative-decoding and context plans' counts only when given; left
// out, each plan keeps its own defaults.
func TestCountsOnlyWhenGiven(t *testing.T) {
	t.Parallel()
	sd, cx := setup.DefaultSpecDecPlan(), setup.DefaultContextPlan()
	tests := []struct {
		args                        []string
		requests, maxTokens, output int
	}{
		{nil, sd.Requests, sd.MaxTokens, cx.OutputTokens},
		{[]string{"--requests", "6", "--output-tokens", "64"}, 6, 64, 64},
	}
	for _, tc := range tests {
		f, set := flagsOf(t, tc.args...)
		p, err := f.specDecPlan(set)
		if err != nil || p.Requests != tc.requests || p.MaxTokens != tc.maxTokens {
			t.Errorf("specdec %q: requests %d, max tokens %d, %v; want %d, %d", tc.args, p.Requests, p.MaxTokens, err, tc.requests, tc.maxTokens)
		}
		c, err := f.contextPlan(set)
		if err != nil || c.OutputTokens != tc.output {
			t.Errorf("context %q: output tokens %d, %v; want %d", tc.args, c.OutputTokens, err, tc.output)
		}
	}
}

// TestWorkloadFlags: --prompts, --prompts-skip-bad, --shared-prefix,
// --prefix-groups and --turns reach the rate plan, and a plan they do
// not apply to refuses them by name.
func TestWorkloadFlags(t *testing.T) {
	t.Parallel()
	f, set := flagsOf(t, "--plan", "rate", "--rate", "2", "--shared-prefix", "2000", "--prefix-groups", "3", "--turns", "10")
	p, err := f.ratePlan(set)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Workload, (setup.Workload{SharedPrefix: 2000, PrefixGroups: 3, Turns: 10}); got != want {
		t.Errorf("workload %+v, want %+v", got, want)
	}
	f, set = flagsOf(t, "--plan", "rate", "--rate", "2", "--prompts", "mine.jsonl", "--prompts-skip-bad")
	if p, err = f.ratePlan(set); err != nil || p.Workload.PromptsFile != "mine.jsonl" || !p.Workload.SkipBad {
		t.Errorf("prompts file: %+v, %v", p.Workload, err)
	}
	f, set = flagsOf(t, "--plan", "rate", "--rate", "2", "--prompts", "mine.jsonl", "--turns", "3")
	if _, err = f.ratePlan(set); err == nil || !strings.Contains(err.Error(), "a prompts file holds whole requests") {
		t.Errorf("a prompts file with turns: %v", err)
	}
	for _, fl := range []string{"--turns", "--shared-prefix", "--prompts"} {
		_, set := flagsOf(t, "--plan", "context", fl, "3")
		if err := checkPlanFlags("context", set); err == nil || !strings.Contains(err.Error(), fl+" applies to --plan ") {
			t.Errorf("%s with the context plan: %v", fl, err)
		}
	}
}
