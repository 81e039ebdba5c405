package engine

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stats"
)

// Every measured request is kept with its slot, times and chunk
// arrivals, and the samples give back the published figures.
func TestRunKeepsSamples(t *testing.T) {
	t.Parallel()
	p := smallPlan()
	p.Requests = 12
	first := levelFirstNumber(p, 1)
	cfg := fastSim()
	cfg.Faults = func(n int64) sim.Fault {
		if n == first+2 || n == first+5 {
			return sim.Fault500
		}
		return sim.FaultNone
	}
	_, url := startSim(t, cfg)
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url + "/v1"}, Observer{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	mustValid(t, f)
	if !f.HasSamples() {
		t.Fatal("the file kept no samples")
	}
	for _, r := range f.Runs {
		s := f.SamplesAt(r.Concurrency)
		if s == nil {
			t.Fatalf("concurrency %d: no samples", r.Concurrency)
		}
		m := r.Metrics
		if got, want := len(s.Requests), m.RequestsOK+m.RequestsError+m.RequestsTimeout; got != want {
			t.Errorf("c%d: %d samples, want %d (every finished request)", r.Concurrency, got, want)
		}
		if s.Slots != r.Concurrency || s.EndUs <= s.StartUs {
			t.Errorf("c%d: slots %d window %d…%d µs", r.Concurrency, s.Slots, s.StartUs, s.EndUs)
		}
		var ttft []float64
		used := map[int]bool{}
		errs := 0
		for i, q := range s.Requests {
			used[q.Slot] = true
			if q.Slot < 0 || q.Slot >= s.Slots || q.StartUs < s.StartUs || q.EndUs > s.EndUs || q.EndUs < q.StartUs {
				t.Errorf("c%d request %d outside its level: %+v", r.Concurrency, i, q)
			}
			if i > 0 && q.StartUs < s.Requests[i-1].StartUs {
				t.Errorf("c%d: samples not in the order sent", r.Concurrency)
			}
			if !q.OK() {
				errs++
				continue
			}
			ttft = append(ttft, float64(q.TTFTUs)/1000)
			arr, err := q.Arrivals()
			if err != nil {
				t.Fatal(err)
			}
			if len(arr) != q.ChunkCount || arr[0] != q.StartUs+q.TTFTUs || arr[len(arr)-1] > q.EndUs+1 {
				t.Errorf("c%d request %d: %d arrivals from %d for %d chunks ending %d", r.Concurrency, i, len(arr), arr[0], q.ChunkCount, q.EndUs)
			}
			if !q.Usage || q.CompletionTokens != p.OutputTokens || q.PromptTokens == 0 {
				t.Errorf("c%d request %d: usage %v %d/%d", r.Concurrency, i, q.Usage, q.CompletionTokens, q.PromptTokens)
			}
		}
		if errs != m.RequestsError+m.RequestsTimeout {
			t.Errorf("c%d: %d failed samples, want %d", r.Concurrency, errs, m.RequestsError+m.RequestsTimeout)
		}
		if len(used) != r.Concurrency {
			t.Errorf("c%d: requests on %d slots", r.Concurrency, len(used))
		}
		if d := stats.Summarize(ttft); m.TTFTMs == nil || math.Abs(d.P50-m.TTFTMs.P50) > 0.002 {
			t.Errorf("c%d: TTFT p50 from samples %v, published %v", r.Concurrency, d, m.TTFTMs)
		}
	}
}

// Gaps survive their packing exactly; what is not packing is refused.
func TestGapsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, gaps := range [][]int64{nil, {0}, {0, 0, 1}, {8123, 7999, 127, 128, 16383, 16384, 1 << 40}} {
		got, err := results.DecodeGaps(nil, results.EncodeGaps(gaps))
		if err != nil || len(got) != len(gaps) {
			t.Fatalf("%v: got %v, %v", gaps, got, err)
		}
		for i := range gaps {
			if got[i] != gaps[i] {
				t.Errorf("gap %d: got %d, want %d", i, got[i], gaps[i])
			}
		}
	}
	for _, bad := range []string{"!!", "gA"} {
		if _, err := results.DecodeGaps(nil, bad); err == nil {
			t.Errorf("%q decoded without error", bad)
		}
	}
}

