package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// workloadPlan is a small Kovara plan for a workload on a busy machine.
func workloadPlan() setup.KovaraPlan {
	p := smallPlan()
	p.InputTokens, p.OutputTokens = 64, 8
	p.Seed, p.FixedSeed, p.MetricsInterval = 3, true, -1
	return p
}

// truthsOf are the simulator's records of requests numbered from first,
// n of them, by number.
func truthsOf(srv *sim.Server, first int64, n int) map[int64][]sim.Truth {
	out := map[int64][]sim.Truth{}
	for _, tr := range srv.Truths() {
		if tr.N >= first && tr.N < first+int64(n) {
			out[tr.N] = append(out[tr.N], tr)
		}
	}
	return out
}

// TestKovaraSharedPrefixTruth: the Kovara plan at concurrency 1 and 4
// with a shared system prompt in two groups, on a llama.cpp-like
// simulator with a prompt cache. Each level's cache figures are the
// simulator's own record of its requests; the prefix check's requests
// are numbered after the last level's, so no number is sent twice; the
// cache hit is a note, not the prompt-cache problem; and the file cannot
// be published, in one sentence.
func TestKovaraSharedPrefixTruth(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: 2 * time.Millisecond, PrefillRate: 50000, BatchCapacity: 4, RecordTruth: true})
	p := workloadPlan()
	p.Workload.SharedPrefix, p.Workload.PrefixGroups = 400, 2
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	w := f.Local.Workload
	if w == nil || w.SharedPrefix != 400 || w.PrefixGroups != 2 || w.SharedPrefixWords == 0 {
		t.Fatalf("local.workload %+v, want the shared prefix of 400 tokens in 2 groups", w)
	}
	if len(f.Local.Levels) != 2 {
		t.Fatalf("%d levels, want 2", len(f.Local.Levels))
	}
	for i, loc := range f.Local.Levels {
		first := levelFirstNumber(p, i)
		truths := truthsOf(srv, first, p.Requests)
		var want int64
		for n, trs := range truths {
			if len(trs) != 1 {
				t.Errorf("request %d was sent %d times", n, len(trs))
			}
			want += int64(trs[0].CachedTokens)
		}
		pc := loc.PromptCache
		if len(truths) != p.Requests || pc == nil || pc.CachedTokens != want || pc.Requests != p.Requests || pc.Source == results.CacheFromMetrics {
			t.Errorf("concurrency %d: prompt cache %+v over %d requests served, want %d cached tokens, the simulator's record, request by request",
				loc.Concurrency, pc, len(truths), want)
		}
		if pc != nil && pc.Share() < 0.5 {
			t.Errorf("concurrency %d: %.0f %% from cache, want the system prompt cached", loc.Concurrency, 100*pc.Share())
		}
		if len(loc.ByTurn) != 0 {
			t.Errorf("concurrency %d: by_turn %+v without turns", loc.Concurrency, loc.ByTurn)
		}
	}
	pc := f.Local.PrefixCheck
	if pc == nil || pc.Pairs != prefixPairs || pc.Failed != 0 || pc.Cache == nil || pc.Cache.Share() < 0.5 {
		t.Fatalf("prefix check %+v, want %d pairs, the warm ones cached", pc, prefixPairs)
	}
	// The check's requests follow the last level's numbers: none of the
	// method's is sent twice, and the check's are all there.
	after := levelFirstNumber(p, len(p.Concurrency))
	if got := truthsOf(srv, after, prefixCheckRequests); len(got) < 2*prefixPairs {
		t.Errorf("%d of the prefix check's requests numbered from %d, want at least %d", len(got), after, 2*prefixPairs)
	}
	for n, trs := range truthsOf(srv, prompt.FirstWarmupRequest, int(after-prompt.FirstWarmupRequest)) {
		if len(trs) != 1 {
			t.Errorf("request %d was sent %d times", n, len(trs))
		}
	}

	ws := results.Warnings(f)
	problems, notes := results.Split(ws)
	if len(problems) != 0 {
		t.Errorf("problems %q: the cache hit is the point of a shared prefix", problems)
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{"The requests: a shared 400-token system prompt in 2 groups", "The shared prefix alone", "from its cache: ", "at concurrency 4"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	if h := results.Headline(f, ws); !strings.HasPrefix(h, "Complete.") || !strings.Contains(h, "With the shared prefix cached") {
		t.Errorf("headline %q", h)
	}

	f.Local.Simulated = false // only the workload stands in the way
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	payload, reasons := results.PublishCheck(data)
	if payload != nil || len(reasons) != 1 || reasons[0] != results.WorkloadUnpublishable {
		t.Errorf("publish check: %q, want only %q", reasons, results.WorkloadUnpublishable)
	}
	f.Local.Workload, f.Local.PrefixCheck = nil, nil
	if data, err = results.Marshal(f); err != nil {
		t.Fatal(err)
	}
	if _, reasons := results.PublishCheck(data); len(reasons) != 0 {
		t.Errorf("the same file without its workload: %q", reasons)
	}
}

// TestKovaraTurnsTruth: three-turn conversations at concurrency 2. Each
// level's by_turn has three turns, every prompt longer than the turn
// before it by a question and an answer, and their cached tokens add up
// to the simulator's record of the level.
func TestKovaraTurnsTruth(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: 2 * time.Millisecond, PrefillRate: 50000, BatchCapacity: 2, RecordTruth: true})
	p := workloadPlan()
	p.Concurrency, p.Requests, p.OutputTokens = []int{2}, 12, 16
	p.Workload.Turns = 3
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	if w := f.Local.Workload; w == nil || w.Turns != 3 || f.Local.PrefixCheck != nil {
		t.Fatalf("local.workload %+v, prefix check %+v; want 3 turns and no check", w, f.Local.PrefixCheck)
	}
	loc := f.Local.Levels[0]
	if got, want := len(loc.ByTurn), 3; got != want {
		t.Fatalf("%d turns in local.levels[0].by_turn, want %d", got, want)
	}
	var n int
	var cached int64
	for i, tf := range loc.ByTurn {
		n += tf.Requests
		if tf.Turn != i+1 || tf.OK != tf.Requests || tf.Cache == nil || tf.PromptTokens == nil || tf.TTFTMs == nil {
			t.Fatalf("turn %d: %+v", i+1, tf)
		}
		cached += tf.Cache.CachedTokens
		if i == 0 {
			continue
		}
		prev := loc.ByTurn[i-1]
		if grow := tf.PromptTokens.Min - prev.PromptTokens.Min; grow < 16+40 {
			t.Errorf("turn %d's prompts are %v tokens, turn %d's %v: the history did not grow by a question and an answer", tf.Turn, tf.PromptTokens.Min, prev.Turn, prev.PromptTokens.Min)
		}
	}
	if n != p.Requests {
		t.Errorf("the turns hold %d requests, the level sent %d", n, p.Requests)
	}
	var want int64
	for _, trs := range truthsOf(srv, levelFirstNumber(p, 0), p.Requests) {
		want += int64(trs[0].CachedTokens)
	}
	if cached != want || loc.PromptCache == nil || loc.PromptCache.CachedTokens != want {
		t.Errorf("the turns say %d cached tokens, the level %+v; the simulator served %d", cached, loc.PromptCache, want)
	}
	_, notes := results.Split(results.Warnings(f))
	if all := strings.Join(notes, "\n"); !strings.Contains(all, "At concurrency 2, by turn") || !strings.Contains(all, "3-turn conversations") {
		t.Errorf("notes:\n%s", all)
	}
}

