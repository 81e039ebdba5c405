package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// TestHistoryKindColumn: History's Kind column, read from the library's
// index as the table shows it, names a settings comparison's run by its
// setting and round, keeps a repeated plan's "run 2 of 3", and says
// briefly when a Kovara run sent its own load instead of the method's
// prompts.
func TestHistoryKindColumn(t *testing.T) {
	t.Parallel()
	lib, err := storage.OpenLibrary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tune := func(setting string, round int) func(*results.File) {
		return func(f *results.File) {
			// As engine.RunTune marks its runs.
			f.Local.Tune = &results.TuneRef{ID: "tune-1", Setting: setting, Round: round, Rounds: 6}
			f.Local.Group = &results.RunGroup{ID: "tune-1-2", Index: round, Of: 6}
		}
	}
	tests := []struct {
		name string
		edit func(*results.File)
		want string
	}{
		{"the method's prompts", func(*results.File) {}, "protocol"},
		{"simulated", func(f *results.File) { f.Local.Simulated = true }, "protocol (sim)"},
		{"a repeated plan's run", func(f *results.File) { f.Local.Group = &results.RunGroup{ID: "g", Index: 2, Of: 3} }, "protocol, run 2 of 3"},
		{"a settings comparison's run", tune("np8", 2), "np8, round 2/6"},
		{"a long setting name", tune("eight slots and flash attention on", 6), "eight slots and flash a…, round 6/6"},
		{"its own load", func(f *results.File) {
			f.Local.Workload = &results.Workload{SharedPrefix: 2000, PrefixGroups: 2, Turns: 3}
		}, "protocol · own load"},
	}
	ids := map[string]string{}
	for i, tt := range tests {
		f := comparetest.Session([]int{1, 4}, func(r *results.Run) { r.RunKind = results.RunKindProtocol })
		f.CreatedAt = time.Date(2026, 1, 2, 3, i, 0, 0, time.UTC).Format(time.RFC3339) // one file each
		tt.edit(f)
		id, err := lib.SaveTuneRun(f) // an ordinary Save for a run of no comparison
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		ids[id] = tt.name
	}
	list, err := lib.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list {
		got[ids[s.ID]] = historyCell(s, 5, nil)
	}
	for _, tt := range tests {
		if got[tt.name] != tt.want {
			t.Errorf("%s: column %q is %q, want %q", tt.name, historyColumns[5], got[tt.name], tt.want)
		}
	}
	if len(list) != len(tests) {
		t.Errorf("the library lists %d runs, want %d: %v", len(list), len(tests), fmt.Sprint(got))
	}
}
