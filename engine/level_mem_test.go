package engine

import (
	"runtime"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

// TestLevelMemoryAtScale builds the measurements of a 1,024-stream level
// of 100,000 requests × 256 tokens and turns them into its run record: the
// samples and the summary together must stay under 500 MB.
func TestLevelMemoryAtScale(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocates a few hundred MB")
	}
	const streams, requests, tokens = 1024, 100000, 256
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	lv := &levelRun{concurrency: streams, loadRun: loadRun{start: 0, end: 100 * time.Second, slots: make([]slotRun, streams)}}
	for i := 0; i < requests; i++ {
		s := &lv.slots[i%streams]
		if s.itl == nil {
			s.itl = make([]float32, 0, (requests/streams+1)*(tokens-1))
		}
		from := len(s.itl)
		for k := 0; k < tokens-1; k++ {
			s.itl = append(s.itl, 20+float32(k%7)/10)
		}
		s.outs = append(s.outs, outcome{n: int64(i), start: time.Duration(i) * time.Millisecond,
			end: time.Duration(i)*time.Millisecond + 5*time.Second, ttft: 80 * time.Millisecond, ttfa: -1,
			chunks: tokens, hasUsage: true, promptTok: 1024, complTok: tokens, itlFrom: from, itlTo: len(s.itl)})
	}
	sess, _ := newSession(setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{})
	r := &runner{session: sess, plan: setup.DefaultPlan()}
	r.plan.Requests, r.plan.OutputTokens = requests, tokens
	r.usage = true
	run, _ := r.record(lv)

	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	peak := float64(after.HeapSys-before.HeapSys+before.HeapInuse) / (1 << 20)
	t.Logf("1,024 streams × 100,000 requests × 256 tokens: heap reserved about %.0f MB (ITL n=%d)", peak, run.Metrics.ITLMs.N)
	if run.Metrics.ITLMs.N != requests*(tokens-1) || run.Metrics.RequestsOK != requests {
		t.Fatalf("record: %+v", run.Metrics)
	}
	if peak > 500 {
		t.Errorf("the level needed about %.0f MB; want under 500", peak)
	}
}
