package storage

import (
	"slices"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

func TestParseRunID(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 14, 3, 5, 0, time.UTC)
	id := NewID(at, "Qwen/Qwen3-8B_AWQ")
	got, ok := ParseRunID(id)
	if !ok || !got.Created.Equal(at) || got.Model != "qwen-qwen3-8b-awq" || len(got.Short) != 6 {
		t.Errorf("ParseRunID(%q) = %+v, %v", id, got, ok)
	}
	for _, bad := range []string{"", "results", "20261129-140305", "2026-11-29_x_y", "20261129-140305_model"} {
		if _, ok := ParseRunID(bad); ok {
			t.Errorf("ParseRunID(%q) accepted", bad)
		}
	}
}

func TestRunNames(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"20261129-140305_qwen3-8b_a1b2c3", "qwen3-8b_a1b2c3"},
		{"/home/me/runs/20261129-140305_qwen3-8b_a1b2c3.json", "qwen3-8b_a1b2c3"},
		{"/home/me/runs/my-baseline.json", "my-baseline"},
		{"a-very-long-results-file-name-that-goes-on.json", "a-very-long-results-file…"},
	}
	for _, tc := range cases {
		if got := ShortName(tc.in); got != tc.want {
			t.Errorf("ShortName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := RunName("", "qwen3-8b", "2026-11-29T14:03:05Z"); got != "qwen3-8b 11-29 14:03" {
		t.Errorf("RunName = %q", got)
	}
	if got := RunName("baseline", "qwen3-8b", "2026-11-29T14:03:05Z"); got != "baseline" {
		t.Errorf("RunName with a label = %q", got)
	}
}

// TestCompareOrder: every kind is ordered by its own created_at, the
// oldest first unless a baseline is chosen.
func TestCompareOrder(t *testing.T) {
	t.Parallel()
	docs := []plans.Doc{
		plans.NewStages(&results.StagesResult{CreatedAt: "2026-03-01T00:00:00Z"}),
		plans.NewSpecDec(&results.SpecDecResult{PlanHeader: results.PlanHeader{CreatedAt: "2026-01-01T00:00:00Z"}}),
		plans.Kovara{File: &results.File{CreatedAt: "2026-04-01T00:00:00Z"}},
		plans.NewCapacity(&results.CapacityResult{PlanHeader: results.PlanHeader{CreatedAt: "2026-02-01T00:00:00Z"}}),
	}
	if got, want := CompareOrder(docs, compare.OldestBaseline), []int{1, 3, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("oldest first: %v, want %v", got, want)
	}
	if got, want := CompareOrder(docs, 0), []int{0, 1, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("baseline 0: %v, want %v", got, want)
	}
}
