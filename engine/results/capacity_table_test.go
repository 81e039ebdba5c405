package results

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCapacityTablePartial: a capacity search stopped during a probe
// shows that probe as the table's last row, marked partial and not
// judged, with the requests that ended of those planned, and keeps it
// through the saved document (#35 item 8: the table was empty though
// the state said the partial level was kept).
func TestCapacityTablePartial(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	held := CapacityProbe{Concurrency: 1, Requests: 20, Step: StepDouble, Met: true,
		UserTPSP50: f(50), UserTPSP5: f(45.2), TTFTP95Ms: f(120), OutputTPS: 48}
	partial := CapacityProbe{Concurrency: 2, Requests: 12, Step: StepDouble, Failed: 1,
		UserTPSP50: f(40.1), UserTPSP5: f(38), OutputTPS: 77.25, Partial: true}
	tests := []struct {
		name     string
		probes   []CapacityProbe
		partial  *CapacityProbe
		run      *Run
		rows     [][]string
		headline string // its start
	}{
		{"stopped between probes", []CapacityProbe{held}, nil, nil,
			[][]string{{"1", "double", "20", "0", "50.0", "45.2", "120.0", "48.0", "met"}},
			"Stopped before the search ended"},
		{"stopped in the second probe", []CapacityProbe{held}, &partial, &Run{Concurrency: 2, Requests: 20},
			[][]string{{"1", "double", "20", "0", "50.0", "45.2", "120.0", "48.0", "met"},
				{"2 (partial)", "double", "12 of 20", "1", "40.1", "38.0", Missing, "77.2", "not judged: stopped"}},
			"Stopped before the search ended"},
		{"stopped before a request ended", []CapacityProbe{held}, &CapacityProbe{Concurrency: 2, Step: StepDouble, Partial: true}, &Run{Concurrency: 2, Requests: 20},
			[][]string{{"1", "double", "20", "0", "50.0", "45.2", "120.0", "48.0", "met"},
				{"2 (partial)", "double", "0 of 20", "0", Missing, Missing, Missing, Missing, "not judged: stopped"}},
			"Stopped before the search ended"},
		{"stopped in the first probe", nil, &partial, &Run{Concurrency: 2, Requests: 20},
			[][]string{{"2 (partial)", "double", "12 of 20", "1", "40.1", "38.0", Missing, "77.2", "not judged: stopped"}},
			"Stopped before the first probe finished: the probe at 2 users is kept as partial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &CapacityResult{PlanHeader: CapacityDoc.Header(time.Unix(0, 0), "m"), Probes: tt.probes, Partial: tt.partial,
				Settings: CapacitySettings{UserTPS: 20, TTFTP95Ms: 2000, MaxConcurrency: 8}}
			r.Local.PartialRun = tt.run
			if len(tt.probes) > 0 {
				r.Answer = CapacityAnswer{Capacity: 1, Held: 1}
			}
			data, err := MarshalDocument(r)
			if err != nil {
				t.Fatal(err)
			}
			back, err := CapacityDoc.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []*CapacityResult{r, back} {
				if rows := got.Table().Rows; !slices.EqualFunc(rows, tt.rows, slices.Equal) {
					t.Errorf("rows\n%q\nwant\n%q", rows, tt.rows)
				}
				if h := got.Headline(); !strings.HasPrefix(h, tt.headline) {
					t.Errorf("headline %q: want it to start %q", h, tt.headline)
				}
			}
		})
	}
}
