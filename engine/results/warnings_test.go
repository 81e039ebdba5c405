package results

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestWarnings: each kind from the file alone, with its severity and
// words; a clean file has none.
func TestWarnings(t *testing.T) {
	t.Parallel()
	p := func(v float64) *float64 { return &v }
	no := false
	run := func(c, ok, errs int) Run {
		d := &Dist{N: ok, P50: 10, P95: p(12), P99: p(13)}
		return Run{Concurrency: c, Requests: ok + errs, OutputTokens: 256, Seed: 7,
			Metrics: Metrics{RequestsOK: ok, RequestsError: errs, TTFTMs: d, TokenCountMethod: TokenCountServerUsage}}
	}
	clean := func() *File {
		return &File{Complete: true, Runs: []Run{run(1, 100, 0), run(8, 100, 0)},
			Local: Local{FreshSeed: true, Compat: &Compat{IgnoreEOS: true, Usage: true}, Calibration: &Calibration{TargetTokens: 1024, Converged: true},
				Levels: []LevelLocal{{Concurrency: 1}, {Concurrency: 8}}}}
	}
	tests := []struct {
		name  string
		edit  func(f *File)
		kind  string
		sev   Severity
		words string
	}{
		{"failed", func(f *File) {
			f.Runs[0] = run(1, 58, 42)
			f.Local.Levels[0].Errors = map[string]int{"connection": 40, "http_503": 2}
		}, WarnFailed, SeverityProblem,
			"42 of 100 requests failed at concurrency 1 (connection: 40, HTTP 503: 2); the figures describe the 58 that succeeded"},
		{"all failed", func(f *File) {
			f.Runs[1] = run(8, 0, 100)
			f.Runs[1].Metrics.TTFTMs = nil
			f.Local.Levels[1].Errors = map[string]int{"timeout": 100}
		}, WarnFailed, SeverityProblem, "all 100 requests failed at concurrency 8 (timeout: 100): the level has no figures"},
		{"partial", func(f *File) {
			f.Complete, f.Local.PartialRun, f.Runs = false, &f.Runs[1], f.Runs[:1]
		}, WarnPartial, SeverityProblem,
			"the run stopped before the end: concurrency 1 finished; the interrupted level (concurrency 8) is kept apart as partial; an incomplete run cannot be published"},
		{"cache", func(f *File) {
			f.Local.FreshSeed = false
			f.Local.Levels[1].PromptCache = &PromptCache{CachedTokens: 900, PromptTokens: 1000, Source: CacheFromTimings}
		}, WarnPromptCache, SeverityProblem,
			"at concurrency 8 the server took 90% of the prompt tokens (900 of 1000) from its prompt cache (the server's own count per request, timings.cache_n): TTFT there measures cache hits, not a cold prefill; the seed was fixed (--seed 7) and the server had seen these prompts before; leave the seed out for new prompts each run; check the server's prompt-cache settings"},
		{"calibration", func(f *File) {
			pt := 900
			f.Local.Calibration = &Calibration{TargetTokens: 1024, PromptTokens: &pt, Attempts: make([]CalibrationAttempt, 2)}
		}, WarnCalibration, SeverityProblem, "prompt calibration did not converge in 2 requests: prompts are about 900 tokens against the 1024 asked for (-12.1 %)"},
		// A prompt a few tokens off does not make the figures wrong: a
		// note that says by how much (real llama-server: 251 of 256).
		{"calibration a little off", func(f *File) {
			pt := 251
			f.Local.Calibration = &Calibration{TargetTokens: 256, PromptTokens: &pt, Attempts: make([]CalibrationAttempt, 4)}
		}, WarnCalibration, SeverityNote, "prompts are about 251 tokens against the 256 asked for (-2.0 %), outside the method's 1 % after 4 calibration requests: the figures are for prompts of that length"},
		{"ignore_eos refused", func(f *File) { f.Local.Compat.IgnoreEOS = false }, WarnIgnoreEOS, SeverityNote,
			"the server refused ignore_eos, the setting that asks for answers of exactly the requested length: answers may stop before 256 tokens, so throughput is less comparable"},
		{"ignore_eos not honoured", func(f *File) { f.Runs[1].Environment.IgnoreEOSHonoured = &no }, WarnIgnoreEOS, SeverityNote,
			"at concurrency 8 the server ignored ignore_eos, the setting that asks for answers of exactly the requested length: some answers stopped before 256 tokens, so throughput is less comparable"},
		{"chunks", func(f *File) { f.Runs[0].Metrics.TokenCountMethod = TokenCountStreamChunks }, WarnChunkCounts, SeverityNote,
			"the server did not report token usage: tokens were counted as stream chunks, and a chunk may hold more than one token"},
		{"tails", func(f *File) {
			f.Runs[0].Metrics.TTFTMs.P99 = nil
			f.Runs[1].Metrics.TTFTMs.P95, f.Runs[1].Metrics.TTFTMs.P99 = nil, nil
		}, WarnTails, SeverityNote,
			"p95 and p99 are missing at concurrency 8 (a percentile needs 20 successes for p95 and 100 for p99); p99 is missing at concurrency 1 (fewer than 100 successes)"},
		{"tails of a small plan", func(f *File) {
			for i := range f.Runs {
				f.Runs[i].Requests = 50
				f.Runs[i].Metrics.TTFTMs.P99 = nil
			}
		}, WarnTails, SeverityNote,
			"p99 is missing at concurrency 1 and 8 (fewer than 100 successes; the plan asks 50 a level, so ask 100 or more for a p99)"},
		{"merged", func(f *File) { f.Local.Levels[1].Gaps, f.Local.Levels[1].MergedGaps = 20000, 1600 }, WarnMerged, SeverityNote,
			"at concurrency 8, 8% of the gaps between tokens (1600 of 20000) were two chunks read from the socket together (the client read late, or the server sent them at once): each such gap counts as 0 ms, so the low end of ITL (inter-token latency) there is not the model's decode pace"},
		{"telemetry", func(f *File) {
			f.Local.Telemetry = &Telemetry{Warnings: []string{"GPU telemetry stopped: nvidia-smi exited"}}
		}, WarnTelemetry, SeverityNote,
			"GPU telemetry stopped: nvidia-smi exited"},
		{"engine", func(f *File) { f.Local.Warnings = []string{"TLS certificate verification was off"} }, WarnRun, SeverityNote,
			"TLS certificate verification was off"},
		{"an old file's engine line is not said twice", func(f *File) {
			f.Local.FreshSeed = false
			f.Local.Levels[1].PromptCache = &PromptCache{CachedTokens: 900, PromptTokens: 1000, Source: CacheFromTimings}
			f.Local.Warnings = []string{"at concurrency 8 the server took 90% of the prompt tokens (900 of 1000) from its prompt cache (old words)"}
		}, WarnPromptCache, SeverityProblem, ""},
	}
	if ws := Warnings(clean()); len(ws) != 0 || Headline(clean(), ws) != "Complete." {
		t.Fatalf("a clean file warns %+v", ws)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := clean()
			tt.edit(f)
			ws := Warnings(f)
			if len(ws) != 1 || ws[0].Kind != tt.kind || ws[0].Severity != tt.sev || (tt.words != "" && ws[0].Text != tt.words) {
				t.Fatalf("got %+v\nwant one %s %s: %q", ws, tt.sev, tt.kind, tt.words)
			}
			problems, notes := Split(ws)
			want := 0
			if tt.sev == SeverityProblem {
				want = 1
			}
			if got := len(problems); got != want || len(problems)+len(notes) != 1 {
				t.Errorf("Split: %d problems and %d notes, want %d problems of 1", got, len(notes), want)
			}
			h := Headline(f, ws)
			if (h == "Complete.") == (tt.sev == SeverityProblem) {
				t.Errorf("headline %q with a %s", h, tt.sev)
			}
		})
	}
}