// defaultRunSamples is what a default run keeps: levels × requests
// answers of tokens chunks, gaps jittered around 8 ms as a real decode's
// are.
func defaultRunSamples(levels []int, requests, tokens int) *results.File {
	f := &results.File{}
	var t int64
	seed := uint64(1)
	for _, c := range levels {
		ls := &results.LevelSamples{StartUs: t, Slots: c}
		gaps := make([]int64, tokens-1)
		for i := range requests {
			for k := range gaps {
				seed = seed*6364136223846793005 + 1442695040888963407
				gaps[k] = 6000 + int64(seed>>33)%4000
			}
			ls.Requests = append(ls.Requests, results.RequestSample{
				Slot: i % c, StartUs: t, EndUs: t + 2_100_000, TTFTUs: 61_234, ChunkCount: tokens,
				Gaps: results.EncodeGaps(gaps), Usage: true, CompletionTokens: tokens, PromptTokens: 1024,
			})
			t += int64(time.Second / time.Microsecond / time.Duration(c))
		}
		ls.EndUs = t
		f.Local.Levels = append(f.Local.Levels, results.LevelLocal{Concurrency: c, Samples: ls})
	}
	return f
}

// The size of the samples a run keeps, reported as bytes of JSON
// (docs/performance.md): go test -run '^$' -bench SamplesSize ./engine
func BenchmarkSamplesSize(b *testing.B) {
	for _, bc := range []struct {
		name             string
		levels           []int
		requests, tokens int
	}{
		{"default-3x100x256", []int{1, 8, 32}, 100, 256},
		{"c32-100x256", []int{32}, 100, 256},
		{"c256-512x256", []int{256}, 512, 256},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := defaultRunSamples(bc.levels, bc.requests, bc.tokens)
			var n int
			for b.Loop() {
				data, err := json.Marshal(f.Local.Levels)
				if err != nil {
					b.Fatal(err)
				}
				n = len(data)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

// The other plans keep their measured requests the same way: the
// capacity search each probe's, the many-user stage its measured round,
// speculative decoding each level's.
func TestOtherPlansKeepSamples(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000, BatchCapacity: 8, NaturalStop: longAnswers})
	ep := setup.Endpoint{URL: url}

	capRes, err := RunCapacity(context.Background(), capacityPlanFor(1e6, 1000, 256), ep, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range capRes.Local.Levels {
		if l.Samples == nil || len(l.Samples.Requests) != capRes.Probes[i].Requests {
			t.Errorf("capacity probe %d: samples %v, want %d requests", i+1, l.Samples, capRes.Probes[i].Requests)
		}
	}

	sp := setup.DefaultStagesPlan()
	sp.Quick, sp.Users, sp.SpecDecode = true, 3, "none"
	st, err := RunStages(context.Background(), sp, ep, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if s := st.Users.Samples; s == nil || len(s.Requests) != 3 || s.Slots != 3 {
		t.Errorf("many-user stage samples %+v, want 3 requests on 3 slots", s)
	}

	dp := setup.DefaultSpecDecPlan()
	dp.Levels, dp.MaxTokens, dp.Requests = []int{2}, 20, 4
	sd, err := RunSpecDec(context.Background(), dp, ep, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range sd.Levels {
		if l.Samples == nil || len(l.Samples.Requests) != l.OK+l.Errors {
			t.Errorf("specdec level %d: samples %v, want %d requests", l.Concurrency, l.Samples, l.OK+l.Errors)
		}
	}
}

// TestSampleTimesNeverEndBeforeTheFirstToken: a request's latency in the
// samples is never shorter than its TTFT, whatever the sub-microsecond
// parts of its times (a one-packet answer has its end at its first
// token). Rounded on its own, a send at 0.5 µs and a first and last token
// 1.5 µs later gave a latency of 1 µs and a TTFT of 2.
func TestSampleTimesNeverEndBeforeTheFirstToken(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	cases := [][3]time.Duration{{500, 2000, 1500}, {1500, 3000, 1500}}
	for range 100000 {
		start := time.Duration(rng.Int64N(1e9))
		ttft := time.Duration(rng.Int64N(1e6))
		cases = append(cases, [3]time.Duration{start, start + ttft + time.Duration(rng.Int64N(3))*time.Duration(rng.Int64N(2000)), ttft})
	}
	for _, c := range cases {
		s, e, f := sampleTimes(c[0], c[1], c[2])
		if e-s < f {
			t.Fatalf("start %v, end %v, TTFT %v: latency %d µs, TTFT %d µs", c[0], c[1], c[2], e-s, f)
		}
	}
	if _, _, f := sampleTimes(0, time.Millisecond, -1); f != -1 {
		t.Errorf("no first token: TTFT %d, want -1", f)
	}
}
