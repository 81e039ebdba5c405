package compare

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestMetricTable(t *testing.T) {
	units := map[string]bool{"tok/s": true, "req/s": true, "ms": true, "%": true, "tok": true, "nats": true, "": true}
	seen := map[string]bool{}
	for _, m := range Metrics {
		if m.ID == "" || m.Label == "" {
			t.Errorf("metric %+v lacks an ID or a label", m)
		}
		if seen[m.ID] {
			t.Errorf("metric ID %q is used twice", m.ID)
		}
		seen[m.ID] = true
		if m.Dir != HigherBetter && m.Dir != LowerBetter && m.Dir != Neutral {
			t.Errorf("metric %q has no direction (%v)", m.ID, m.Dir)
		}
		if !units[m.Unit] {
			t.Errorf("metric %q has unit %q that FormatValue does not know", m.ID, m.Unit)
		}
		if m.Get == nil {
			t.Errorf("metric %q cannot be read", m.ID)
			continue
		}
		if _, ok := m.Get(baseRun(8)); !ok {
			t.Errorf("metric %q is missing from a full record", m.ID)
		}
	}

	dirs := map[string]Direction{
		"output_throughput":   HigherBetter,
		"per_user_throughput": HigherBetter,
		"request_throughput":  HigherBetter,
		"ttft_p50":            LowerBetter,
		"ttft_p95":            LowerBetter,
		"ttft_p99":            LowerBetter,
		"itl_p50":             LowerBetter,
		"itl_p95":             LowerBetter,
		"itl_p99":             LowerBetter,
		"latency_p50":         LowerBetter,
		"latency_p99":         LowerBetter,
		"tpot_p50":            LowerBetter,
		"requests_ok":         Neutral,
		"error_rate":          LowerBetter,
		"output_tokens_mean":  Neutral,
	}
	for id, want := range dirs {
		m, ok := MetricByID(id)
		if !ok {
			t.Errorf("metric %q is not in the table", id)
			continue
		}
		if m.Dir != want {
			t.Errorf("%s: direction %v, want %v", id, m.Dir, want)
		}
	}
	if _, ok := MetricByID("no_such_metric"); ok {
		t.Error("MetricByID found a metric that does not exist")
	}
	if got := Direction(0).String(); got != "Direction(0)" {
		t.Errorf("zero Direction prints %q", got)
	}
}

