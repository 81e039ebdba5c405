package compare

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestKeyOf(t *testing.T) {
	r := baseRun(8)
	got := KeyOf(r)
	want := Key{
		ModelID:       "acme/llama-8b",
		ModelRevision: NullString{"abc123", true},
		Engine:        NullString{"vllm", true},
		EngineVersion: NullString{"0.10.1", true},
		Accelerator:   NullString{"H100-SXM", true},
		GPUCount:      NullInt{1, true},
		Precision:     NullString{"bf16", true},
		Profile:       NullString{"default", true},
		InputTokens:   1024,
		OutputTokens:  256,
		Concurrency:   8,
		RunKind:       "hardware",
	}
	if got != want {
		t.Fatalf("KeyOf = %+v\nwant    %+v", got, want)
	}
	// Equal values behind different pointers make equal keys.
	if a, b := KeyOf(baseRun(8)), KeyOf(baseRun(8)); a != b {
		t.Error("keys of identical records differ")
	}
	// Null differs from a value, and from the empty string.
	n := baseRun(8)
	n.EngineVersion = nil
	e := baseRun(8)
	e.EngineVersion = ptr("")
	if KeyOf(n) == KeyOf(r) || KeyOf(n) == KeyOf(e) {
		t.Error("a null condition compares equal to a value")
	}
	// Measurement-only fields are not in the key.
	m := baseRun(8)
	m.Requests, m.Seed, m.Warmup = 200, 1, 0
	m.Metrics.OutputThroughput = 1
	if KeyOf(m) != KeyOf(r) {
		t.Error("non-key fields changed the key")
	}
}

