package main

import (
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

// TestPlanSeedAndTimeout: the context and rate plans take --seed (the
// prompts' seed, fixed) and --timeout when given and keep their own
// defaults otherwise: without --seed, fresh prompts (and the rate
// plan's schedule keeps its default seed); a seed that is not a number is
// refused.
func TestPlanSeedAndTimeout(t *testing.T) {
	t.Parallel()
	type got struct {
		seed    int64
		fixed   bool
		timeout time.Duration
	}
	builders := map[string]func(f *runFlags, set map[string]bool) (got, error){
		"context": func(f *runFlags, set map[string]bool) (got, error) {
			p, err := f.contextPlan(set)
			return got{p.Seed, p.FixedSeed, p.Timeout}, err
		},
		"rate": func(f *runFlags, set map[string]bool) (got, error) {
			p, err := f.ratePlan(set)
			return got{p.Seed, p.FixedSeed, p.Timeout}, err
		},
	}
	tests := []struct {
		plan string
		args []string
		want got
		err  string
	}{
		{"context", nil, got{0, false, setup.PlanTimeout}, ""},
		{"context", []string{"--seed", "42", "--timeout", "30"}, got{42, true, 30 * time.Second}, ""},
		{"context", []string{"--seed", "x"}, got{}, "--seed"},
		{"rate", nil, got{setup.DefaultSeed, false, setup.PlanTimeout}, ""},
		{"rate", []string{"--seed", "42", "--timeout", "30"}, got{42, true, 30 * time.Second}, ""},
		{"rate", []string{"--seed", "x"}, got{}, "--seed"},
	}
	for _, tc := range tests {
		t.Run(tc.plan+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			f, set := flagsOf(t, tc.args...)
			g, err := builders[tc.plan](&f, set)
			switch {
			case tc.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err = %v, want one naming %s", err, tc.err)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case g != tc.want:
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
		})
	}
}