// TestPromptCacheBeyondShared: what every request shares by design (the
// template and the instruction, measured per run) is never a problem;
// only the cached share beyond it is, and its sentence names the family's
// own setting.
func TestPromptCacheBeyondShared(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	// 100 requests of about 270 prompt tokens, 16 of each shared by
	// design: 1,600 of 27,000 (6 %) from cache, as on a fresh llama-server.
	const requests, prompt = 100, 27000
	tests := []struct {
		name    string
		pc      PromptCache
		family  string
		fresh   bool
		problem bool
		words   []string
	}{
		{"the shared start only", PromptCache{CachedTokens: 1600, PromptTokens: prompt, Requests: requests, Source: CacheFromUsage, SharedTokens: n(16)},
			FamilyLlamaCpp, true, false, nil},
		{"the shared start, from b4748's prompt_n", PromptCache{CachedTokens: 1600, PromptTokens: prompt, Requests: requests, Source: CacheFromPromptN, SharedTokens: n(16)},
			FamilyLlamaCpp, true, false, nil},
		{"counters over the level's requests", PromptCache{CachedTokens: 1600, PromptTokens: prompt, Requests: requests, Source: CacheFromMetrics, Metrics: "vllm:prefix_cache_hits_total", SharedTokens: n(16)},
			FamilyVLLM, true, false, nil},
		{"a file that did not measure it", PromptCache{CachedTokens: 1600, PromptTokens: prompt, Requests: requests, Source: CacheFromUsage},
			FamilyLlamaCpp, true, true, []string{"6% of the prompt tokens (1600 of 27000)", "llama-server"}},
		{"a fixed seed met llama.cpp's cache", PromptCache{CachedTokens: 25000, PromptTokens: prompt, Requests: requests, Source: CacheFromTimings, SharedTokens: n(16)},
			FamilyLlamaCpp, false, true, []string{"93% of the prompt tokens (25000 of 27000)", "87% beyond the 16 tokens per request that every request shares by design", "--seed 7", "--cache-reuse", "--cache-ram 0", "cache_prompt"}},
		{"fresh prompts, vLLM", PromptCache{CachedTokens: 8000, PromptTokens: prompt, Requests: requests, Source: CacheFromMetrics, Metrics: "vllm:prefix_cache_hits_total", SharedTokens: n(16)},
			FamilyVLLM, true, true, []string{"24% beyond the 16 tokens", "these prompts were new to this run", "--no-enable-prefix-caching", "server-wide counters"}},
		{"SGLang", PromptCache{CachedTokens: 8000, PromptTokens: prompt, Requests: requests, Source: CacheFromUsage, SharedTokens: n(16)},
			FamilySGLang, true, true, []string{"--disable-radix-cache"}},
		{"Ollama", PromptCache{CachedTokens: 8000, PromptTokens: prompt, Requests: requests, Source: CacheFromUsage, SharedTokens: n(16)},
			FamilyOllama, true, true, []string{"documents no setting"}},
		{"b4748's own count", PromptCache{CachedTokens: 8000, PromptTokens: prompt, Requests: requests, Source: CacheFromPromptN, SharedTokens: n(16)},
			FamilyLlamaCpp, true, true, []string{"usage.prompt_tokens less the timings.prompt_n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc := tt.pc
			f := &File{Complete: true, Runs: []Run{{Concurrency: 4, Requests: requests, Seed: 7}},
				Local: Local{FreshSeed: tt.fresh, Detection: &Detection{Family: tt.family}, Levels: []LevelLocal{{Concurrency: 4, PromptCache: &pc}}}}
			text := PromptCacheText(f)
			if _, _, hit := PromptCacheHit(f); hit != tt.problem || (text != "") != tt.problem {
				t.Fatalf("problem %v (%q), want %v", hit, text, tt.problem)
			}
			for _, w := range tt.words {
				if !strings.Contains(text, w) {
					t.Errorf("%q lacks %q", text, w)
				}
			}
		})
	}
}

