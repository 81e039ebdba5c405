package results

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRateRequestFigures(t *testing.T) {
	t.Parallel()
	// Due at 1 s; its slot was busy until 1.3 s; handed to its
	// connection at 1.301 s and sent at 1.302 s; first text at 1.5 s; 11
	// tokens ending at 2.5 s.
	s := &RateSamples{LevelSamples: LevelSamples{StartUs: 0, Slots: 1, Requests: []RequestSample{
		{Slot: 0, StartUs: 0, EndUs: 1_300_000, TTFTUs: 100_000, ChunkCount: 5},
		{Slot: 0, StartUs: 1_302_000, EndUs: 2_500_000, TTFTUs: 198_000, ChunkCount: 11},
	}}, DueUs: []int64{0, 1_000_000}, TriedUs: []int64{0, 1_301_000}}
	q := s.Each()[1]
	tests := []struct {
		name      string
		got, want float64
	}{
		{"latency from the intended send", q.LatencyMs(), 1500},
		{"TTFT from the intended send", q.TTFTMs(), 500},
		{"TPOT", q.TPOTMs(), 100},
		{"wait for a slot", q.QueueMs(), 300},
		{"client's own lateness", q.LatenessMs(), 1},
		{"connecting", q.ConnectMs(), 1},
		{"waited to be sent", q.WaitMs(), 301},
		{"first request's wait", s.Each()[0].QueueMs(), 0},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	slos := []struct {
		slo  *RateSLO
		want bool
	}{
		{nil, true},
		{&RateSLO{TTFTMs: 500}, true},
		{&RateSLO{TTFTMs: 499}, false},
		{&RateSLO{TPOTMs: 100}, true},
		{&RateSLO{TPOTMs: 99}, false},
		{&RateSLO{UserTPS: 10}, true},
		{&RateSLO{UserTPS: 10.1}, false},
	}
	for _, tc := range slos {
		if got := tc.slo.Met(q); got != tc.want {
			t.Errorf("%+v: met %v, want %v", tc.slo, got, tc.want)
		}
	}
	failed := q
	failed.Error = "http_500"
	if (&RateSLO{}).Met(failed) {
		t.Error("a failed request met the service level")
	}
}

func rateDoc() *RateResult {
	d := func(p50, p95 float64) *Dist { return &Dist{N: 32, P50: p50, P95: &p95, Max: p95 * 1.2} }
	r := &RateResult{PlanHeader: RateDoc.Header(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC), "m"), Settings: RateSettings{Sweep: true, Arrival: "poisson", Burstiness: 1, MaxInFlight: 8, Requests: 32,
		SLO: &RateSLO{TTFTMs: 1000}}}
	r.Complete = true
	r.Levels = []RateLevel{
		{Rate: 4, Requests: 32, OK: 32, AchievedRate: 3.9, LatencyMs: d(800, 900), TTFTMs: d(80, 95), TPOTMs: d(5.44, 6), LatenessMs: d(0.1, 0.3), QueueMs: d(0, 0),
			Goodput: &Goodput{Met: 32, Share: 1, Rate: 3.9}, Sustained: true},
		{Rate: 2, Requests: 32, OK: 32, AchievedRate: 2, LatencyMs: d(780, 850), TTFTMs: d(70, 90), TPOTMs: d(5.4, 6), LatenessMs: d(0.1, 0.3), QueueMs: d(0, 0),
			Goodput: &Goodput{Met: 32, Share: 1, Rate: 2}, Sustained: true},
		{Rate: 8, Requests: 32, OK: 30, AchievedRate: 6.1, LatencyMs: d(9000, 12000), TTFTMs: d(7000, 11000), TPOTMs: d(6, 7), LatenessMs: d(20, 40),
			QueueMs: d(6000, 11000), Queued: 28, QueueGrew: true, Goodput: &Goodput{Met: 3, Share: 0.09, Rate: 0.6}, Verdict: "requests queued", Failures: []string{"timeout"}},
	}
	r.Sweep = &RateSweep{Sustainable: 4, Limit: 8, Reason: "requests queued"}
	return r
}