func TestRunsComparable(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*results.Run)
		ok    bool
		diffs []Difference
	}{
		{"identical", func(*results.Run) {}, true, nil},
		{"concurrency", func(r *results.Run) { r.Concurrency = 32 }, false,
			[]Difference{{"concurrency", "concurrency", []string{"8", "32"}}}},
		{"null vs value", func(r *results.Run) { r.EngineVersion = nil }, false,
			[]Difference{{"engine_version", "engine version", []string{"0.10.1", "—"}}}},
		{"two at once", func(r *results.Run) { r.Precision = ptr("fp8"); r.GPUCount = ptr(2) }, false,
			[]Difference{
				{"gpu_count", "GPU count", []string{"1", "2"}},
				{"precision", "precision", []string{"bf16", "fp8"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := baseRun(8)
			tt.edit(&b)
			ok, diffs := RunsComparable(baseRun(8), b)
			if ok != tt.ok || !reflect.DeepEqual(diffs, tt.diffs) {
				t.Errorf("RunsComparable = %v, %#v\nwant %v, %#v", ok, diffs, tt.ok, tt.diffs)
			}
		})
	}
}

func TestVerdictIdentical(t *testing.T) {
	v := VerdictOf(session(std), session(std))
	if !v.Comparable || len(v.Differences) != 0 || len(v.Notes) != 0 {
		t.Fatalf("got %+v, want comparable with nothing to say", v)
	}
	if got, want := v.Sentence(), "These runs are comparable."; got != want {
		t.Errorf("Sentence = %q, want %q", got, want)
	}
}

func TestVerdictSingleConditionDiffers(t *testing.T) {
	tests := []struct {
		condition, label string
		edit             func(*results.Run)
		other            string
		base             string
	}{
		{"model_id", "model", func(r *results.Run) { r.ModelID = "acme/llama-70b" }, "acme/llama-70b", "acme/llama-8b"},
		{"model_revision", "model revision", func(r *results.Run) { r.ModelRevision = ptr("def456") }, "def456", "abc123"},
		{"engine", "engine", func(r *results.Run) { r.Engine = ptr("sglang") }, "sglang", "vllm"},
		{"engine_version", "engine version", func(r *results.Run) { r.EngineVersion = ptr("0.11.0") }, "0.11.0", "0.10.1"},
		{"accelerator", "accelerator", func(r *results.Run) { r.Accelerator = ptr("RTX 4090") }, "RTX 4090", "H100-SXM"},
		{"gpu_count", "GPU count", func(r *results.Run) { r.GPUCount = ptr(4) }, "4", "1"},
		{"precision", "precision", func(r *results.Run) { r.Precision = ptr("fp8") }, "fp8", "bf16"},
		{"profile", "profile", func(r *results.Run) { r.Profile = ptr("long") }, "long", "default"},
		{"input_tokens", "input tokens", func(r *results.Run) { r.InputTokens = 2048 }, "2048", "1024"},
		{"output_tokens", "output tokens", func(r *results.Run) { r.OutputTokens = 512 }, "512", "256"},
		{"run_kind", "run kind", func(r *results.Run) { r.RunKind = results.RunKindProtocol }, "protocol", "hardware"},
	}
	for _, tt := range tests {
		t.Run(tt.condition, func(t *testing.T) {
			v := VerdictOf(session(std), session(std, tt.edit))
			want := []Difference{{Condition: tt.condition, Label: tt.label, Values: []string{tt.base, tt.other}}}
			if v.Comparable {
				t.Error("Comparable = true, want false")
			}
			if !reflect.DeepEqual(v.Differences, want) {
				t.Errorf("Differences = %#v\nwant %#v", v.Differences, want)
			}
			wantSentence := "Not comparable: " + tt.label + " differs (" + tt.base + " vs " + tt.other + ")."
			if tt.condition == "run_kind" {
				// Said in plain words where first met (#47).
				wantSentence += " (protocol: a protocol test, a run made with no kovara.yaml stating the hardware it ran on; hardware: a run made with one.)"
			}
			if got := v.Sentence(); got != wantSentence {
				t.Errorf("Sentence = %q, want %q", got, wantSentence)
			}
		})
	}
}

func TestVerdictNulls(t *testing.T) {
	protocol := func(r *results.Run) {
		r.RunKind = results.RunKindProtocol
		r.ModelRevision, r.Engine, r.EngineVersion, r.Accelerator = nil, nil, nil, nil
		r.GPUCount, r.Precision, r.Profile = nil, nil, nil
	}
	t.Run("null equals null", func(t *testing.T) {
		v := VerdictOf(session(std, protocol), session(std, protocol))
		if !v.Comparable || v.Differences != nil {
			t.Errorf("got %+v, want comparable", v)
		}
	})
	t.Run("null vs value", func(t *testing.T) {
		v := VerdictOf(session(std), session(std, func(r *results.Run) { r.GPUCount = nil }))
		want := []Difference{{"gpu_count", "GPU count", []string{"1", "—"}}}
		if v.Comparable || !reflect.DeepEqual(v.Differences, want) {
			t.Errorf("got %+v, want %#v", v, want)
		}
		if got, want := v.Sentence(), "Not comparable: GPU count differs (1 vs —)."; got != want {
			t.Errorf("Sentence = %q, want %q", got, want)
		}
	})
	t.Run("value vs null", func(t *testing.T) {
		v := VerdictOf(session(std, func(r *results.Run) { r.Precision = nil }), session(std))
		want := []Difference{{"precision", "precision", []string{"—", "bf16"}}}
		if v.Comparable || !reflect.DeepEqual(v.Differences, want) {
			t.Errorf("got %+v, want %#v", v, want)
		}
	})
}

func TestVerdictThreeFilesOneOdd(t *testing.T) {
	fp8 := func(r *results.Run) { r.Precision = ptr("fp8") }
	v := VerdictOf(session(std), session(std), session(std, fp8))
	want := []Difference{{"precision", "precision", []string{"bf16", "bf16", "fp8"}}}
	if v.Comparable || !reflect.DeepEqual(v.Differences, want) {
		t.Fatalf("got %+v, want %#v", v, want)
	}
	if got, want := v.Sentence(), "Not comparable: precision differs (bf16 vs bf16 vs fp8)."; got != want {
		t.Errorf("Sentence = %q, want %q", got, want)
	}
	// The odd one first is as odd.
	v = VerdictOf(session(std, fp8), session(std), session(std))
	if v.Comparable || len(v.Differences) != 1 || !slices.Equal(v.Differences[0].Values, []string{"fp8", "bf16", "bf16"}) {
		t.Errorf("odd first: got %+v", v)
	}
}

func TestVerdictConcurrencyLevels(t *testing.T) {
	tests := []struct {
		name       string
		files      []*results.File
		comparable bool
		diffs      []Difference
		notes      []string
		sentence   string
	}{
		{
			name:       "one extra level each",
			files:      []*results.File{session([]int{1, 8, 32}), session([]int{1, 8, 64})},
			comparable: true,
			notes:      []string{"concurrency 32 is only in run 1", "concurrency 64 is only in run 2"},
			sentence:   "These runs are comparable.",
		},
		{
			name:       "three files, partly shared",
			files:      []*results.File{session([]int{1, 8}), session([]int{64, 8, 1}), session([]int{1, 64})},
			comparable: true,
			notes:      []string{"concurrency 8 is only in runs 1 and 2", "concurrency 64 is only in runs 2 and 3"},
			sentence:   "These runs are comparable.",
		},
		{
			name:       "record order does not matter",
			files:      []*results.File{session([]int{32, 1, 8}), session([]int{1, 8, 32})},
			comparable: true,
			sentence:   "These runs are comparable.",
		},
		{
			name:     "no shared level",
			files:    []*results.File{session([]int{1, 8}), session([]int{32})},
			diffs:    []Difference{{"concurrency", "concurrency levels", []string{"1, 8", "32"}}},
			sentence: "Not comparable: no concurrency level is in every run (1, 8 vs 32).",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := VerdictOf(tt.files...)
			if v.Comparable != tt.comparable || !reflect.DeepEqual(v.Differences, tt.diffs) || !reflect.DeepEqual(v.Notes, tt.notes) {
				t.Errorf("got comparable=%v diffs=%#v notes=%#v\nwant comparable=%v diffs=%#v notes=%#v",
					v.Comparable, v.Differences, v.Notes, tt.comparable, tt.diffs, tt.notes)
			}
			if got := v.Sentence(); got != tt.sentence {
				t.Errorf("Sentence = %q, want %q", got, tt.sentence)
			}
		})
	}
}