// TestKovaraWorkloadRefused: a workload never runs as a shard, and the
// Kovara plan takes no prompts file; both before the server is touched.
func TestKovaraWorkloadRefused(t *testing.T) {
	t.Parallel()
	p := workloadPlan()
	p.Workload.Turns = 3
	_, err := run(context.Background(), p, setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{}, &Shard{Index: 1, Of: 2})
	var pe *PlanError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "cannot run as a shard") {
		t.Errorf("a shard with turns: %v, want a plan error", err)
	}
	p.Workload.Turns, p.Workload.PromptsFile = 0, "mine.jsonl"
	if _, err := Run(context.Background(), p, setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{}); !errors.As(err, &pe) || !strings.Contains(err.Error(), "prompts file is for the rate plan") {
		t.Errorf("a prompts file on the Kovara plan: %v", err)
	}
}

// TestKovaraWorkloadLike: "run again like this" keeps a run's shared
// prefix and turns, and says them.
func TestKovaraWorkloadLike(t *testing.T) {
	t.Parallel()
	f := &results.File{Runs: []results.Run{{ModelID: "m", InputTokens: 64, OutputTokens: 8, Concurrency: 1, Requests: 8, Warmup: 2, Environment: results.Environment{TimeoutS: 20}}},
		Local: results.Local{Workload: &results.Workload{SharedPrefix: 400, SharedPrefixWords: 300, PrefixGroups: 2, Turns: 3}}}
	p, err := PlanLike(f)
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Workload; w.SharedPrefix != 400 || w.PrefixGroups != 2 || w.Turns != 3 {
		t.Errorf("workload %+v", w)
	}
	if s := DescribePlan(p); !strings.HasSuffix(s, "; a shared 400-token system prompt in 2 groups, 3-turn conversations") {
		t.Errorf("described %q", s)
	}
}

// TestKovaraWorkloadContext: a conversation's last turn and the system
// prompt count against the server's context: short prompts the context
// holds are refused once 4 turns of them and a 1,500-token system prompt
// do not fit.
func TestKovaraWorkloadContext(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, sim.Config{Personality: sim.LlamaCpp, ContextLength: 2048, TokenInterval: time.Millisecond, PrefillRate: 1e6})
	p := workloadPlan()
	p.InputTokens, p.OutputTokens = 200, 64
	p.Workload.SharedPrefix, p.Workload.Turns = 1500, 4
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	var ce *ContextError
	if f != nil || !errors.As(err, &ce) || ce.Context != 2048 {
		t.Fatalf("got a file %v, err %v; want the plan refused by the server's context of 2048", f != nil, err)
	}
}