func TestRateTableAndWords(t *testing.T) {
	t.Parallel()
	r := rateDoc()
	tab := r.Table()
	if got, want := len(tab.Rows), 3; got != want {
		t.Fatalf("%d rows, want %d", got, want)
	}
	rows := []struct {
		i    int
		col  string
		want string
	}{
		{0, "Offered\nreq/s", "2"}, // lowest first
		{1, "TPOT p50\nms", "5.4"},
		{2, "Latency p95\nms", "12000"},
		{2, "Goodput\n%", "9"},
		{2, "Goodput\nreq/s", "0.60"},
		{2, "Waited to be\nsent (requests)", "28"},
		{2, "Longest wait\nto be sent ms", "13200"},
		{2, "Client late\np99 ms", Missing}, // too few requests for a p99
		{2, "Client late\nmax ms", "48.0"},
		{2, "OK", "30 / 32"},
		{2, "Kept up", "no"},
		{0, "Waited to be\nsent (requests)", "0"},
		{0, "Goodput\nreq/s", "2.00"},
	}
	for _, tc := range rows {
		c := -1
		for j, h := range tab.Columns {
			if h == tc.col {
				c = j
			}
		}
		if c < 0 {
			t.Fatalf("no column %q", tc.col)
		}
		if got := tab.Rows[tc.i][c]; got != tc.want {
			t.Errorf("row %d, %s: got %q, want %q", tc.i, Flat(tc.col), got, tc.want)
		}
	}
	// Each figure's column holds one number a cell (a spreadsheet reads
	// it as a number), or nothing.
	for _, row := range tab.Rows {
		for j, cell := range row[:len(row)-2] {
			if _, err := strconv.ParseFloat(cell, 64); err != nil && cell != Missing {
				t.Errorf("%s: %q is not a number", Flat(tab.Columns[j]), cell)
			}
		}
	}
	h := r.Headline()
	for _, want := range []string{"kept up with up to 4 req/s; at 8 req/s it did not: requests queued", "from 780 ms at 2 req/s to 9 s at 8 req/s", "Goodput at 8 req/s: 9 % of requests met TTFT ≤ 1 s"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline %q lacks %q", h, want)
		}
	}
	notes := strings.Join(r.Notes(), "\n")
	for _, want := range []string{"could not keep up with 8 req/s; requests waited up to 13.2 s before they were sent", "this machine sent requests late by itself: 48 ms"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if p := r.Problems(); len(p) != 1 || !strings.Contains(p[0], "at 8 req/s, 2 of 32 requests failed (first: timeout)") {
		t.Errorf("problems %q", p)
	}
	if got := len(r.Points(RateLatencyP95)); got != 3 {
		t.Errorf("%d latency p95 points, want 3", got)
	}
}

// TestRateNumber: a rate is said as a plain decimal, never in exponent
// form.
func TestRateNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   float64
		want string
	}{{2, "2"}, {0.5, "0.5"}, {0.01, "0.01"}, {20000, "20000"}, {12345, "12345"}, {10.0 / 3, "3.333"}} {
		if got := RateNumber(tc.in); got != tc.want {
			t.Errorf("RateNumber(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, want := RateName(20000), "20000 req/s"; got != want {
		t.Errorf("RateName(20000) = %q, want %q", got, want)
	}
}

func TestRateNeverPublished(t *testing.T) {
	t.Parallel()
	b, err := MarshalDocument(rateDoc())
	if err != nil {
		t.Fatal(err)
	}
	if why := localOnlyReason(b); !strings.Contains(why, "rate plan result") {
		t.Errorf("local-only reason %q", why)
	}
	back, err := RateDoc.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Publishable || back.Sweep.Limit != 8 {
		t.Errorf("read back: publishable %v, sweep %+v", back.Publishable, back.Sweep)
	}
}
