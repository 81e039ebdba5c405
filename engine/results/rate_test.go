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
	for _, want := range []string{"kept up with up to 4 req/s; at 8 req/s it did not keep up: requests queued", "from 780 ms at 2 req/s to 9 s at 8 req/s", "Goodput at 8 req/s: 9 % of requests met TTFT ≤ 1 s"} {
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

// growingSamples are n requests due every gap ms on slots enough for
// each, the k-th taking ttft(k) ms to its first token and 200 ms more to
// its last: a queue inside the server when ttft grows with k.
func growingSamples(n int, gap float64, ttft func(k int) float64) *RateSamples {
	s := &RateSamples{LevelSamples: LevelSamples{Slots: n}}
	for k := range n {
		due := int64(float64(k) * gap * 1000)
		first := int64(ttft(k) * 1000)
		s.Requests = append(s.Requests, RequestSample{Slot: k, StartUs: due, TTFTUs: first, EndUs: due + first + 200_000, ChunkCount: 9})
		s.DueUs = append(s.DueUs, due)
	}
	return s
}

// TestRateMissedWords (#47): a rate not kept up with says what its
// figures show. Where every request was answered and the answers finished
// at least as fast as offered, it kept up in throughput, and the sentence
// says so and what grew (the user's 8 req/s: 8.50 achieved, 100 %
// goodput, said "did not keep up"); where requests failed, the client's
// queue grew or fewer finished than offered, it did not keep up.
func TestRateMissedWords(t *testing.T) {
	t.Parallel()
	grew := &RateLevel{Rate: 8, Requests: 40, OK: 40, AchievedRate: 8.5, Goodput: &Goodput{Met: 40, Share: 1, Rate: 8.5}, LatencyGrew: true,
		Samples: growingSamples(40, 125, func(k int) float64 { return 100 + 60*float64(k) })}
	grew.Verdict = grew.GrowthWords()
	tests := []struct {
		name      string
		l         *RateLevel
		want, not string
	}{
		{"latency grew, the pace kept", grew,
			"it kept up in throughput (8.50 req/s finished, all 40 requests answered), but not in latency: time to first token grew from 370 ms over the first quarter of the requests to 2.17 s over the last (latency 570 ms to 2.37 s): a queue was building inside the server",
			"did not keep up"},
		{"under the service level, the pace kept (llama-server b4748 at 1 req/s)",
			&RateLevel{Rate: 1, Requests: 20, OK: 20, AchievedRate: 1.101, Goodput: &Goodput{Met: 11, Share: 0.55, Rate: 0.605}, Verdict: "only 55 % of requests met the service level (95 % must)"},
			"it kept up in throughput (1.10 req/s finished, all 20 requests answered), but not in latency: only 55 % of requests met the service level (95 % must)",
			"did not keep up"},
		{"fewer finished than offered",
			&RateLevel{Rate: 8, Requests: 40, OK: 40, AchievedRate: 6.1, Verdict: "the median latency doubled against 1 req/s (1.09 s to 2.38 s)"},
			"it did not keep up: the median latency doubled against 1 req/s (1.09 s to 2.38 s)", "in throughput"},
		{"requests failed",
			&RateLevel{Rate: 8, Requests: 40, OK: 30, AchievedRate: 8.2, Verdict: "10 of 40 requests failed"},
			"it did not keep up: 10 of 40 requests failed", "in throughput"},
		{"the client's queue grew",
			&RateLevel{Rate: 8, Requests: 40, OK: 40, AchievedRate: 8.1, QueueGrew: true, Verdict: "requests queued and the queue kept growing"},
			"it did not keep up: requests queued", "in throughput"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.l.MissedWords()
			if got != tc.want && !strings.HasPrefix(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
			if strings.Contains(got, tc.not) {
				t.Errorf("%q says %q", got, tc.not)
			}
			// The headline says the same, of the given rates and of a
			// sweep's limit alike.
			r := &RateResult{Settings: RateSettings{Requests: tc.l.Requests}, Levels: []RateLevel{
				{Rate: tc.l.Rate / 8, Requests: 10, OK: 10, AchievedRate: tc.l.Rate / 8, LatencyMs: &Dist{N: 10, P50: 500}, Sustained: true}, *tc.l}}
			r.Complete = true
			r.Levels[1].LatencyMs = &Dist{N: 40, P50: 900}
			if h := r.Headline(); !strings.Contains(h, "At "+RateName(tc.l.Rate)+" "+got+".") {
				t.Errorf("headline %q lacks %q", h, got)
			}
			r.Sweep = &RateSweep{Sustainable: tc.l.Rate / 8, Limit: tc.l.Rate, Reason: tc.l.Verdict}
			if h := r.Headline(); !strings.Contains(h, "; at "+RateName(tc.l.Rate)+" "+got+".") {
				t.Errorf("sweep headline %q lacks %q", h, got)
			}
		})
	}
}

// TestJargonSaidWhereFirstMet (#47): the words of the trade a person
// meets first in a result's sentences are said in plain words there —
// TPOT and goodput in the rate headline and a Kovara run's goodput line,
// open loop in the rate plan's method, the tokens a word of the context
// plan's calibration — and the service level keeps its short form
// elsewhere (Words).
func TestJargonSaidWhereFirstMet(t *testing.T) {
	t.Parallel()
	rate := rateDoc()
	rate.Settings.SLO = &RateSLO{TTFTMs: 1000, TPOTMs: 40}
	kovara := &File{Runs: []Run{{Concurrency: 1}}, Local: Local{SLO: &RateSLO{TPOTMs: 5}, Levels: []LevelLocal{{Concurrency: 1, Goodput: &Goodput{Met: 20, Share: 1, Rate: 2.5}}}}}
	ctx := &ContextResult{Settings: ContextSettings{PromptGenerator: "kovara-synthetic-v1", Seed: 7},
		Calibration: &ContextCalibration{TargetTokens: 1024, TokensPerWord: 1.3, BaseTokens: 23, Converged: true}}
	tests := []struct {
		name, text, want string
	}{
		{"TPOT in the service level's first words", rate.Settings.SLO.FirstWords(), "TTFT ≤ 1 s, TPOT (time per output token after the first) ≤ 40 ms"},
		{"the short form stays short", rate.Settings.SLO.Words(), "TTFT ≤ 1 s, TPOT ≤ 40 ms"},
		{"goodput and TPOT in the rate headline", rate.Headline(),
			"Goodput at 8 req/s: 9 % of requests met TTFT ≤ 1 s, TPOT (time per output token after the first) ≤ 40 ms — goodput counts only those (0.60 req/s)."},
		{"open loop in the rate method", rate.Method(),
			"32 requests at each offered rate, sent open loop (each at its scheduled time, whether or not the ones before it have answered), poisson arrivals"},
		{"goodput and TPOT in a Kovara run's goodput line", GoodputLine(kovara),
			"Goodput (the requests that met the service level) against TPOT (time per output token after the first) ≤ 5 ms: 100 % of requests at 1 user (2.50 req/s)."},
		{"tokens a word in the context plan's prompts line", ctx.PromptsLine(),
			"prompts (kovara-synthetic-v1, seed 7): calibrated at 1024 tokens (converged): each word of the prompt text cost the model's tokenizer 1.30 tokens, and the instruction and chat template around the words 23 tokens; the table says how far off each depth landed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(tt.text, tt.want) {
				t.Errorf("%q\nlacks %q", tt.text, tt.want)
			}
		})
	}
}