func TestMetricGetters(t *testing.T) {
	r := baseRun(8)
	r.Metrics.RequestsOK, r.Metrics.RequestsError, r.Metrics.RequestsTimeout = 95, 3, 2
	r.Metrics.ITLMs.P99 = nil // from fewer than 100 gaps
	tests := []struct {
		id   string
		run  results.Run
		want float64
		ok   bool
	}{
		{"output_throughput", r, 512, true},
		{"request_throughput", r, 2, true},
		{"ttft_p50", r, 200, true},
		{"ttft_p95", r, 300, true},
		{"ttft_p99", r, 400, true},
		{"itl_p95", r, 30, true},
		{"itl_p99", r, 0, false},
		{"latency_p50", r, 7900, true},
		{"latency_p99", r, 9500, true},
		{"tpot_p50", r, 30, true},
		{"requests_ok", r, 95, true},
		{"error_rate", r, 5, true},
		{"output_tokens_mean", r, 256, true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			m, _ := MetricByID(tt.id)
			got, ok := m.Get(tt.run)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Get = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}

	// A level with nothing measured: throughputs and the error rate are
	// gaps, not zeros; the ok count is a real zero.
	none := baseRun(8)
	none.Metrics = results.Metrics{TokenCountMethod: results.TokenCountServerUsage}
	for _, m := range Metrics {
		v, ok := m.Get(none)
		if m.ID == "requests_ok" {
			if !ok || v != 0 {
				t.Errorf("requests_ok = %v, %v; want 0, true", v, ok)
			}
			continue
		}
		if ok {
			t.Errorf("%s = %v on an empty level, want a gap", m.ID, v)
		}
	}
}

func TestPerUserThroughput(t *testing.T) {
	withLatency := func(tokens *float64, lat *results.Dist) results.Run {
		r := baseRun(8)
		r.Metrics.OutputTokensMean = tokens
		r.Metrics.LatencyMs = lat
		return r
	}
	tests := []struct {
		name string
		run  results.Run
		want float64
		ok   bool
	}{
		// 256 tokens in 8 s of request time: 32 tok/s.
		{"full answers", withLatency(ptr(256.0), dist(100, 8000, 7900, 9000, 9500)), 32, true},
		// 250.5 tokens in 12.525 s: 20 tok/s.
		{"short answers", withLatency(ptr(250.5), dist(100, 12525, 12000, -1, -1)), 20, true},
		// 1 token in 0.25 s: 4 tok/s (TTFT counts: the user waited for it).
		{"one token", withLatency(ptr(1.0), dist(10, 250, 250, -1, -1)), 4, true},
		{"no token mean", withLatency(nil, dist(100, 8000, 7900, 9000, 9500)), 0, false},
		{"no latency", withLatency(ptr(256.0), nil), 0, false},
		{"zero latency", withLatency(ptr(256.0), dist(1, 0, 0, -1, -1)), 0, false},
		{"empty sample", withLatency(ptr(256.0), &results.Dist{}), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := PerUserThroughput(tt.run)
			if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("PerUserThroughput = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestPerUserLittlesLaw holds the definition against the closed loop it
// describes: 8 slots, each request 256 tokens in exactly 4 s, 80 requests
// back to back take 40 s, so the total is 80·256/40 = 512 tok/s and each
// user gets 64 tok/s = 512 / 8.
func TestPerUserLittlesLaw(t *testing.T) {
	r := baseRun(8)
	r.Metrics.DurationS = 40
	r.Metrics.OutputThroughput = 80 * 256 / 40.0
	r.Metrics.OutputTokensMean = ptr(256.0)
	r.Metrics.LatencyMs = dist(80, 4000, 4000, 4000, -1)
	per, ok := PerUserThroughput(r)
	if !ok || per != 64 {
		t.Fatalf("PerUserThroughput = %v, %v; want 64", per, ok)
	}
	if total := r.Metrics.OutputThroughput; total != per*float64(r.Concurrency) {
		t.Errorf("total %v != concurrency × per-user %v", total, per*float64(r.Concurrency))
	}
}

func TestTradeOff(t *testing.T) {
	f := session([]int{32, 1, 8},
		atLevel(1, func(r *results.Run) {
			r.Metrics.OutputThroughput = 60
			r.Metrics.LatencyMs = dist(100, 4000, 4000, 4000, 4000)
		}),
		atLevel(8, func(r *results.Run) {
			r.Metrics.OutputThroughput = 400
			r.Metrics.LatencyMs = dist(100, 5120, 5000, 6000, 7000)
		}),
		atLevel(32, func(r *results.Run) { r.Metrics.LatencyMs = nil }),
	)
	want := []TradeOffPoint{
		{Concurrency: 1, Total: 60, PerUser: 64},
		{Concurrency: 8, Total: 400, PerUser: 50},
	}
	if got := TradeOff(f); !reflect.DeepEqual(got, want) {
		t.Errorf("TradeOff = %+v\nwant %+v", got, want)
	}
	if got := TradeOff(nil); got != nil {
		t.Errorf("TradeOff(nil) = %v", got)
	}
}

// cellAt finds the cells of one metric at one level.
func cellAt(t *testing.T, rows []Row, c int, id string) []Cell {
	t.Helper()
	for _, r := range rows {
		if r.Concurrency == c && r.Metric.ID == id {
			return r.Cells
		}
	}
	t.Fatalf("no row for %s at concurrency %d", id, c)
	return nil
}

func TestTableShape(t *testing.T) {
	a := session([]int{8, 1})
	b := session([]int{1, 8, 64})
	rows := Table([]*results.File{a, b}, []string{"baseline"})
	if len(rows) != 3*len(Metrics) {
		t.Fatalf("%d rows, want %d", len(rows), 3*len(Metrics))
	}
	for i, r := range rows {
		wantLevel := []int{1, 8, 64}[i/len(Metrics)]
		if r.Concurrency != wantLevel || r.Metric.ID != Metrics[i%len(Metrics)].ID {
			t.Errorf("row %d is %s at %d, want %s at %d", i, r.Metric.ID, r.Concurrency, Metrics[i%len(Metrics)].ID, wantLevel)
		}
		if r.Shared != (wantLevel != 64) {
			t.Errorf("row %d: Shared = %v", i, r.Shared)
		}
		if len(r.Cells) != 2 || r.Cells[0].Label != "baseline" || r.Cells[1].Label != "run 2" {
			t.Errorf("row %d cells: %+v", i, r.Cells)
		}
	}
	// Level 64 exists only in run 2: run 1's cells are gaps, and run 2's
	// have no base to change against.
	for _, r := range rows[2*len(Metrics):] {
		if r.Cells[0].Present || r.Cells[0].Value != 0 {
			t.Errorf("%s at 64: run 1 has %+v, want a gap", r.Metric.ID, r.Cells[0])
		}
		if !r.Cells[1].Present || r.Cells[1].HasDelta || r.Cells[1].Better != 0 {
			t.Errorf("%s at 64: run 2 has %+v, want a value without delta", r.Metric.ID, r.Cells[1])
		}
	}
	if rows := Table(nil, nil); rows != nil {
		t.Errorf("Table(nil) = %v", rows)
	}
}

func TestTableDeltas(t *testing.T) {
	base := session([]int{8}, func(r *results.Run) {
		r.Metrics.RequestsOK = 100
		r.Metrics.OutputThroughput = 500
		r.Metrics.RequestThroughput = 2
		r.Metrics.TTFTMs = dist(100, 210, 200, 300, 400)
		r.Metrics.ITLMs = dist(25500, 20, 20, 30, 40)
	})
	other := session([]int{8}, func(r *results.Run) {
		r.Metrics.RequestsOK, r.Metrics.RequestsError = 90, 10
		r.Metrics.OutputThroughput = 560                   // +12 %: higher is better → better
		r.Metrics.RequestThroughput = 1.5                  // −25 %: higher is better → worse
		r.Metrics.TTFTMs = dist(100, 160, 150, 330, -1)    // p50 −25 % better, p95 +10 % worse, p99 missing
		r.Metrics.ITLMs = dist(25500, 20, 20.08, 29.9, 40) // p50 +0.4 %, p95 −0.33 %: the same
	})
	third := session([]int{8}, func(r *results.Run) {
		r.Metrics.OutputThroughput = 500 // unchanged
		r.Metrics.TTFTMs = nil
		r.Metrics.ITLMs = dist(25500, 20, 20, 30, 40)
	})
	rows := Table([]*results.File{base, other, third}, nil)

	type want struct {
		value    float64
		present  bool
		delta    float64
		hasDelta bool
		better   int
	}
	tests := []struct {
		id    string
		cells []want
	}{
		{"output_throughput", []want{{500, true, 0, false, 0}, {560, true, 0.12, true, 1}, {500, true, 0, true, 0}}},
		{"request_throughput", []want{{2, true, 0, false, 0}, {1.5, true, -0.25, true, -1}, {2, true, 0, true, 0}}},
		{"ttft_p50", []want{{200, true, 0, false, 0}, {150, true, -0.25, true, 1}, {0, false, 0, false, 0}}},
		{"ttft_p95", []want{{300, true, 0, false, 0}, {330, true, 0.1, true, -1}, {0, false, 0, false, 0}}},
		{"ttft_p99", []want{{400, true, 0, false, 0}, {0, false, 0, false, 0}, {0, false, 0, false, 0}}},
		{"itl_p50", []want{{20, true, 0, false, 0}, {20.08, true, 0.004, true, 0}, {20, true, 0, true, 0}}},
		{"itl_p95", []want{{30, true, 0, false, 0}, {29.9, true, -0.1 / 30, true, 0}, {30, true, 0, true, 0}}},
		// Neutral: a change is reported but is neither better nor worse.
		{"requests_ok", []want{{100, true, 0, false, 0}, {90, true, -0.1, true, 0}, {100, true, 0, true, 0}}},
		// Zero base: no relative change, but more errors than none is worse.
		{"error_rate", []want{{0, true, 0, false, 0}, {10, true, 0, false, -1}, {0, true, 0, false, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			cells := cellAt(t, rows, 8, tt.id)
			m, _ := MetricByID(tt.id)
			// The direction each change goes (better), as the other
			// plans' tables mark it (compareCells) ...
			raw := slices.Clone(cells)
			for i := range raw {
				raw[i].Delta, raw[i].HasDelta, raw[i].Better = 0, false, 0
			}
			compareCells(raw, m.Dir)
			for i, w := range tt.cells {
				c := cells[i]
				if c.Present != w.present || math.Abs(c.Value-w.value) > 1e-9 || c.HasDelta != w.hasDelta ||
					math.Abs(c.Delta-w.delta) > 1e-9 || raw[i].Better != w.better {
					t.Errorf("cell %d = %+v (better %d)\nwant value=%v present=%v delta=%v hasDelta=%v better=%v",
						i, c, raw[i].Better, w.value, w.present, w.delta, w.hasDelta, w.better)
				}
				// ... but these runs have no raw samples, so the verdict
				// calls none of it and the table colours none of it.
				if c.Better != 0 {
					t.Errorf("cell %d coloured (better %d) though no change can be told from noise", i, c.Better)
				}
			}
		})
	}

	// Error rate improving from a non-zero base is better.
	worse := session([]int{8}, func(r *results.Run) { r.Metrics.RequestsOK, r.Metrics.RequestsError = 80, 20 })
	rows = Table([]*results.File{worse, other}, []string{"a", "b"})
	c := cellAt(t, rows, 8, "error_rate")
	raw := []Cell{{Present: true, Value: c[0].Value}, {Present: true, Value: c[1].Value}}
	compareCells(raw, LowerBetter)
	if !c[1].HasDelta || math.Abs(c[1].Delta+0.5) > 1e-9 || raw[1].Better != 1 {
		t.Errorf("20 %% → 10 %% errors: %+v, want −50 %% and better", raw[1])
	}
}

func TestTableFirstRunMissing(t *testing.T) {
	noP99 := session([]int{1}, func(r *results.Run) { r.Metrics.TTFTMs.P99 = nil })
	rows := Table([]*results.File{noP99, session([]int{1})}, nil)
	cells := cellAt(t, rows, 1, "ttft_p99")
	if cells[0].Present || !cells[1].Present || cells[1].HasDelta || cells[1].Better != 0 {
		t.Errorf("cells = %+v: the first is a gap, the second has no delta", cells)
	}
}

func TestTableDuplicateLevelUsesFirst(t *testing.T) {
	f := session([]int{8, 8})
	f.Runs[1].Metrics.OutputThroughput = 1
	rows := Table([]*results.File{f}, nil)
	if len(rows) != len(Metrics) {
		t.Fatalf("%d rows, want %d", len(rows), len(Metrics))
	}
	if got := cellAt(t, rows, 8, "output_throughput")[0].Value; got != 512 {
		t.Errorf("output_throughput = %v, want the first record's 512", got)
	}
}