func TestVerdictNotes(t *testing.T) {
	incomplete := session(std)
	incomplete.Complete = false
	simulated := session(std)
	simulated.Local.Simulated = true
	chunks := func(r *results.Run) { r.Metrics.TokenCountMethod = results.TokenCountStreamChunks }

	tests := []struct {
		name  string
		files []*results.File
		notes []string
	}{
		{"token counting differs",
			[]*results.File{session(std), session(std, chunks), session(std)},
			[]string{"run 2: the server did not report token usage: tokens were counted as stream chunks, and a chunk may hold more than one token",
				"output tokens were counted differently (server_usage in runs 1 and 3, stream_chunks in run 2), so token figures may not line up exactly"}},
		{"ignore_eos not honoured",
			[]*results.File{session(std), session(std, atLevel(8, func(r *results.Run) { r.Environment.IgnoreEOSHonoured = ptr(false) }))},
			[]string{"run 2: at concurrency 8 the server ignored ignore_eos, the setting that asks for answers of exactly the requested length: some answers stopped before 256 tokens, so throughput is less comparable"}},
		{"ignore_eos unknown is not a note",
			[]*results.File{session(std), session(std, func(r *results.Run) { r.Environment.IgnoreEOSHonoured = nil })},
			nil},
		{"incomplete",
			[]*results.File{session(std), incomplete},
			[]string{"run 2: the run stopped before the end: concurrency 1, 8, 32 finished; the level in progress was not saved; an incomplete run cannot be published"}},
		{"both incomplete",
			[]*results.File{incomplete, incomplete},
			[]string{"run 1: the run stopped before the end: concurrency 1, 8, 32 finished; the level in progress was not saved; an incomplete run cannot be published",
				"run 2: the run stopped before the end: concurrency 1, 8, 32 finished; the level in progress was not saved; an incomplete run cannot be published"}},
		{"simulated",
			[]*results.File{simulated, session(std)},
			[]string{"run 1 comes from the built-in simulator, not a real server"}},
		{"output length off by more than 1 %",
			[]*results.File{session(std), session(std,
				atLevel(8, func(r *results.Run) { r.Metrics.OutputTokensMean = ptr(231.4) }),
				atLevel(32, func(r *results.Run) { r.Metrics.OutputTokensMean = ptr(259.0) }))},
			[]string{"run 2: the mean output length is more than 1 % off the requested length (231.4 of 256 tokens at concurrency 8; 259.0 of 256 tokens at concurrency 32)"}},
		{"output length within 1 %",
			[]*results.File{session(std), session(std, func(r *results.Run) { r.Metrics.OutputTokensMean = ptr(253.5) })},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := VerdictOf(tt.files...)
			if !v.Comparable {
				t.Errorf("notes must not decide comparability: %+v", v)
			}
			if !reflect.DeepEqual(v.Notes, tt.notes) {
				t.Errorf("Notes = %#v\nwant %#v", v.Notes, tt.notes)
			}
		})
	}
}

