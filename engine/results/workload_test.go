package results

import (
	"strings"
	"testing"
)

func TestWorkloadWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    *Workload
		want string
	}{
		{"synthetic", nil, ""},
		{"prefix", &Workload{SharedPrefix: 2000, SharedPrefixWords: 785, PrefixGroups: 1}, "a shared 2,000-token system prompt"},
		{"groups and turns", &Workload{SharedPrefix: 500, PrefixGroups: 3, Turns: 10}, "a shared 500-token system prompt in 3 groups, 10-turn conversations"},
		{"file", &Workload{Prompts: &PromptsSource{Shape: "sharegpt", SHA256: "0123456789abcdef0123", Lines: 5002, Records: 5000, Skipped: 2}},
			"your prompts (sharegpt, 5,000 records in 5,002 entries, sha256 0123456789ab…, 2 malformed skipped)"},
	}
	for _, tc := range tests {
		if got := tc.w.Words(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPrefixCheckWords(t *testing.T) {
	t.Parallel()
	pc := &PrefixCheck{Pairs: 5, WarmTTFTMs: 211.2, ColdTTFTMs: 1608.9, Cache: &PromptCache{CachedTokens: 9723, PromptTokens: 9963, Requests: 5, Source: CacheFromPromptN}}
	if got, want := pc.Words(), "the server took 9,723 of 9,963 prompt tokens from its cache (98 %, by usage.prompt_tokens-timings.prompt_n); time to first token 211 ms with the shared prefix against 1.61 s cold, 87 % less"; got != want {
		t.Errorf("Words:\n got %q\nwant %q", got, want)
	}
	if got, want := pc.Headline(), "With the shared prefix cached, the time to first token was 211 ms against 1.61 s cold (87 % less); the server took 98 % of those prompts from its cache."; got != want {
		t.Errorf("Headline:\n got %q\nwant %q", got, want)
	}
	silent := &PrefixCheck{Pairs: 5, WarmTTFTMs: 100, ColdTTFTMs: 90}
	if got := silent.Words(); !strings.HasPrefix(got, "the server did not say what it took from its cache") || !strings.HasSuffix(got, "11 % more") {
		t.Errorf("a server that says nothing, warm slower: %q", got)
	}
	var none *PrefixCheck
	if none.Words() != "" || none.Headline() != "" {
		t.Error("no check says something")
	}
}

func TestTurnsAndSkipped(t *testing.T) {
	t.Parallel()
	turns := []TurnFigures{
		{Turn: 1, Requests: 4, OK: 4, TTFTMs: &Dist{N: 4, P50: 84}, PromptTokens: &Dist{N: 4, P50: 64}, Cache: &PromptCache{CachedTokens: 64, PromptTokens: 256}},
		{Turn: 2, Requests: 4, OK: 3, TTFTMs: &Dist{N: 3, P50: 47}, PromptTokens: &Dist{N: 3, P50: 194}},
	}
	if got, want := TurnsWords("1 req/s", turns), "At 1 req/s, by turn (time to first token p50, prompt tokens p50, share the server took from its cache): 1: 84 ms, 64, 25 %; 2: 47 ms, 194, —."; got != want {
		t.Errorf("TurnsWords:\n got %q\nwant %q", got, want)
	}
	p := &PromptsSource{Shape: "jsonl", Skipped: 25, SkippedLines: []int{4, 17}}
	if got, want := p.SkippedWords(), "25 malformed lines of the prompts file were skipped (lines 4, 17, …)."; got != want {
		t.Errorf("SkippedWords: got %q, want %q", got, want)
	}
	one := &PromptsSource{Shape: "sharegpt", Skipped: 1, SkippedLines: []int{12}}
	if got, want := one.SkippedWords(), "1 malformed entry of the prompts file was skipped (entry 12)."; got != want {
		t.Errorf("SkippedWords: got %q, want %q", got, want)
	}
}

// TestRateTableWorkloadColumns: a run with its own workload adds the
// lengths and the cache share; a synthetic run's table is as before.
func TestRateTableWorkloadColumns(t *testing.T) {
	t.Parallel()
	r := &RateResult{Settings: RateSettings{MaxInFlight: 4}, Levels: []RateLevel{{Rate: 2, Requests: 2, OK: 2, Sustained: true,
		PromptTokens: &Dist{N: 2, P50: 1994}, CompletionTokens: &Dist{N: 2, P50: 64}, Cache: &PromptCache{CachedTokens: 78, PromptTokens: 100}}}}
	if got := len(r.Table().Columns); got != len(RateColumns) {
		t.Errorf("synthetic: %d columns, want %d", got, len(RateColumns))
	}
	r.Settings.Workload = &Workload{SharedPrefix: 2000}
	tb := r.Table()
	row := tb.Rows[0]
	if got, want := strings.Join(row[len(row)-3:], " | "), "1994 | 64 | 78"; got != want || len(tb.Columns) != len(row) {
		t.Errorf("workload cells %q, want %q (%d columns, %d cells)", got, want, len(tb.Columns), len(row))
	}
	notes := strings.Join(r.Notes(), "\n")
	if !strings.Contains(notes, "The requests: a shared 2,000-token system prompt.") {
		t.Errorf("notes %q do not say the workload", notes)
	}
}

// TestServerQueueWords: a level whose latency grew with every request
// sent on time says the server's queue, and what would serve more: more
// at once where it answered one at a time, or nothing to set where it
// answered several at once and still fell behind.
func TestServerQueueWords(t *testing.T) {
	t.Parallel()
	// n requests due 500 ms apart; the server answers `at` at a time,
	// each in 2 s once begun, so its queue grows.
	level := func(at int) *RateLevel {
		s := &RateSamples{}
		free := make([]int64, at)
		for k := range 16 {
			due := int64(k) * 500_000
			i := 0
			for j := range free {
				if free[j] < free[i] {
					i = j
				}
			}
			first := max(due, free[i]) + 50_000
			end := first + 2_000_000
			free[i] = end
			s.Requests = append(s.Requests, RequestSample{Slot: k, StartUs: due, EndUs: end, TTFTUs: first - due, ChunkCount: 64})
			s.DueUs = append(s.DueUs, due)
		}
		return &RateLevel{Rate: 2, Requests: 16, OK: 16, AchievedRate: 0.5, LatencyGrew: true, Samples: s,
			LatencyMs: &Dist{N: 16, Min: 2050}, TTFTMs: &Dist{N: 16, Min: 50}}
	}
	one := level(1)
	if got := one.AnsweringAtOnce(); got != 1 {
		t.Errorf("one at a time: %d at once", got)
	}
	// A busy client stamps each end late, past the next answer's first
	// token (CI saw it): still one at a time.
	late := level(1)
	for i := range late.Samples.Requests {
		late.Samples.Requests[i].EndUs += 300_000
	}
	if got := late.AnsweringAtOnce(); got != 1 {
		t.Errorf("one at a time, ends stamped late: %d at once", got)
	}
	if w := one.ServerQueueWords(Detection{Family: FamilyOllama}); !strings.Contains(w, "requests queued inside the server and the queue kept growing") ||
		!strings.Contains(w, "it answered one request at a time; Ollama serves OLLAMA_NUM_PARALLEL") || !strings.Contains(w, "OLLAMA_NUM_PARALLEL=4") {
		t.Errorf("one at a time: %q", w)
	}
	two := level(2)
	if got := two.AnsweringAtOnce(); got != 2 {
		t.Errorf("two at a time: %d at once", got)
	}
	if w := two.ServerQueueWords(Detection{Family: FamilyLlamaCpp}); !strings.Contains(w, "it answered about 2 at once; llama-server serves as many requests at once as it has slots: start it with -np 4") {
		t.Errorf("two at a time, four needed: %q", w)
	}
	// The server says it has the slots already: no -np advice.
	if w := two.ServerQueueWords(Detection{Family: FamilyLlamaCpp, ParallelSlots: 4, ParallelSource: "/props total_slots"}); !strings.Contains(w, "it answered about 2 at once though it has 4 slots (/props total_slots), so more would not help") || strings.Contains(w, "-np") {
		t.Errorf("two at a time of four slots: %q", w)
	}
	if w := one.ServerQueueWords(Detection{Family: FamilyLlamaCpp, ParallelSlots: 2, ParallelSource: "/props total_slots"}); !strings.Contains(w, "it answered about 1 at once though it has 2 slots") {
		t.Errorf("one at a time of two slots: %q", w)
	}
	four := level(4)
	four.Rate = 1.5 // 1.5 × 2 s: 3 needed; 4 slots, staggered: 3.35 answering on average
	if w := four.ServerQueueWords(Detection{Family: FamilyOllama}); !strings.Contains(w, "it answered about 3 at once and still fell behind") || strings.Contains(w, "OLLAMA_NUM_PARALLEL") {
		t.Errorf("four at a time: %q", w)
	}
	four.LatencyGrew = false
	if w := four.ServerQueueWords(Detection{Family: FamilyOllama}); w != "" {
		t.Errorf("no growth: %q", w)
	}
}

// TestQuarterMedians: the medians growth is judged by and said with,
// type 7 (an even quarter's two middle values averaged), successes only,
// by intended send whatever the order given.
func TestQuarterMedians(t *testing.T) {
	t.Parallel()
	var reqs []RateRequest
	for k := range 12 { // quarters of 3: latencies 10, 20, 30 … 120 ms
		reqs = append(reqs, RateRequest{IntendedUs: int64(11-k) * 1000, SentUs: int64(11-k) * 1000, EndUs: int64(11-k)*1000 + int64(120-10*k)*1000})
	}
	first, last, ok := QuarterMedians(reqs, RateRequest.LatencyMs)
	if !ok || first != 20 || last != 110 {
		t.Errorf("got %v, %v, %v; want 20 and 110 (the requests sent first took 10, 20, 30 ms)", first, last, ok)
	}
	reqs[11].Error = "http_500" // intended first: the first quarter is now 20, 30
	if first, _, _ = QuarterMedians(reqs, RateRequest.LatencyMs); first != 25 {
		t.Errorf("first quarter with a failure: %v, want 25 (the mean of the two middle values)", first)
	}
	if _, _, ok := QuarterMedians(reqs[:7], RateRequest.LatencyMs); ok {
		t.Error("seven requests have no quarters to compare")
	}
}
