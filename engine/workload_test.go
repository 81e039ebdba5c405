package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// lastTruths are the n highest-numbered requests the simulator recorded:
// a rate plan's last level, whose numbers follow the checks before it.
func lastTruths(srv *sim.Server, n int) []sim.Truth {
	ts := srv.Truths()
	slices.SortStableFunc(ts, func(a, b sim.Truth) int { return int(a.N - b.N) })
	return ts[max(len(ts)-n, 0):]
}

// TestRateSharedPrefixTruth: a shared system prompt in two groups on a
// llama.cpp-like simulator with a prompt cache. What the result says the
// server took from its cache, over the level and request by request, is
// the simulator's own record; the prefix check's warm requests are
// served the system prompt from cache and its cold ones are not.
func TestRateSharedPrefixTruth(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: 2 * time.Millisecond, PrefillRate: 50000, BatchCapacity: 4, RecordTruth: true})
	p := ratePlan(20)
	p.MaxInFlight, p.Requests = 4, 24
	p.Workload.SharedPrefix, p.Workload.PrefixGroups = 400, 2
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Settings.Workload
	if w == nil || w.SharedPrefix != 400 || w.PrefixGroups != 2 || w.SharedPrefixWords == 0 {
		t.Fatalf("settings.workload %+v, want the shared prefix of 400 tokens in 2 groups", w)
	}
	lv := &res.Levels[0]
	truths := lastTruths(srv, p.Requests)
	var want int64
	for _, tr := range truths {
		want += int64(tr.CachedTokens)
	}
	if lv.Cache == nil || lv.Cache.CachedTokens != want || lv.Cache.Requests != p.Requests {
		t.Fatalf("level cache %+v, want %d cached tokens over %d requests (the simulator's record)", lv.Cache, want, p.Requests)
	}
	var fromSamples int64
	for _, q := range lv.Samples.Requests {
		fromSamples += int64(q.CachedTokens)
	}
	if fromSamples != want {
		t.Errorf("the samples hold %d cached tokens, the simulator served %d", fromSamples, want)
	}
	// Each group's system prompt is cached once its first request has
	// been served: at least all but a group's first request (and one
	// per group the cold check left in the slot) take it from cache.
	hits := 0
	for _, tr := range truths {
		if tr.CachedTokens >= 300 {
			hits++
		}
	}
	if hits < p.Requests-4 {
		t.Errorf("%d of %d requests took the system prompt from cache, want all but the groups' first", hits, p.Requests)
	}

	pc := res.Prefix
	if pc == nil || pc.Pairs != prefixPairs || pc.Failed != 0 {
		t.Fatalf("prefix check %+v, want %d pairs and no failure", pc, prefixPairs)
	}
	// Cold, the prefix primed again, then warm: the eleven before the
	// level.
	check := lastTruths(srv, p.Requests+2*prefixPairs+1)[:2*prefixPairs+1]
	var warm, cold int64
	for i, tr := range check {
		switch {
		case i < prefixPairs:
			cold += int64(tr.CachedTokens)
		case i > prefixPairs:
			warm += int64(tr.CachedTokens)
		}
	}
	if pc.Cache == nil || pc.Cache.CachedTokens != warm {
		t.Errorf("prefix check's warm cache %+v, the simulator served %d", pc.Cache, warm)
	}
	if pc.ColdCache == nil || pc.ColdCache.CachedTokens != cold {
		t.Errorf("prefix check's cold cache %+v, the simulator served %d", pc.ColdCache, cold)
	}
	if share := pc.Cache.Share(); share < 0.5 || pc.ColdCache.Share() > 0.1 {
		t.Errorf("warm share %.2f, cold share %.2f: want the system prompt cached warm and not cold", share, pc.ColdCache.Share())
	}
	if d := pc.WarmPromptTokens - pc.ColdPromptTokens; d < -20 || d > 20 {
		t.Errorf("warm prompts %d tokens, cold %d: the cold check must send the same lengths", pc.WarmPromptTokens, pc.ColdPromptTokens)
	}
	if got := pc.WarmPromptTokens - 64; got < 360 || got > 440 {
		t.Errorf("the system prompt came out %d tokens, want about 400", got)
	}
}

