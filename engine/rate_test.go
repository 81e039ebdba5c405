package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// ratePlan is a small rate plan of given rates, prompts and answers
// short enough for a busy machine.
func ratePlan(rates ...float64) setup.RatePlan {
	return setup.RatePlan{Rates: rates, Arrival: setup.ArrivalConstant, Requests: 16, InputTokens: 64, OutputTokens: 8,
		Seed: 3, FixedSeed: true, Timeout: 30 * time.Second, MetricsInterval: -1}
}

// rateNumber is the request number of request k (by intended send) of a
// plan of given rates at its level index, as RunRate numbers them.
func rateNumber(p setup.RatePlan, level, k int) int64 {
	return prompt.FirstWarmupRequest + int64(max(p.Warmup, 0)) + int64(level*p.Requests+k)
}

// byIntended are a level's requests in the order they were due.
func byIntended(l *results.RateLevel) []results.RateRequest {
	reqs := l.Samples.Each()
	slices.SortStableFunc(reqs, func(a, b results.RateRequest) int { return int(a.IntendedUs - b.IntendedUs) })
	return reqs
}

// TestRateLatencyFromIntended: through one slot, a one-slot simulator
// gets requests twice as fast as it answers them, so each leaves later
// than the last. The plan's latency of every request must hold the wait
// the simulator's arrival record shows (its arrival's delay past the
// first request's, less the schedule's): measured from the actual send,
// it would be the server's time alone and fail here.
func TestRateLatencyFromIntended(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{TokenInterval: 12 * time.Millisecond, PrefillRate: 200000, BatchCapacity: 1, RecordTruth: true})
	p := ratePlan(25) // every 40 ms; an answer of 8 tokens takes at least 84 ms
	p.MaxInFlight, p.Requests = 1, 32
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Levels) != 1 {
		t.Fatalf("%d levels, want 1", len(res.Levels))
	}
	l := &res.Levels[0]
	reqs := byIntended(l)
	if got, want := len(reqs), p.Requests; got != want {
		t.Fatalf("%d requests kept, want %d", got, want)
	}
	first, ok := srv.Truth(rateNumber(p, 0, 0))
	if !ok {
		t.Fatal("no truth of the first request")
	}
	var waits []float64
	for k, q := range reqs {
		tr, ok := srv.Truth(rateNumber(p, 0, k))
		if !ok || q.Error != "" {
			t.Fatalf("request %d: truth %v, error %q", k, ok, q.Error)
		}
		// The record's wait: how much later than the first request it
		// arrived, beyond the schedule's own spacing.
		wait := float64(tr.Arrived.Sub(first.Arrived))/1e6 - float64(q.IntendedUs-reqs[0].IntendedUs)/1000
		// Served until its last token left: the handler's end comes
		// after the client has read the answer, later still on a busy
		// machine (3 ms past it once under a CPU hog), so it is no floor.
		if len(tr.Chunks) == 0 {
			t.Fatalf("request %d: the simulator sent no token", k)
		}
		served := float64(tr.Chunks[len(tr.Chunks)-1].Sub(tr.Arrived)) / 1e6
		waits = append(waits, wait)
		if got, floor := q.LatencyMs(), served+wait-2; got < floor {
			t.Errorf("request %d: latency %.1f ms, under the server's %.1f ms plus the %.1f ms it waited to be sent", k, got, served, wait)
		}
	}
	if w := waits[len(waits)-1]; w < 200 {
		t.Fatalf("the last request waited %.0f ms to be sent; the test needs a queue (the simulator answered faster than planned)", w)
	}
	if !l.QueueGrew || l.Sustained || !strings.Contains(l.Verdict, "queue") {
		t.Errorf("queue grew %v, sustained %v, verdict %q; want a growing queue, not kept up with", l.QueueGrew, l.Sustained, l.Verdict)
	}
	if l.PeakInFlight != 1 {
		t.Errorf("peak in flight %d with a cap of 1", l.PeakInFlight)
	}
	if s := l.QueueWords(p.MaxInFlight); !strings.Contains(s, "could not keep up with 25 req/s") {
		t.Errorf("queue words %q", s)
	}
}

// rateMisses is how many runs may miss the 1 ms bar before
// TestTruthRateSchedule fails (as truthMisses: a shared machine now and
// then stalls a whole run).
const rateMisses = 2