// TestHeadlineStopped: what a stopped run's page says matches what its
// file holds — a partial level, or none (a checkpoint left by a crash or
// a closed app).
func TestHeadlineStopped(t *testing.T) {
	t.Parallel()
	base := func() *File {
		return &File{Runs: []Run{{Concurrency: 1}, {Concurrency: 8}}, Local: Local{Levels: []LevelLocal{{Concurrency: 1}, {Concurrency: 8}}}}
	}
	tests := []struct {
		name      string
		edit      func(f *File)
		headline  string
		mentioned string // in the partial-run warning
	}{
		{"partial kept", func(f *File) { f.Local.PartialRun, f.Runs = &f.Runs[1], f.Runs[:1] },
			"Stopped before the end: the finished levels are kept, the interrupted one is shown as partial.",
			"the interrupted level (concurrency 8) is kept apart as partial"},
		{"checkpoint", func(f *File) { f.Runs = f.Runs[:1] },
			"Stopped before the end: the finished levels are kept; the level in progress was not saved (the app closed or crashed while it ran).",
			"the level in progress was not saved"},
		{"nothing finished", func(f *File) { f.Runs = nil },
			"Stopped before the end: no level finished, and the one in progress was not saved.",
			"no level finished"},
	}
	for _, tt := range tests {
		f := base()
		tt.edit(f)
		ws := Warnings(f)
		if got := Headline(f, ws); got != tt.headline {
			t.Errorf("%s: headline %q, want %q", tt.name, got, tt.headline)
		}
		if !slices.ContainsFunc(ws, func(w Warning) bool { return w.Kind == WarnPartial && strings.Contains(w.Text, tt.mentioned) }) {
			t.Errorf("%s: warnings %+v should say %q", tt.name, ws, tt.mentioned)
		}
	}
}

