package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
)

func TestPlanLike(t *testing.T) {
	t.Parallel()
	rec := func(c, in int) results.Run {
		return results.Run{ModelID: "m", InputTokens: in, OutputTokens: 64, Concurrency: c, Requests: 40, Warmup: 3, Seed: 99,
			Environment: results.Environment{TimeoutS: 45}}
	}
	partial := rec(16, 512)
	for _, tc := range []struct {
		name    string
		file    results.File
		levels  []int
		wantErr string
	}{
		{"levels in the order run", results.File{Runs: []results.Run{rec(8, 512), rec(1, 512)}}, []int{8, 1}, ""},
		{"a stopped run's interrupted level too", results.File{Runs: []results.Run{rec(1, 512)}, Local: results.Local{PartialRun: &partial}}, []int{1, 16}, ""},
		{"no level", results.File{}, nil, "no finished level"},
		{"two plans in one file", results.File{Runs: []results.Run{rec(1, 512), rec(8, 1024)}}, nil, "not run with one plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := PlanLike(&tc.file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Concurrency, tc.levels) || p.Model != "m" || p.InputTokens != 512 || p.OutputTokens != 64 ||
				p.Requests != 40 || p.Warmup != 3 || p.Timeout != 45*time.Second || p.FixedSeed || p.Conditions != nil {
				t.Errorf("got %+v, want levels %v and the records' conditions with a fresh seed", p, tc.levels)
			}
		})
	}
}

func TestRepeatGroup(t *testing.T) {
	t.Parallel()
	if got := RepeatGroup(1, time.Now()); len(got) != 1 || got[0] != nil {
		t.Errorf("one run: %v, want no group", got)
	}
	got := RepeatGroup(3, time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC))
	for i, g := range got {
		if g == nil || g.ID != got[0].ID || g.Index != i+1 || g.Of != 3 || !strings.HasPrefix(g.ID, "20261201-230000-") {
			t.Errorf("place %d: %+v, want %d of 3 in one group", i, g, i+1)
		}
	}
	if a, b := RepeatGroup(2, time.Now()), RepeatGroup(2, time.Now()); a[0].ID == b[0].ID {
		t.Errorf("two groups begun together share id %q", a[0].ID)
	}
}