// TestTruthRateSchedule: at 200 requests a second, every request's
// actual send agrees with the simulator's record of its arrival within
// 1 ms at the 99th percentile, and its intended send within 1 ms beyond
// the client's own lateness the result reports (each against the record
// less the run's median offset: the two clocks differ by a constant). A
// busy machine sends late, and the result must say so; it must never
// send at other times than it records. Named TestTruth… so that make
// test-truth runs it, ahead of other work where it may.
func TestTruthRateSchedule(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing accuracy is checked without -race and -short (make test-truth)")
	}
	url := startSimProcess(t, simProcConfig{TokenInterval: time.Millisecond, PrefillRate: 200000})
	for misses := 0; ; {
		miss := rateOnSchedule(t, url)
		if miss == "" {
			return
		}
		misses++
		t.Logf("run %d missed: %s", misses, miss)
		if misses > rateMisses {
			t.Fatalf("%d runs missed the 1 ms bar (%d may); the last: %s", misses, rateMisses, miss)
		}
	}
}

func rateOnSchedule(t *testing.T, url string) string {
	t.Helper()
	p := ratePlan(200)
	p.Arrival, p.Requests, p.OutputTokens, p.Warmup = setup.ArrivalPoisson, 400, 4, 0
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	truth := fetchTimings(t, url)
	reqs := byIntended(&res.Levels[0])
	if len(reqs) != p.Requests {
		t.Fatalf("%d requests kept, want %d", len(reqs), p.Requests)
	}
	var intended, actual []float64
	for k, q := range reqs {
		tr, ok := truth[rateNumber(p, 0, k)]
		if !ok {
			t.Fatalf("request %d: no truth", k)
		}
		at := float64(tr.ArrivedUnixNs) / 1000
		intended = append(intended, at-float64(q.IntendedUs))
		actual = append(actual, at-float64(q.SentUs))
	}
	spread := func(xs []float64) float64 {
		med := median(xs)
		var d []float64
		for _, x := range xs {
			d = append(d, math.Abs(x-med)/1000)
		}
		return p99(d)
	}
	si, sa := spread(intended), spread(actual)
	lt := res.Levels[0].LatenessMs
	late, _ := lt.At(99)
	t.Logf("200 req/s: p99 |arrival − intended| %.3f ms, |arrival − actual| %.3f ms (each less its median); the client's own lateness p50 %.3f, p99 %.3f, max %.3f ms",
		si, sa, lt.P50, late, lt.Max)
	if sa > 1 {
		return fmt.Sprintf("p99 actual send %.3f ms from the arrival record (want ≤ 1 ms)", sa)
	}
	// The intended times hold the 1 ms bar when this machine sends on
	// time; when it does not (a busy machine), the plan must say so:
	// its lateness accounts for the miss.
	if si > 1 && si > late+1 {
		return fmt.Sprintf("p99 intended send %.3f ms from the arrival record, beyond the client's own lateness of %.3f ms (want ≤ 1 ms)", si, late)
	}
	if si > 1 {
		t.Logf("the intended times missed the 1 ms bar by this machine's own lateness, which the result reports (p99 %.3f ms): a busy machine", late)
	}
	return ""
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestRunRateSweep: a two-slot simulator swept from its single-request
// rate finds a rate it does not keep up with below the top, says why,
// and keeps every rate's requests with their intended times.
func TestRunRateSweep(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 200000, BatchCapacity: 2})
	p := ratePlan()
	p.Rates, p.Sweep, p.SweepMax, p.Arrival, p.Requests, p.OutputTokens = nil, true, 1600, "", 24, 12
	p.SLO = setup.RateSLO{TTFTMs: 10_000}
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	sw := res.Sweep
	if sw == nil || sw.Limit == 0 || sw.Reason == "" || sw.Sustainable >= sw.Limit {
		t.Fatalf("sweep %+v; want a limit under the top with its reason", sw)
	}
	if res.Settings.SweepFrom <= 0 || res.Settings.Arrival != setup.ArrivalPoisson {
		t.Errorf("settings %+v: want the sweep's chosen start and Poisson arrivals", res.Settings)
	}
	for _, l := range res.Levels {
		if l.Requests != p.Requests || len(l.Samples.Each()) != p.Requests || len(l.Samples.DueUs) != p.Requests {
			t.Errorf("at %s: %d requests, %d samples, %d intended times; want %d", results.RateName(l.Rate), l.Requests, len(l.Samples.Each()), len(l.Samples.DueUs), p.Requests)
		}
		if l.Goodput == nil {
			t.Errorf("at %s: no goodput with a service level", results.RateName(l.Rate))
		}
		if l.Rate == sw.Limit && (l.Sustained || l.Verdict != sw.Reason) {
			t.Errorf("the limit's level: sustained %v, verdict %q; sweep reason %q", l.Sustained, l.Verdict, sw.Reason)
		}
	}
	b, err := results.MarshalDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.RateDoc.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.Table(), res.Table(); !slices.EqualFunc(got.Rows, want.Rows, slices.Equal) {
		t.Errorf("the document read back shows %v, want %v", got.Rows, want.Rows)
	}
	if h := res.Headline(); !strings.Contains(h, "kept up with") {
		t.Errorf("headline %q", h)
	}
}

