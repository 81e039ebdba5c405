package ui

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// rateCase is planstest's rate document, clean or failed.
func rateCase(t *testing.T, failed bool) *results.RateResult {
	t.Helper()
	for _, c := range planstest.Cases() {
		if c.Doc.Kind().ID == results.PlanRate && c.Failed == failed {
			return plans.ResultOf[*results.RateResult](c.Doc)
		}
	}
	t.Fatal("planstest has no rate document")
	return nil
}

// TestRateViewShowsTheResult: the rate view says the headline and the
// problems first, what ran and that it is never published, draws
// latency and the achieved rate against the offered rate, and lists the
// shared table with how it was measured under it; a queue that grew is
// said once, not as a note and again as a warning.
func TestRateViewShowsTheResult(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name   string
		result func() *results.RateResult
		charts bool
		wants  []string // in the view's text
	}{
		{"clean", func() *results.RateResult { return rateCase(t, false) }, true,
			[]string{"Median latency from the intended send went from 1.8 s at 2 req/s to 2 s at 4 req/s.", "Given rates: 32 requests at each rate, poisson arrivals, at most 64 in flight",
				"never published", "latency and TTFT are taken from each request's intended send time"}},
		{"failed", func() *results.RateResult { return rateCase(t, true) }, false,
			[]string{"at 4 req/s, 32 of 32 requests failed (first: connection refused)"}},
		{"a queue that grew", func() *results.RateResult {
			r := rateCase(t, false)
			l := &r.Levels[1]
			l.Queued, l.QueueGrew, l.QueueMs, l.Sustained, l.Verdict = 20, true, &results.Dist{N: 32, Max: 12000}, false, "the queue grew"
			r.Settings.SLO = &results.RateSLO{TTFTMs: 500}
			l.Goodput = &results.Goodput{Met: 8, Share: 0.25, Rate: 0.9}
			r.Warnings = append(r.Warnings, l.QueueWords(r.Settings.MaxInFlight))
			return r
		}, true, []string{"requests queued and the queue kept growing", "Goodput against TTFT ≤ 500 ms", "Goodput at 4 req/s: 25 %"}},
	}
	for _, tt := range tests {
		h.locked(func() {
			r := tt.result()
			v := newRateView(h.u, r, "", nil, func() {})
			h.win.SetContent(v.content)
			h.win.Resize(fyne.NewSize(1024, 640))
			d := plans.NewRate(r)
			if got, want := v.headline.Text, d.Headline(); got != want {
				t.Errorf("%s: headline %q, want %q", tt.name, got, want)
			}
			if (v.problems != nil) != (len(d.Problems()) > 0) {
				t.Errorf("%s: problems shown %v, the document has %q", tt.name, v.problems != nil, d.Problems())
			}
			if !slices.EqualFunc(v.rows, d.Table().Rows, slices.Equal) {
				t.Errorf("%s: rows %q, want the shared table's", tt.name, v.rows)
			}
			if got := v.latency.ShowingChart() && v.rates.ShowingChart(); got != tt.charts || len(v.saveAll) != 2 {
				t.Errorf("%s: charts drawn %v (%q, %q), want %v", tt.name, got, v.latency.Text(), v.rates.Text(), tt.charts)
			}
			text := v.headline.Text + "\n" + v.state.Text + "\n" + v.method.Text
			if v.problems != nil {
				text += "\n" + v.problems.Text
			}
			for _, want := range tt.wants {
				if !strings.Contains(text, want) {
					t.Errorf("%s: the view does not say %q:\n%s", tt.name, want, text)
				}
			}
			if strings.Contains(text, "→") {
				t.Errorf("%s: the view says \"→\", which the app's font draws broken", tt.name)
			}
			if n := strings.Count(text, "the queue kept growing"); n > 1 {
				t.Errorf("%s: the queue is said %d times", tt.name, n)
			}
		})
	}
}