func TestVerdictOddInputs(t *testing.T) {
	mixed := session(std, atLevel(32, func(r *results.Run) { r.EngineVersion = ptr("0.11.0") }))
	empty := session(nil)
	stoppedEarly := session(nil)
	partial := session([]int{8}).Runs[0]
	stoppedEarly.Local.PartialRun = &partial

	tests := []struct {
		name       string
		files      []*results.File
		comparable bool
		diffs      []Difference
		sentence   string
	}{
		{"no files", nil, false, nil, "There are no runs to compare."},
		{"one file", []*results.File{session(std)}, true, nil,
			"There is only one run, so there is nothing to compare it with."},
		{"a file mixing conditions", []*results.File{session(std), mixed}, false,
			[]Difference{{"engine_version", "engine version", []string{"0.10.1", "0.10.1 / 0.11.0"}}},
			"Not comparable: engine version differs (0.10.1 vs 0.10.1 / 0.11.0)."},
		{"one file mixing conditions", []*results.File{mixed}, false,
			[]Difference{{"engine_version", "engine version", []string{"0.10.1 / 0.11.0"}}},
			"Not comparable: engine version differs (0.10.1 / 0.11.0)."},
		{"a file without records", []*results.File{session(std), empty}, false, nil,
			"Not comparable: run 2 measured no level, so there is nothing of it to compare."},
		{"a run stopped in its first level", []*results.File{session(std), stoppedEarly}, false, nil,
			"Not comparable: run 2 ended during its first level (concurrency 8): nothing finished to compare, and its partial level is shown with the run, never compared."},
		{"a nil file", []*results.File{nil, session(std)}, false, nil,
			"Not comparable: run 1 is missing."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := VerdictOf(tt.files...)
			if v.Comparable != tt.comparable || !reflect.DeepEqual(v.Differences, tt.diffs) {
				t.Errorf("got comparable=%v diffs=%#v, want %v %#v", v.Comparable, v.Differences, tt.comparable, tt.diffs)
			}
			if got := v.Sentence(); got != tt.sentence {
				t.Errorf("Sentence = %q, want %q", got, tt.sentence)
			}
		})
	}
}

func TestSentence(t *testing.T) {
	engine := func(r *results.Run) { r.EngineVersion = ptr("0.11.0") }
	fp8 := func(r *results.Run) { r.Precision = ptr("fp8") }
	prof := func(r *results.Run) { r.Profile = ptr("long") }
	tests := []struct {
		name string
		v    Verdict
		want string
	}{
		{"comparable", VerdictOf(session(std), session(std)), "These runs are comparable."},
		{"two differences",
			VerdictOf(session(std), session(std, engine, fp8)),
			"Not comparable: engine version differs (0.10.1 vs 0.11.0) and precision differs (bf16 vs fp8)."},
		{"three differences",
			VerdictOf(session(std), session(std, engine, fp8, prof)),
			"Not comparable: engine version differs (0.10.1 vs 0.11.0), precision differs (bf16 vs fp8) and profile differs (default vs long)."},
		{"hand-built",
			Verdict{Differences: []Difference{{"engine", "engine", []string{"vllm", "sglang"}}}},
			"Not comparable: engine differs (vllm vs sglang)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.Sentence(); got != tt.want {
				t.Errorf("Sentence = %q\nwant       %q", got, tt.want)
			}
			if !strings.HasSuffix(tt.v.Sentence(), ".") {
				t.Error("a sentence ends with a full stop")
			}
		})
	}
}

// TestVerdictPromptCache: a run whose TTFT came from the server's prompt
// cache is named in the notes, with the level and the share.
func TestVerdictPromptCache(t *testing.T) {
	t.Parallel()
	cold, warm := session(std), session(std)
	warm.Local.Levels = []results.LevelLocal{{Concurrency: 1, PromptCache: &results.PromptCache{CachedTokens: 620, PromptTokens: 1000}}}
	v := VerdictOf(cold, warm)
	want := "run 2: " + results.PromptCacheText(warm)
	if !strings.Contains(want, "took 62% of the prompt tokens (620 of 1000)") {
		t.Errorf("warning %q does not give the share", want)
	}
	if !slices.Contains(v.Notes, want) {
		t.Errorf("notes %q, want %q", v.Notes, want)
	}
	if !v.Comparable {
		t.Error("a cache hit made the runs not comparable; it is a note, not a condition")
	}
}