func TestErrorDetails(t *testing.T) {
	t.Parallel()
	f := &File{Local: Local{Levels: []LevelLocal{
		{Concurrency: 1},
		{Concurrency: 8, Errors: map[string]int{"http_503": 2, "connection": 5},
			Messages: map[string][]string{"connection": {"closed", "reset"}, "http_503": {"overloaded"}}},
	}}}
	got := ErrorDetails(f)
	want := []string{"at concurrency 8, connection ×5: closed", "at concurrency 8, HTTP 503 ×2: overloaded"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestWarningsRepeatedLevels: a capacity document measures a level twice;
// each probe's failures come from its own detail, and a cache hit on the
// repeat is found.
func TestWarningsRepeatedLevels(t *testing.T) {
	t.Parallel()
	p95 := 1.0
	d := &Dist{N: 20, P95: &p95}
	f := &File{Complete: true, Local: Local{FreshSeed: true, Levels: []LevelLocal{
		{Concurrency: 8, Errors: map[string]int{"http_503": 4}},
		{Concurrency: 8, Errors: map[string]int{"timeout": 1}, PromptCache: &PromptCache{CachedTokens: 500, PromptTokens: 1000, Source: CacheFromUsage}},
	}}, Runs: []Run{
		{Concurrency: 8, Requests: 24, Metrics: Metrics{RequestsOK: 20, RequestsError: 4, TTFTMs: d}},
		{Concurrency: 8, Requests: 24, Metrics: Metrics{RequestsOK: 23, RequestsTimeout: 1, TTFTMs: d}},
	}}
	got, _ := Split(Warnings(f))
	want := []string{
		"4 of 24 requests failed at concurrency 8 (HTTP 503: 4); the figures describe the 20 that succeeded",
		"1 of 24 requests failed at concurrency 8 (timeout: 1); the figures describe the 23 that succeeded",
		"at concurrency 8 the server took 50% of the prompt tokens (500 of 1000) from its prompt cache (the server's own count per request, usage.prompt_tokens_details.cached_tokens): TTFT there measures cache hits, not a cold prefill; these prompts were new to this run, yet the server reused more of them than the template and instruction they all start with: another client may have sent the same prompts, or its cache matches more than the start of a prompt; check the server's prompt-cache settings",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestQueueing: a level whose requests waited whole answers for a slot is
// a problem that estimates the slots and names the family's setting; a
// batching server's small TTFT growth is not; in a capacity search it is
// the answer's why, a note.
func TestQueueing(t *testing.T) {
	t.Parallel()
	run := func(c int, ttft, latency float64) Run {
		return Run{Concurrency: c, Requests: 40, Metrics: Metrics{RequestsOK: 40,
			TTFTMs: &Dist{N: 40, P50: ttft}, LatencyMs: &Dist{N: 40, P50: latency}}}
	}
	file := func(family string, runs ...Run) *File {
		return &File{Complete: true, Runs: runs, Local: Local{FreshSeed: true, Detection: &Detection{Family: family}}}
	}
	queueing := func(f *File) []Warning {
		var out []Warning
		for _, w := range Warnings(f) {
			if w.Kind == WarnQueueing {
				out = append(out, w)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		f     *File
		slots int    // 0: no warning
		words string // in the warning
	}{
		// Ollama's default, seen: TTFT p50 1.35 s alone, 52 s at 4.
		{"ollama one at a time", file(FamilyOllama, run(1, 1350, 13000), run(4, 40350, 52000)), 1, "OLLAMA_NUM_PARALLEL=4"},
		{"llama-server -np 2 at 8", file(FamilyLlamaCpp, run(1, 120, 2600), run(8, 7600, 10100)), 2, "-np 8"},
		{"a batching server", file(FamilyVLLM, run(1, 40, 3000), run(8, 60, 3400), run(32, 180, 4800)), 0, ""},
		{"alone, a whole answer's wait", file("", run(4, 39000, 50000)), 1, "parallel slots or maximum sequences"},
		{"alone, a long prefill is not a queue", file("", run(4, 900, 12000)), 0, ""},
		// A real Ollama with four slots, two 6,000-token prompts on two
		// CPU cores: both slowed, TTFT and answer alike.
		{"contention is not a queue", file(FamilyOllama, run(1, 4970, 5772), run(2, 9901, 11964)), 0, ""},
		// The simulator at 32 streams, 4 ms answers: milliseconds of
		// scheduling, not a queue.
		// A real Ollama with four slots at 8 (two CPU cores): the four
		// in flight share the cores and answer at half speed, the other
		// four wait for them.
		{"a queue behind slowed answers", file(FamilyOllama, run(1, 93.7, 820.2), run(8, 1872.6, 3276.7)), 4, "OLLAMA_NUM_PARALLEL=8"},
		{"milliseconds are not a queue", file(FamilyVLLM, run(1, 1.3, 7.4), run(8, 0.6, 8.0), run(32, 6.1, 10.2)), 0, ""},
	}
	for _, tt := range tests {
		ws := queueing(tt.f)
		if tt.slots == 0 {
			if len(ws) != 0 {
				t.Errorf("%s: %+v", tt.name, ws)
			}
			continue
		}
		want := fmt.Sprintf("the server served about %d %s at a time", tt.slots, Plural(tt.slots, "request", "requests"))
		if len(ws) != 1 || ws[0].Severity != SeverityProblem || !strings.Contains(ws[0].Text, want) || !strings.Contains(ws[0].Text, tt.words) {
			t.Errorf("%s: %+v, want a problem saying %q and %q", tt.name, ws, want, tt.words)
		}
	}
	// A capacity search on a real Ollama (one at a time): probes of 1,
	// 2, 4, 3, 2 and 3 users; each queued level said once.
	// A real llama-server -np 2 at 8: it says its slots, and its count
	// is quoted (the times alone estimated 1.5).
	np2 := file(FamilyLlamaCpp, run(1, 64, 316), run(8, 1643, 2007))
	np2.Local.Detection.ParallelSlots, np2.Local.Detection.ParallelSource = 2, "/props total_slots"
	if ws := queueing(np2); len(ws) != 1 || !strings.Contains(ws[0].Text, "the server serves 2 at a time, its parallel slots (/props total_slots)") || !strings.Contains(ws[0].Text, "-np 8") {
		t.Errorf("llama-server -np 2: %+v", ws)
	}
	// A real llama-server -np 4 with one thread on a busy machine queued
	// at 4 users: its slots were enough, so -np is not the advice.
	np4 := file(FamilyLlamaCpp, run(1, 143.2, 517.1), run(4, 849.3, 2211.2))
	np4.Local.Detection.ParallelSlots, np4.Local.Detection.ParallelSource = 4, "/props total_slots"
	if ws := queueing(np4); len(ws) != 1 || strings.Contains(ws[0].Text, "-np") || !strings.Contains(ws[0].Text, "it has 4 slots (/props total_slots), so more would not help") {
		t.Errorf("llama-server -np 4 short of compute: %+v", ws)
	}
	c := file(FamilyOllama, run(1, 102, 700), run(2, 1008, 1850), run(4, 3050, 3900), run(3, 2030, 2880), run(2, 990, 1840), run(3, 2010, 2860))
	c.Local.Plan = PlanCapacity
	ws := queueing(c)
	if len(ws) != 1 || ws[0].Severity != SeverityNote || !strings.Contains(ws[0].Text, "at concurrency 2 the requests waited") ||
		!strings.Contains(ws[0].Text, "about 1 request at a time (the same at concurrency 3 and 4)") {
		t.Errorf("capacity: %+v, want one note naming 2, then 3 and 4 once each", ws)
	}
}

// Ollama's streams that end unfinished are explained: its token repeat
// limit (seen on a real 0.24.0 with a looping model).
func TestOllamaEndedEarlyExplained(t *testing.T) {
	t.Parallel()
	d := &Dist{N: 16, P50: 100}
	f := &File{Complete: true, Runs: []Run{{Concurrency: 1, Requests: 20, Metrics: Metrics{RequestsOK: 16, RequestsError: 4, TTFTMs: d}}},
		Local: Local{FreshSeed: true, Detection: &Detection{Family: FamilyOllama}, Levels: []LevelLocal{{Concurrency: 1, Errors: map[string]int{"ended_early": 4}}}}}
	ws := Warnings(f)
	if len(ws) == 0 || !strings.Contains(ws[0].Text, "token repeat limit") {
		t.Errorf("warnings %+v", ws)
	}
	f.Local.Detection.Family = FamilyVLLM
	if ws := Warnings(f); strings.Contains(ws[0].Text, "repeat") {
		t.Errorf("another family's warning mentions Ollama's limit: %q", ws[0].Text)
	}
}
