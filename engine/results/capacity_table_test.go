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

// TestCapacitySpeedsNote (#47): where a probe's per-user p50 tok/s reads
// above its total tok/s (the real llama-server's 561.6 above 448.2 at one
// user), the first note says why — the two are measured over different
// times — quoting the first such probe; where none does, nothing is said.
func TestCapacitySpeedsNote(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name   string
		probes []CapacityProbe
		want   string // "" for no note
	}{
		{"per-user above the total at one user", []CapacityProbe{
			{Concurrency: 1, Requests: 20, Step: StepDouble, Met: true, UserTPSP50: f(561.6), UserTPSP5: f(445.5), TTFTP95Ms: f(136.3), OutputTPS: 448.2},
			{Concurrency: 2, Requests: 20, Step: StepDouble, Met: true, UserTPSP50: f(279.7), UserTPSP5: f(230.2), TTFTP95Ms: f(247.9), OutputTPS: 458.5}},
			"per-user tok/s is each answer's own pace, from its first token to its last (1000 / TPOT, the time per output token after the first), so it leaves out the wait before the answer and the prompt's prefill; total tok/s is every answer token of the level over its wall time, waits and prefill included: so at 1 user the per-user p50 (561.6 tok/s) is above the total (448.2 tok/s)"},
		{"above at 4 users only", []CapacityProbe{
			{Concurrency: 2, Requests: 20, Step: StepDouble, Met: true, UserTPSP50: f(200), OutputTPS: 380},
			{Concurrency: 4, Requests: 20, Step: StepDouble, Met: true, UserTPSP50: f(489), OutputTPS: 276}},
			"so at 4 users the per-user p50 (489.0 tok/s) is above the total (276.0 tok/s)"},
		{"per-user under the total", []CapacityProbe{
			{Concurrency: 2, Requests: 20, Step: StepDouble, Met: true, UserTPSP50: f(200), OutputTPS: 380}}, ""},
		{"no per-user figure", []CapacityProbe{{Concurrency: 1, Requests: 20, Step: StepDouble, Failed: 20}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &CapacityResult{Probes: tt.probes, Answer: CapacityAnswer{Capacity: 1}}
			r.Complete = true
			_, notes := Split(r.Warnings())
			if tt.want == "" {
				for _, n := range notes {
					if strings.Contains(n, "per-user tok/s is") {
						t.Errorf("note %q where per-user is not above the total", n)
					}
				}
				return
			}
			if len(notes) == 0 || !strings.HasSuffix(notes[0], tt.want) {
				t.Errorf("notes %q\nwant the first to end %q", notes, tt.want)
			}
		})
	}
}
