package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestGoodputRows: Compare shows goodput rows when the runs had one
// service level, each level's share and rate from local, never when
// none had one or their service levels differ.
func TestGoodputRows(t *testing.T) {
	t.Parallel()
	withGoodput := func(slo *results.RateSLO, share, rate float64) *results.File {
		f := session([]int{1, 8})
		f.Local.SLO = slo
		for _, c := range []int{1, 8} {
			f.Local.Levels = append(f.Local.Levels, results.LevelLocal{Concurrency: c, Goodput: &results.Goodput{Met: 1, Share: share, Rate: rate * float64(c)}})
		}
		return f
	}
	slo := &results.RateSLO{TTFTMs: 500}
	tests := []struct {
		name  string
		files []*results.File
		rows  int
	}{
		{"no service level", []*results.File{session([]int{1, 8}), session([]int{1, 8})}, 0},
		{"the same service level", []*results.File{withGoodput(slo, 0.9, 1), withGoodput(&results.RateSLO{TTFTMs: 500}, 0.6, 2)}, 4},
		{"one run without", []*results.File{withGoodput(slo, 0.9, 1), session([]int{1, 8})}, 4},
		{"different service levels", []*results.File{withGoodput(slo, 0.9, 1), withGoodput(&results.RateSLO{TTFTMs: 800}, 0.6, 2)}, 0},
	}
	for _, tt := range tests {
		var got []Row
		for _, r := range Table(tt.files, nil) {
			if r.Metric.ID == "goodput_share" || r.Metric.ID == "goodput_rate" {
				got = append(got, r)
			}
		}
		if len(got) != tt.rows {
			t.Errorf("%s: %d goodput rows, want %d", tt.name, len(got), tt.rows)
			continue
		}
		if tt.name != "the same service level" {
			continue
		}
		// Level 1's share: 90 % then 60 %.
		if c := got[0].Cells; got[0].Metric.ID != "goodput_share" || got[0].Concurrency != 1 || c[0].Value != 90 || c[1].Value != 60 || c[1].Delta > -0.33 || c[1].Delta < -0.34 {
			t.Errorf("%s: first row %s at %d: %+v", tt.name, got[0].Metric.ID, got[0].Concurrency, c)
		}
		if c := got[3].Cells; got[3].Metric.ID != "goodput_rate" || got[3].Concurrency != 8 || c[0].Value != 8 || c[1].Value != 16 {
			t.Errorf("%s: last row %s at %d: %+v", tt.name, got[3].Metric.ID, got[3].Concurrency, c)
		}
	}
}
