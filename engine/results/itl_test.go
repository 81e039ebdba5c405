package results

import (
	"slices"
	"strings"
	"testing"
)

// TestITLFromMergedChunks: an ITL percentile that is chunks read
// together (0.0 ms) is shown as Missing in the table, with a note that
// says which and why, never as a number; a measured one stays.
func TestITLFromMergedChunks(t *testing.T) {
	t.Parallel()
	f, err := Decode(readFixture(t, "hardware.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Runs[0].Metrics.ITLMs.P50 = 0
	f.Runs[1].Metrics.ITLMs.P50 = 0.01
	measured := f.Runs[0].Metrics.ITLMs.P95
	tab := ResultTable(f)
	col := slices.Index(tab.Columns, "ITL p50\nms")
	for i, row := range tab.Rows[:2] {
		if got := row[col]; got != Missing {
			t.Errorf("level %d: ITL p50 cell %q, want %q", i, got, Missing)
		}
		if got := row[col+1]; got == Missing && measured != nil {
			t.Errorf("level %d: ITL p95 blanked too", i)
		}
	}
	_, notes := Split(Warnings(f))
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "ITL p50 at concurrency 1 and 8: shown as "+Missing) {
		t.Errorf("no note says why ITL p50 is %s:\n%s", Missing, joined)
	}
	if _, ok := ITLAt(f.Runs[0].Metrics.ITLMs, 50); ok {
		t.Error("ITLAt took 0 ms for a measured ITL")
	}
	if v, ok := ITLAt(f.Runs[0].Metrics.ITLMs, 95); !ok || v <= 0 {
		t.Errorf("ITLAt p95 = %v, %v; want the measured value", v, ok)
	}
}