// TestRateTurnsTruth: three-turn conversations through two slots. Every
// turn's request carries the history (its prompt grows by the last
// turn's question and answer), the result's cached tokens by turn add up
// to the simulator's record, and from the second turn on the server
// takes the history from its cache.
func TestRateTurnsTruth(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: 2 * time.Millisecond, PrefillRate: 50000, BatchCapacity: 2, RecordTruth: true})
	p := ratePlan(10)
	p.MaxInFlight, p.Requests, p.OutputTokens = 2, 18, 16
	p.Workload.Turns = 3
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	lv := &res.Levels[0]
	if got, want := len(lv.ByTurn), 3; got != want {
		t.Fatalf("%d turns in the result, want %d", got, want)
	}
	var n int
	var cached int64
	for i, tf := range lv.ByTurn {
		n += tf.Requests
		if tf.Turn != i+1 || tf.OK != tf.Requests || tf.Cache == nil || tf.PromptTokens == nil {
			t.Fatalf("turn %d: %+v", i+1, tf)
		}
		cached += tf.Cache.CachedTokens
		if i == 0 {
			continue
		}
		prev := lv.ByTurn[i-1]
		// The history adds the last question and its 16-token answer.
		if grow := tf.PromptTokens.Min - prev.PromptTokens.Min; grow < 16+40 {
			t.Errorf("turn %d's prompts are %v tokens, turn %d's %v: the history did not grow by a question and an answer", tf.Turn, tf.PromptTokens.Min, prev.Turn, prev.PromptTokens.Min)
		}
		if tf.Cache.Share() < 0.5 {
			t.Errorf("turn %d: %.0f %% from cache, want the history cached", tf.Turn, tf.Cache.Share()*100)
		}
	}
	if n != p.Requests {
		t.Errorf("the turns hold %d requests, the level sent %d", n, p.Requests)
	}
	var want int64
	for _, tr := range lastTruths(srv, p.Requests) {
		want += int64(tr.CachedTokens)
	}
	if cached != want {
		t.Errorf("the turns say %d cached tokens, the simulator served %d", cached, want)
	}
	turns := map[int]int{}
	for _, q := range lv.Samples.Requests {
		turns[q.Turn]++
	}
	if turns[0] != 0 || turns[1] < 6 {
		t.Errorf("samples by turn %v: every request keeps its turn", turns)
	}
	if s := results.TurnsWords("10 req/s", lv.ByTurn); !strings.Contains(s, "3: ") {
		t.Errorf("the notes say %q", s)
	}
}

// TestRatePromptsFile: a person's prompts, each with its own answer
// length, are what the server got; the result names the file by its
// hash and counts and holds none of its text.
func TestRatePromptsFile(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.VLLM, TokenInterval: time.Millisecond, PrefillRate: 50000, BatchCapacity: 4, RecordTruth: true})
	dir := t.TempDir()
	var lines []string
	caps := map[int]bool{}
	for i := range 5 {
		caps[3+i] = true
		lines = append(lines, fmt.Sprintf(`{"messages":[{"role":"system","content":"You answer as zebrafinch%d."},{"role":"user","content":"Tell me about item %d %s"}],"max_tokens":%d}`,
			i, i, strings.Repeat("word ", 10*i), 3+i))
	}
	path := filepath.Join(dir, "mine.jsonl")
	data := []byte(strings.Join(lines, "\n") + "\n")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p := ratePlan(40)
	p.MaxInFlight, p.Requests = 4, 10
	p.Workload.PromptsFile = path
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	src := res.Settings.Workload.Prompts
	if src == nil || src.SHA256 != hex.EncodeToString(sum[:]) || src.Records != 5 || src.Lines != 5 || src.Shape != "jsonl" {
		t.Fatalf("prompts source %+v", src)
	}
	if res.Local.PromptsFile != path {
		t.Errorf("local.prompts_file %q, want %q", res.Local.PromptsFile, path)
	}
	// Every request the simulator served was one of the file's (no
	// request number in it), with its own answer length.
	served := 0
	for _, tr := range srv.Truths() {
		if tr.N != -1 {
			continue
		}
		served++
		if !caps[tr.CompletionTokens] {
			t.Errorf("a request got %d tokens, not one of the file's max_tokens", tr.CompletionTokens)
		}
	}
	if served != p.Requests {
		t.Errorf("the simulator served %d of the file's prompts, want %d", served, p.Requests)
	}
	lv := &res.Levels[0]
	if lv.CompletionTokens == nil || lv.CompletionTokens.Min < 3 || lv.CompletionTokens.Max > 7 || lv.PromptTokens == nil || lv.PromptTokens.Max <= lv.PromptTokens.Min {
		t.Errorf("lengths: answers %+v, prompts %+v; want the file's spread", lv.CompletionTokens, lv.PromptTokens)
	}
	out, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); strings.Contains(s, "zebrafinch") {
		t.Error("the result holds the prompts' text")
	}
}

