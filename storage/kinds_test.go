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

// TestRunNamesTellRunsApart: runs compared together never share a name,
// and what is added says how they differ: the partial one (two runs of a
// model in one minute were both "tiny-llama.gguf 12-07 00:19" in
// Compare), else the seconds, else #n; a name no other run shares is
// RunName's.
func TestRunNamesTellRunsApart(t *testing.T) {
	t.Parallel()
	const model = "/models/tiny-llama.gguf"
	cases := []struct {
		name string
		runs []Run
		want []string
	}{
		{"one partial, one whole, one minute", []Run{
			{Model: model, CreatedAt: "2026-12-07T00:19:03Z", Partial: true},
			{Model: model, CreatedAt: "2026-12-07T00:19:41Z"},
		}, []string{"tiny-llama.gguf 12-07 00:19 (partial)", "tiny-llama.gguf 12-07 00:19"}},
		{"both whole: the seconds", []Run{
			{Model: model, CreatedAt: "2026-12-07T00:19:03Z"},
			{Model: model, CreatedAt: "2026-12-07T00:19:41Z"},
			{Model: model, CreatedAt: "2026-12-07T00:25:00Z"},
		}, []string{"tiny-llama.gguf 12-07 00:19:03", "tiny-llama.gguf 12-07 00:19:41", "tiny-llama.gguf 12-07 00:25"}},
		{"both partial: the seconds, partial kept out", []Run{
			{Model: model, CreatedAt: "2026-12-07T00:19:03Z", Partial: true},
			{Model: model, CreatedAt: "2026-12-07T00:19:41Z", Partial: true},
		}, []string{"tiny-llama.gguf 12-07 00:19:03", "tiny-llama.gguf 12-07 00:19:41"}},
		{"three in one minute, two partial", []Run{
			{Model: model, CreatedAt: "2026-12-07T00:19:03Z", Partial: true},
			{Model: model, CreatedAt: "2026-12-07T00:19:41Z", Partial: true},
			{Model: model, CreatedAt: "2026-12-07T00:19:50Z"},
		}, []string{"tiny-llama.gguf 12-07 00:19:03 (partial)", "tiny-llama.gguf 12-07 00:19:41 (partial)", "tiny-llama.gguf 12-07 00:19"}},
		{"one label twice, the same second", []Run{
			{Label: "baseline", Model: model, CreatedAt: "2026-12-07T00:19:03Z"},
			{Label: "baseline", Model: model, CreatedAt: "2026-12-07T00:19:03Z"},
			{Label: "other", Model: model, CreatedAt: "2026-12-07T00:19:03Z"},
		}, []string{"baseline #1", "baseline #2", "other"}},
		{"one label twice, minutes apart", []Run{
			{Label: "baseline", Model: model, CreatedAt: "2026-12-07T00:19:03Z"},
			{Label: "baseline", Model: model, CreatedAt: "2026-12-07T01:19:03Z"},
		}, []string{"baseline 12-07 00:19:03", "baseline 12-07 01:19:03"}},
		{"no time to tell by", []Run{
			{Model: "m"}, {Model: "m"}, {Model: "m #1"},
		}, []string{"m #2", "m #3", "m #1"}},
	}
	for _, tc := range cases {
		got := RunNames(tc.runs)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		seen := map[string]bool{}
		for _, n := range got {
			if seen[n] {
				t.Errorf("%s: %q twice", tc.name, n)
			}
			seen[n] = true
		}
	}
}