// TestVerdictCautions: runs that match on every condition but differ in
// requests per level or warmup, or have problems, are comparable on
// conditions but never cleanly, and each difference is named in words.
func TestVerdictCautions(t *testing.T) {
	t.Parallel()
	requests := func(n int) func(*results.Run) { return func(r *results.Run) { r.Requests = n } }
	warmup := func(n int) func(*results.Run) { return func(r *results.Run) { r.Warmup = n } }
	failed := func(r *results.Run) { r.Metrics.RequestsError, r.Metrics.RequestsOK = 2, 98 }
	stopped := session(std, atLevel(1, failed), atLevel(8, failed))
	stopped.Complete = false

	const (
		sentence = "These runs are comparable on conditions; weigh these differences before trusting the changes."
		tails    = ": fewer requests make the tails noisier"
		cold     = ": a shorter warmup can leave the server's cold start in the first level"
	)
	tests := []struct {
		name     string
		files    []*results.File
		cautions []string
	}{
		{"the same everywhere", []*results.File{session(std), session(std)}, nil},
		{"requests per level", []*results.File{session(std), session(std, requests(40))},
			[]string{"run 2 measured 40 requests per level, run 1 100" + tails}},
		{"requests, three runs in three groups", []*results.File{session(std), session(std, requests(40)), session(std, requests(60)), session(std, requests(40))},
			[]string{"runs 2 and 4 measured 40 requests per level, run 3 60, run 1 100" + tails}},
		{"requests differing inside one run", []*results.File{session(std), session(std, atLevel(32, requests(40)))},
			[]string{"run 2 measured 40 / 100 requests per level, run 1 100" + tails}},
		{"warmup", []*results.File{session(std, warmup(0)), session(std)},
			[]string{"run 2 sent 4 warmup requests, run 1 0" + cold}},
		{"one problem", []*results.File{session(std), session(std, atLevel(8, failed))},
			[]string{"run 2 has a problem: read it before trusting its figures"}},
		{"three problems in the baseline", []*results.File{stopped, session(std)},
			[]string{"run 1 has 3 problems: read them before trusting its figures"}},
		{"all at once", []*results.File{session(std), session(std, requests(40), warmup(0), atLevel(8, failed))},
			[]string{"run 2 measured 40 requests per level, run 1 100" + tails,
				"run 2 sent 0 warmup requests, run 1 4" + cold,
				"run 2 has a problem: read it before trusting its figures"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := VerdictOf(tt.files...)
			if !v.Comparable {
				t.Fatalf("cautions must not decide comparability: %+v", v)
			}
			if !reflect.DeepEqual(v.Cautions, tt.cautions) {
				t.Errorf("Cautions = %#v\nwant %#v", v.Cautions, tt.cautions)
			}
			if got, want := v.Clean(), tt.cautions == nil; got != want {
				t.Errorf("Clean = %v, want %v", got, want)
			}
			wantLines := []string{"These runs are comparable."}
			if tt.cautions != nil {
				wantLines = append([]string{sentence}, tt.cautions...)
			}
			if got := v.Lines(); !reflect.DeepEqual(got, wantLines) {
				t.Errorf("Lines = %#v\nwant %#v", got, wantLines)
			}
		})
	}
}

// TestVerdictCleanNeedsTwoComparableRuns: a verdict that is not
// comparable, or has one run, is never clean, so never shown as good news.
func TestVerdictCleanNeedsTwoComparableRuns(t *testing.T) {
	t.Parallel()
	for name, v := range map[string]Verdict{
		"one run":        VerdictOf(session(std)),
		"not comparable": VerdictOf(session(std), session(std, func(r *results.Run) { r.OutputTokens = 6 })),
		"no runs":        VerdictOf(),
	} {
		if v.Clean() {
			t.Errorf("%s: Clean = true", name)
		}
	}
	if !VerdictOf(session(std), session(std)).Clean() {
		t.Error("two identical runs: Clean = false")
	}
}