// TestRatePromptsFileRefused: a malformed line stops the plan before the
// server is touched, named by its number.
func TestRatePromptsFileRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, []byte("{\"prompt\":\"one\"}\n{\"prompt\":\"two\"}\n{\"prompt\": tree}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := ratePlan(1)
	p.Workload.PromptsFile = path
	_, err := RunRate(context.Background(), p, setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{})
	var pe *PlanError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("got %v, want a plan error naming line 3", err)
	}
}

// TestRateSharedPrefixFromMetrics: a vLLM-like server that says nothing
// of its cache in its answers (no --enable-prompt-tokens-details) but
// counts it in /metrics: the level's and the prefix check's cache shares
// come from the counters, and are the simulator's record.
func TestRateSharedPrefixFromMetrics(t *testing.T) {
	t.Parallel()
	on := true
	srv, url := startSim(t, sim.Config{Personality: sim.VLLM, PromptCache: &on, TokenInterval: 2 * time.Millisecond, PrefillRate: 50000, BatchCapacity: 4, RecordTruth: true})
	p := ratePlan(20)
	p.MaxInFlight, p.Requests, p.MetricsInterval = 4, 16, 0
	p.Workload.SharedPrefix = 300
	res, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	lv := &res.Levels[0]
	var want int64
	for _, tr := range lastTruths(srv, p.Requests) {
		want += int64(tr.CachedTokens)
	}
	if lv.Cache == nil || lv.Cache.Source != results.CacheFromMetrics || lv.Cache.CachedTokens != want {
		t.Fatalf("level cache %+v, want %d tokens from /metrics (the simulator's record)", lv.Cache, want)
	}
	if pc := res.Prefix; pc == nil || pc.Cache == nil || pc.Cache.Source != results.CacheFromMetrics || pc.Cache.Share() < 0.5 || pc.ColdCache == nil || pc.ColdCache.Share() > 0.1 {
		t.Fatalf("prefix check %+v: want warm cached and cold not, from /metrics", pc)
	}
}

// TestRateSharedPrefixFreshEachRun: without --seed, a run's system
// prompt is its own, as its questions are: the next run's first request
// with it finds nothing of it in the server's cache.
func TestRateSharedPrefixFreshEachRun(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 200000, BatchCapacity: 2, RecordTruth: true})
	p := ratePlan(20)
	p.MaxInFlight, p.Requests, p.FixedSeed, p.Warmup = 2, 4, false, 0
	p.Workload.SharedPrefix = 300
	if _, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{}); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Truths())
	if _, err := RunRate(context.Background(), p, setup.Endpoint{URL: url}, Observer{}); err != nil {
		t.Fatal(err)
	}
	ts := srv.Truths()
	slices.SortStableFunc(ts, func(a, b sim.Truth) int { return a.Arrived.Compare(b.Arrived) })
	for _, tr := range ts[before:] {
		if tr.PromptTokens > 300 { // the second run's first request with its system prompt
			if tr.CachedTokens > 100 {
				t.Errorf("the second run's first request with its system prompt took %d of %d tokens from cache: the first run's prompt again", tr.CachedTokens, tr.PromptTokens)
			}
			return
		}
	}
	t.Fatal("the second run sent no request with its system prompt")
}

// TestRatePromptsFileStopped: a run stopped while its prompts file is
// read ends as a stop (ErrInterrupted, nothing measured, nothing sent to
// the server), not as a bad file, and the live view said it was reading
// the file.
func TestRatePromptsFileStopped(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.VLLM, TokenInterval: time.Millisecond, RecordTruth: true})
	path := filepath.Join(t.TempDir(), "mine.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat(`{"prompt":"Tell me about zebrafinches."}`+"\n", 5000)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := ratePlan(40)
	p.Workload.PromptsFile = path
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	live := NewLive()
	res, err := RunRate(ctx, p, setup.Endpoint{URL: url}, Observer{Live: live})
	var pe *PlanError
	if !errors.Is(err, ErrInterrupted) || errors.As(err, &pe) || res != nil || !strings.Contains(err.Error(), "prompts file") {
		t.Fatalf("stopped while reading the prompts file: %v (result %v), want a stop and no result", err, res != nil)
	}
	if n := len(srv.Truths()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	if got := live.Snapshot(); got.Phase != PhasePrompts {
		t.Errorf("live phase %q, want %q", got.Phase, PhasePrompts)
	}
}
