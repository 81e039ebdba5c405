package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/stream"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/record"
)

// writeTrace writes reqs as a trace file.
func writeTrace(t *testing.T, reqs []trace.Request) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range reqs {
		if err := w.Add(q); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return path
}

// What a replay sends: the requests in the part of the day asked for
// with an answer recorded, at their times over the speed; a turn that
// carries a conversation on follows the turn before it (not another
// conversation that only shares its system prompt, nor one that came
// while it was answering).
func TestLoadReplay(t *testing.T) {
	at := func(clock string) string { return "2026-12-07T" + clock + "+01:00" }
	reqs := []trace.Request{
		{Timestamp: 0, Time: at("08:59:00"), InputLength: 100, OutputLength: 10, HashIDs: []int64{1, 2, 3}, DurationMs: 500},
		{Timestamp: 60_000, Time: at("09:00:00"), InputLength: 900, OutputLength: 10, HashIDs: []int64{1, 2, 3}, DurationMs: 1000},         // A
		{Timestamp: 60_500, Time: at("09:00:00"), InputLength: 900, OutputLength: 10, HashIDs: []int64{1, 9, 10}, DurationMs: 1000},        // B: A's system prompt only, while A answered
		{Timestamp: 63_000, Time: at("09:00:03"), InputLength: 950, OutputLength: 10, HashIDs: []int64{1, 2, 4, 5}, DurationMs: 1000},      // A's next turn: 2 s after A ended
		{Timestamp: 64_000, Time: at("09:00:04"), InputLength: 10, OutputLength: 0, HashIDs: []int64{7}, Error: "the server answered 500"}, // failed: not sent
		{Timestamp: 66_000, Time: at("09:00:06"), InputLength: 990, OutputLength: 10, HashIDs: []int64{1, 2, 4, 5, 6}, DurationMs: 1000},   // A's third turn
		{Timestamp: 70_000, Time: at("12:00:00"), InputLength: 10, OutputLength: 5, HashIDs: []int64{8}},                                   // after noon
	}
	path := writeTrace(t, reqs)
	rp, err := loadReplay(setup.Replay{File: path, Speed: 2, From: "09:00", To: "12:00"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.reqs) != 4 || rp.skipped != 1 || rp.inTrace != 7 {
		t.Fatalf("%d sent, %d skipped of %d; want 4, 1 of 7", len(rp.reqs), rp.skipped, rp.inTrace)
	}
	wantSched := Schedule{0, 250 * time.Millisecond, 1500 * time.Millisecond, 3000 * time.Millisecond}
	for k, want := range wantSched {
		if rp.sched[k] != want {
			t.Errorf("request %d due at %v, want %v (recorded over speed 2)", k, rp.sched[k], want)
		}
	}
	if got, want := rp.parent, []int{-1, -1, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("parents %v, want %v", got, want)
	}
	if rp.think[2] != time.Second || rp.think[3] != time.Second {
		t.Errorf("think %v, want the recorded 2 s after each end over speed 2", rp.think)
	}
	// Short turns, one partial block each, are linked by their message
	// ids: the second holds the first's whole prompt.
	short := writeTrace(t, []trace.Request{
		{Timestamp: 0, InputLength: 30, OutputLength: 10, HashIDs: []int64{1}, MessageIDs: []int64{100, 101}, DurationMs: 100},
		{Timestamp: 50, InputLength: 30, OutputLength: 10, HashIDs: []int64{2}, MessageIDs: []int64{100, 201}, DurationMs: 100}, // another conversation, same system prompt
		{Timestamp: 400, InputLength: 60, OutputLength: 10, HashIDs: []int64{3}, MessageIDs: []int64{100, 101, 102, 103}},       // the first one's next turn
	})
	if rs, err := loadReplay(setup.Replay{File: short}); err != nil || !slices.Equal(rs.parent, []int{-1, -1, 0}) || rs.think[2] != 300*time.Millisecond {
		t.Errorf("short turns: parents %v, think %v, %v; want [-1 -1 0] and 300ms", rs.parent, rs.think, err)
	}
	// A window on a public trace, which has no time of day, is refused.
	mc := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(mc, []byte(`{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}`+"\n"), 0o600)
	if _, err := loadReplay(setup.Replay{File: mc, From: "09:00"}); err == nil || !strings.Contains(err.Error(), "needs a trace recorded by kovara-bench record") {
		t.Errorf("a window on Mooncake: %v", err)
	}
	if _, err := loadReplay(setup.Replay{File: path, From: "13:00"}); err == nil || !strings.Contains(err.Error(), "no request with an answer") {
		t.Errorf("an empty window: %v", err)
	}
}

// Blocks with one hash id are one text wherever they come: a later turn's
// prompt begins with the earlier turn's whole blocks, word for word; a
// Mooncake block is 512 tokens.
func TestReplayPromptsShareTheirBlocks(t *testing.T) {
	rp := &replay{reqs: []trace.Request{
		{InputLength: 1200, OutputLength: 5, HashIDs: []int64{1, 2, 3}, PromptBytes: 5000, BlockBytes: 2048},
		{InputLength: 1500, OutputLength: 5, HashIDs: []int64{1, 2, 4}, PromptBytes: 6000, BlockBytes: 2048},
		{InputLength: 1200, OutputLength: 5, HashIDs: []int64{10, 11, 12}}, // Mooncake
	}}
	rp.prepare(7, 1.25, 10, 0)
	a, b := string(rp.messages(0)), string(rp.messages(1))
	shared := 0
	for shared < min(len(a), len(b)) && a[shared] == b[shared] {
		shared++
	}
	first2 := rp.blocks[0][0].words + rp.blocks[0][1].words
	if words := len(strings.Fields(a[:shared])); words < first2 {
		t.Errorf("the turns share %d words, want the two shared blocks' %d", words, first2)
	}
	if rp.blocks[1][0] != rp.blocks[0][0] || rp.blocks[1][1] != rp.blocks[0][1] || rp.blocks[1][2] == rp.blocks[0][2] {
		t.Errorf("blocks %v and %v", rp.blocks[0], rp.blocks[1])
	}
	for i, q := range rp.reqs {
		var words int
		for _, bl := range rp.blocks[i] {
			words += bl.words
		}
		if got, want := float64(words)*1.25+10, float64(q.InputLength); math.Abs(got-want) > 0.05*want {
			t.Errorf("request %d: %.0f tokens made, want %.0f", i, got, want)
		}
	}
	if got := float64(rp.blocks[2][0].words) * 1.25; math.Abs(got-512) > 2 {
		t.Errorf("a Mooncake block of %.0f tokens, want 512", got)
	}
}

// chatThrough is a chat client: each conversation's turns in turn, every
// turn with the history and the answers, streamed through base.
func chatThrough(t *testing.T, base string, system string, conversations int, turns int) {
	t.Helper()
	for c := range conversations {
		msgs := []map[string]string{{"role": "system", "content": system}}
		for k := range turns {
			msgs = append(msgs, map[string]string{"role": "user", "content": strings.Repeat("question ", 20) + string(rune('a'+c)) + string(rune('a'+k))})
			body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs, "max_tokens": 24, "stream": true, "stream_options": map[string]bool{"include_usage": true}})
			resp, err := http.Post(base+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			var answer []byte
			r := stream.NewReader(resp.Body, nil, 0)
			for r.Next() {
				answer = stream.AppendContent(answer, r.Data())
			}
			resp.Body.Close()
			msgs = append(msgs, map[string]string{"role": "assistant", "content": string(answer)})
		}
	}
}

