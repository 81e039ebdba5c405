package ui

import (
	"testing"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// TestHistoryCellsFailedRun: a run whose requests all failed (0 / 3) is
// marked failed, not "finished", and its best tok/s is "—", nothing
// measured, not "0.0" (#35 item 8); a capacity search stopped before its
// first probe ended shows its partial level and no answer.
func TestHistoryCellsFailedRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		s                    plans.Summary
		levels, best, status string
	}{
		{"0 / 3", plans.Summary{Plan: "kovara", Complete: true, Failed: true, Levels: []int{1}, Problems: []string{"all 3 requests failed"}},
			"1", "—", "failed, 1 problem"},
		{"measured", plans.Summary{Plan: "kovara", Complete: true, Levels: []int{1, 8}, BestOutputTPS: 473.85},
			"1,8", "473.9", "complete"},
		{"capacity", plans.Summary{Plan: "capacity", Complete: true, Levels: []int{1, 2, 4}, BestOutputTPS: 90, Capacity: "2 users"},
			"1,2,4", "90.0", "2 users · complete"},
		{"capacity stopped in its first probe", plans.Summary{Plan: "capacity", Failed: true, PartialLevel: 1, Problems: []string{"stopped"}},
			"1*", "—", "incomplete, 1 problem"},
	}
	for _, tt := range tests {
		s := storage.Summary{ID: "x", Summary: tt.s}
		for col, want := range map[int]string{6: tt.levels, 7: tt.best, 8: tt.status} {
			if got := historyCell(s, col, nil); got != want {
				t.Errorf("%s: column %q is %q, want %q", tt.name, historyColumns[col], got, want)
			}
		}
	}
}

// TestHistoryModelCellIsTheName: a model id that is a file's path (as
// llama-server without --alias reports it) shows its file's name in
// History's Model column, where the folder filled the column at 1024
// wide and the name was cut off; a hub id shows whole.
func TestHistoryModelCellIsTheName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ model, want string }{
		{"/work/servers/models/tiny.gguf", "tiny.gguf"},
		{"Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},
		{"tiny:latest", "tiny:latest"},
	} {
		s := storage.Summary{ID: "x", Summary: plans.Summary{Plan: "kovara", Model: tc.model}}
		if got := historyCell(s, 3, nil); got != tc.want {
			t.Errorf("Model cell of %q is %q, want %q", tc.model, got, tc.want)
		}
	}
}