// rateRequests are n requests of a level due every gap ms, each served
// in serve(k) ms from when a slot frees, through slots slots; queue-less
// requests leave on time.
func rateSamples(n, slots int, gap float64, serve func(k int) float64) *results.RateSamples {
	s := &results.RateSamples{LevelSamples: results.LevelSamples{Slots: slots}}
	free := make([]int64, slots)
	for k := range n {
		due := int64(float64(k) * gap * 1000)
		si := slices.Index(free, slices.Min(free))
		start := max(due, free[si])
		end := start + int64(serve(k)*1000)
		s.Requests = append(s.Requests, results.RequestSample{Slot: si, StartUs: start, EndUs: end, TTFTUs: 1000, ChunkCount: 9})
		s.DueUs = append(s.DueUs, due)
		free[si] = end
	}
	return s
}

func TestJudgeRate(t *testing.T) {
	t.Parallel()
	level := func(rate float64, s *results.RateSamples, slo *results.RateSLO) *results.RateLevel {
		l := &results.RateLevel{Rate: rate, Samples: s}
		rateFigures(l, slo)
		return l
	}
	flat := func(int) float64 { return 100 }
	base := level(2, rateSamples(40, 4, 500, flat), nil)
	tests := []struct {
		name string
		l    *results.RateLevel
		want string // "" when kept up with
	}{
		{"the baseline", base, ""},
		{"twice the rate, same latency", level(4, rateSamples(40, 4, 250, flat), nil), ""},
		// One slot, 100 ms answers due every 50 ms: each waits 50 ms more.
		{"a queue for the slots", level(20, rateSamples(40, 1, 50, flat), nil), "queue kept growing"},
		// Enough slots, but the server slows with each request: a queue
		// inside it.
		{"a queue in the server", level(10, rateSamples(40, 64, 100, func(k int) float64 { return 100 + 60*float64(k) }), nil), "inside the server"},
		{"the median doubled", level(8, rateSamples(40, 64, 125, func(int) float64 { return 250 }), nil), "median latency doubled"},
		{"goodput under the service level", level(4, rateSamples(40, 4, 250, flat), &results.RateSLO{TTFTMs: 0.5}), "met the service level"},
	}
	for _, tc := range tests {
		ok, why := judgeRate(tc.l, base)
		if ok != (tc.want == "") || !strings.Contains(why, tc.want) {
			t.Errorf("%s: kept up %v, %q; want %q", tc.name, ok, why, tc.want)
		}
	}
	if q := level(20, rateSamples(40, 1, 50, flat), nil); q.Queued < 30 || q.QueueMs.Max < 1900 || q.PeakInFlight != 1 {
		t.Errorf("one slot: %d queued, wait up to %v ms, peak %d in flight", q.Queued, q.QueueMs.Max, q.PeakInFlight)
	}
	if base.Queued != 0 || base.LatenessMs.Max != 0 || base.PeakInFlight != 1 {
		t.Errorf("baseline: %d queued, lateness %v ms, peak %d", base.Queued, base.LatenessMs.Max, base.PeakInFlight)
	}
}

// TestRateServerQueueOllama: an Ollama-like simulator serves one request
// at a time (OLLAMA_NUM_PARALLEL's default); offered several times what
// it serves, with the client's cap above the requests, every request
// leaves on time and the queue grows inside the server. The result says
// so in words and names the setting that serves more.
func TestRateServerQueueOllama(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{Personality: sim.Ollama, TokenInterval: 5 * time.Millisecond, PrefillRate: 200000})
	p := ratePlan(40) // an answer of 16 tokens takes at least 80 ms: 12 a second at most
	p.MaxInFlight, p.Requests, p.OutputTokens = 64, 40, 16
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	l := &res.Levels[0]
	if !l.LatencyGrew || l.Sustained {
		t.Fatalf("latency grew %v, kept up %v (%s); want a queue that grew inside the server", l.LatencyGrew, l.Sustained, l.Verdict)
	}
	w := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"requests queued inside the server and the queue kept growing", "OLLAMA_NUM_PARALLEL"} {
		if !strings.Contains(w, want) {
			t.Errorf("the warnings do not say %q:\n%s", want, w)
		}
	}
}