// The simulator recorded and replayed: a chat client's conversations
// through the recording proxy, then the trace sent to a fresh simulator
// of the same kind. The replay's prompts are the recorded lengths, its
// answers the recorded ones, and the server takes from its cache what it
// took when it was recorded.
func TestRecordThenReplay(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tokensPerWord float64
	}{
		{"a token a word", 0},
		// Every word two tokens: an answer of N generated tokens (N
		// words) is 2N sent back, as a model's answer may read back
		// longer than it was generated; a turn's own words are sized
		// from the server's count of it (/tokenize), where the recorded
		// lengths would make the turn N tokens long.
		{"answers read back longer", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each message 6 tokens of template beyond its words, as
			// llama-server b4748's phi-3 template: a turn carrying a
			// conversation on is two messages more than the one before.
			cfg := sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 400000, Models: []string{"m"}, TokensPerWord: tc.tokensPerWord, MessageOverhead: 6}
			recordThenReplay(t, cfg)
		})
	}
}

func recordThenReplay(t *testing.T, cfg sim.Config) {
	_, upstream := startSim(t, cfg)
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream)
	p, err := record.New(record.Options{Upstream: u, Trace: w})
	if err != nil {
		t.Fatal(err)
	}
	px := httptest.NewServer(p)
	system := strings.Repeat("You answer questions about rivers and their deltas with care and at length. ", 120) // 9 kB: 4 blocks and a part
	chatThrough(t, px.URL, system, 2, 3)
	px.Close()
	p.Close()
	w.Close()

	_, fresh := startSim(t, cfg)
	plan := setup.RatePlan{Replay: &setup.Replay{File: path}, MaxInFlight: 8, Seed: 5, Timeout: 30 * time.Second, MetricsInterval: -1}
	res, err := RunRate(context.Background(), plan, setup.Endpoint{URL: fresh}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Replay
	if m == nil || m.Sent != 6 || m.InTrace != 6 {
		t.Fatalf("replay %+v, want the 6 recorded requests sent", m)
	}
	// The simulator counts exactly what /tokenize counts, so each turn,
	// sized from the turn before as the server read it and for the two
	// messages it adds, is its recorded length to a word's rounding.
	if m.Prompt == nil || m.Prompt.Requests != 6 || m.Prompt.MedianErrPct > 0.1 || m.Prompt.P90ErrPct > 0.1 {
		t.Errorf("prompt tokens %+v: want each within 0.1 %%", m.Prompt)
	}
	if m.Answer == nil || m.Answer.Replayed != m.Answer.Recorded {
		t.Errorf("answer tokens %+v: want the recorded", m.Answer)
	}
	if c := m.CachedShare; c != nil {
		t.Logf("cached share: %.3f replayed, %.3f recorded; prompts %+v", c.Replayed, c.Recorded, *m.Prompt)
	}
	if c := m.CachedShare; c == nil || c.Recorded < 0.3 || math.Abs(c.Replayed-c.Recorded) > 0.10 {
		t.Errorf("cached share %+v: want the recorded within 10 points", c)
	}
	if h := res.Headline(); !strings.HasPrefix(h, "The trace's 6 requests replayed at their recorded times") || !strings.Contains(h, "when it was recorded") {
		t.Errorf("headline %q", h)
	}
	for k, q := range m.Requests {
		if q.ReplayedIn == 0 || q.RecordedIn == 0 || q.ReplayedTTFTMs == nil || q.RecordedTTFTMs == nil || k > 0 && q.AtS < m.Requests[k-1].AtS {
			t.Errorf("request %d as charted: %+v", k, q)
		}
	}
	if len(res.Levels) != 1 || res.Levels[0].OK != 6 || res.Settings.Arrival != "trace" || res.Local.TraceFile != path {
		t.Errorf("levels %+v, arrival %q, trace %q", res.Levels, res.Settings.Arrival, res.Local.TraceFile)
	}
	raw, _ := io.ReadAll(mustOpen(t, path))
	if bytes.Contains(raw, []byte("rivers")) || bytes.Contains(raw, []byte("question")) {
		t.Error("the trace holds words of the prompts")
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A public trace: the first requests of Mooncake's conversation trace
// (engine/trace/testdata/SOURCES.md; 39 of their 1,014 blocks repeat an
// earlier request's, about 4 % of their tokens), replayed ten times
// faster against the simulator: every request sent, each prompt within
// 5 % of its length, each answer its length, and that prefix sharing
// served from the simulator's cache.
func TestReplayMooncakeExcerpt(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("trace", "testdata", "mooncake_conversation_1-300.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")[:40]
	path := filepath.Join(t.TempDir(), "mooncake.jsonl")
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
	cfg := sim.Config{Personality: sim.LlamaCpp, TokenInterval: 100 * time.Microsecond, PrefillRate: 1e7, Models: []string{"m"}, ContextLength: 262144}
	_, url := startSim(t, cfg)
	plan := setup.RatePlan{Replay: &setup.Replay{File: path, Speed: 10}, MaxInFlight: 16, Seed: 5, Timeout: 60 * time.Second, MetricsInterval: -1}
	res, err := RunRate(context.Background(), plan, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Replay
	if m != nil && m.ReplayCachedShare != nil {
		t.Logf("the replay's cache share: %.3f", *m.ReplayCachedShare)
	}
	if m == nil || m.Format != "mooncake" || m.Sent != 40 || res.Levels[0].OK != 40 {
		t.Fatalf("replay %+v", m)
	}
	if m.Prompt == nil || m.Prompt.MedianErrPct > 5 || m.Answer == nil || m.Answer.Replayed != m.Answer.Recorded {
		t.Errorf("prompts %+v, answers %+v", m.Prompt, m.Answer)
	}
	if m.ReplayCachedShare == nil || *m.ReplayCachedShare < 0.02 {
		t.Errorf("the replay's cache share %v: the trace's shared hash ids should be served from cache", m.ReplayCachedShare)
	}
}

// Requests recorded on the Anthropic Messages API, replayed against a
// server that does not serve it (the simulator, as llama-server b4748):
// sent as chat completions, and the result says so and why.
func TestReplayAnthropicWhereNotServed(t *testing.T) {
	var reqs []trace.Request
	for i := range 4 {
		api := trace.APIChat
		if i%2 == 0 {
			api = trace.APIAnthropic
		}
		reqs = append(reqs, trace.Request{Timestamp: int64(i * 20), InputLength: 200, OutputLength: 6, HashIDs: []int64{int64(i + 1)}, API: api, Stream: true})
	}
	path := writeTrace(t, reqs)
	_, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"m"}})
	res, err := RunRate(context.Background(), setup.RatePlan{Replay: &setup.Replay{File: path}, Seed: 5, Timeout: 30 * time.Second, MetricsInterval: -1}, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Replay
	if m == nil || res.Levels[0].OK != 4 || m.Anthropic != 0 || m.AsChat != 2 || m.NoAnthropic == "" {
		t.Fatalf("replay %+v, %d ok", m, res.Levels[0].OK)
	}
	if w := strings.Join(m.Words(), " "); !strings.Contains(w, "2 of them were recorded on another API (2 Anthropic Messages) and were sent as chat completions") ||
		!strings.Contains(w, "the server did not take an Anthropic Messages request") {
		t.Errorf("the notes: %s", w)
	}
}

// A turn waiting for the one before it gives up when the loop ends: a
// stop in the middle of a conversation ends the replay, it does not hang
// on a turn that will never be sent.
func TestReplayStopsWhileATurnWaits(t *testing.T) {
	rp := &replay{sched: Schedule{0, 0}, parent: []int{-1, 0}, think: make([]time.Duration, 2), reqs: make([]trace.Request, 2)}
	rp.pacer()
	ctx, cancel := context.WithCancel(context.Background())
	rp.bind(ctx)
	if at, ok := rp.Due(0); !ok || at != 0 {
		t.Fatalf("the first: %v %v", at, ok)
	}
	done := make(chan bool)
	go func() {
		_, ok := rp.Due(1)
		done <- ok
	}()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Error("the turn was let go after the loop ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn still waits for the one before it after the loop ended")
	}

	// The same through a run: stopped while the second turn waits for
	// the first's long answer.
	reqs := []trace.Request{
		{Timestamp: 0, InputLength: 600, OutputLength: 3000, HashIDs: []int64{1, 2}, DurationMs: 10},
		{Timestamp: 20, InputLength: 3700, OutputLength: 5, HashIDs: []int64{1, 2, 3}},
	}
	path := writeTrace(t, reqs)
	_, url := startSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6, Models: []string{"m"}})
	rctx, stop := context.WithCancel(context.Background())
	obs := Observer{Log: func(s string) {
		if strings.HasPrefix(s, "the trace: ") {
			time.AfterFunc(300*time.Millisecond, stop)
		}
	}}
	_, err := RunRate(rctx, setup.RatePlan{Replay: &setup.Replay{File: path}, Seed: 5, Timeout: 30 * time.Second, MetricsInterval: -1}, setup.Endpoint{URL: url}, obs)
	if !errors.Is(err, ErrInterrupted) {
		t.Errorf("stopped mid-replay: %v, want an interruption", err)
	}
}
