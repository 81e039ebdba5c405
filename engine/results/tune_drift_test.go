package results

import (
	"slices"
	"testing"
)

// TestTuneDriftKindsWords: the prompt kinds' KL divergences, the
// furthest first, with the top token's share where it moved.
func TestTuneDriftKindsWords(t *testing.T) {
	t.Parallel()
	d := &TuneDrift{Kinds: []TuneDriftKind{
		{Kind: "code", SameTop: 1, KLMean: 1.2e-4},
		{Kind: "json", SameTop: 0.97, KLMean: 0.0031},
		{Kind: "prose", SameTop: 1, KLMean: 0},
	}}
	if got, want := d.KindsWords(), "KL divergence by prompt: json 0.0031 (same top token 97.0 %), code 1.2e-04, prose 0"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := (&TuneDrift{}).KindsWords(); got != "" {
		t.Errorf("no kinds: %q", got)
	}
}

// TestNatsText: a KL divergence with two significant digits, the one
// rule of the settings comparison, the ruler's marks and the answers
// plan (it was two formatters that wrote 0.0313 and 0.031).
func TestNatsText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"},
		{1.6e-6, "1.6e-06"},
		{2.515e-5, "2.5e-05"},
		{0.000999, "1.0e-03"},
		{0.001355, "0.0014"},
		{0.0041, "0.0041"},
		{0.031273, "0.031"},
		{0.445132, "0.45"},
		{1.4, "1.4"},
		{9.96, "10"},
		{27.6, "28"},
		{1234.5, "1234"},
	}
	for _, tt := range tests {
		if got := NatsText(tt.v); got != tt.want {
			t.Errorf("NatsText(%g): got %q, want %q", tt.v, got, tt.want)
		}
	}
}

// q8Drift is a setting beyond the floor on both figures, with the
// ruler's words.
func q8Drift() *TuneDrift {
	return &TuneDrift{Prompts: "kovara-answers-v1", Positions: 160, SameTop: 0.992, FloorSameTop: 1, KLMean: 0.0041, FloorKL: 0,
		SameTopBeyond: true, KLBeyond: true, Ruler: "between what Q8_0 (0.0014) and Q6_K (0.0055) cost Llama 3 8B"}
}

// TestTuneDriftWordsAndBrief: the answers' words with the floor (the
// answers line) and without (the verdict's first lines) judge alike.
func TestTuneDriftWordsAndBrief(t *testing.T) {
	t.Parallel()
	klOnly := &TuneDrift{SameTop: 1, FloorSameTop: 1, KLMean: 1.6e-6, KLBeyond: true, Ruler: "less than BF16 against FP16 costs Llama 3 8B (2.5e-05)"}
	topOnly := &TuneDrift{SameTop: 0.9, FloorSameTop: 1, SameTopBeyond: true}
	within := &TuneDrift{SameTop: 1, FloorSameTop: 1}
	tests := []struct {
		name         string
		d            *TuneDrift
		words, brief string
	}{
		{"both", q8Drift(),
			"same top token 99.2 % (floor 100.0 %), KL divergence 0.0041 nats a token (floor 0): beyond the floor on both; between what Q8_0 (0.0014) and Q6_K (0.0055) cost Llama 3 8B",
			"same top token 99.2 %, KL divergence 0.0041 — beyond the floor on both; between what Q8_0 (0.0014) and Q6_K (0.0055) cost Llama 3 8B"},
		{"KL only", klOnly,
			"same top token 100.0 % (floor 100.0 %), KL divergence 1.6e-06 nats a token (floor 0): beyond the floor on KL divergence, the top token as often the same; less than BF16 against FP16 costs Llama 3 8B (2.5e-05)",
			"same top token 100.0 %, KL divergence 1.6e-06 — beyond the floor on KL divergence, the top token as often the same; less than BF16 against FP16 costs Llama 3 8B (2.5e-05)"},
		{"top token only", topOnly,
			"same top token 90.0 % (floor 100.0 %), KL divergence 0 nats a token (floor 0): beyond the floor on the top token",
			"same top token 90.0 %, KL divergence 0 — beyond the floor on the top token"},
		{"within", within,
			"same top token 100.0 % (floor 100.0 %), KL divergence 0 nats a token (floor 0): within the floor",
			"same top token 100.0 %, KL divergence 0 — within the floor"},
	}
	for _, tt := range tests {
		if got, want := tt.d.Words(), tt.words; got != want {
			t.Errorf("%s: Words\ngot  %q\nwant %q", tt.name, got, want)
		}
		if got, want := tt.d.Brief(), tt.brief; got != want {
			t.Errorf("%s: Brief\ngot  %q\nwant %q", tt.name, got, want)
		}
	}
}

// tuneWithAnswers is a comparison of three settings at one level: B
// faster with its answers' distribution measured, C no faster with only
// its answers' text checked.
func tuneWithAnswers(drift *TuneDrift) *TuneResult {
	r := &TuneResult{
		Plan:     TunePlan{Rounds: 3, Concurrency: []int{8}, Metrics: []TuneMetric{{ID: "output_throughput", Label: "output tok/s", Unit: "tok/s", HigherBest: true}}},
		Settings: []TuneSetting{{Name: "f16 cache", Rounds: 3}, {Name: "q8_0 cache", Rounds: 3}, {Name: "q4_0 cache", Rounds: 3}},
		Verdicts: []TuneVerdict{
			{Setting: 1, Concurrency: 8, Metric: "output_throughput", Label: "output tok/s", Unit: "tok/s", HigherBest: true, Rounds: 3, Base: 100, Value: 109, Change: 0.09, Low: 0.06, High: 0.12, Verdict: TuneBetter},
			{Setting: 2, Concurrency: 8, Metric: "output_throughput", Label: "output tok/s", Unit: "tok/s", HigherBest: true, Rounds: 3, Base: 100, Value: 101, Change: 0.01, Low: -0.02, High: 0.04, Verdict: TuneSame},
		},
		Answers: []TuneAnswers{
			{Setting: 1, Prompts: 5, Differ: []TuneAnswerDiff{{Prompt: "code", After: 12}}, Drift: drift},
			{Setting: 2, Prompts: 5, Differ: []TuneAnswerDiff{}},
		},
	}
	for s := range r.Settings {
		for round := 1; round <= 3; round++ {
			r.Runs = append(r.Runs, TuneRun{Setting: s, Round: round, Complete: true, Levels: []TuneLevel{{Concurrency: 8, Values: map[string]float64{"output_throughput": []float64{100, 109, 101}[s]}}}})
		}
	}
	return r
}

// TestTuneHeadlineSaysSpeedAndAnswers: each setting's verdict says its
// speed and, where its answers' distribution was measured, how far it
// is, in one sentence; a setting whose answers were only read as text
// says its speed alone, as before (the answers line says the text).
func TestTuneHeadlineSaysSpeedAndAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		drift *TuneDrift
		want  string
	}{
		{"measured", q8Drift(),
			"q8_0 cache is faster than f16 cache: at 8 users output tok/s +9.0 % (±3 %); answers: same top token 99.2 %, KL divergence 0.0041 — beyond the floor on both; between what Q8_0 (0.0014) and Q6_K (0.0055) cost Llama 3 8B. " +
				"q4_0 cache does not differ from f16 cache beyond noise after 3 rounds; differences under ~3 % cannot be seen on this server — run more rounds to look closer."},
		{"text only", nil,
			"q8_0 cache is faster than f16 cache: at 8 users output tok/s +9.0 % (±3 %). " +
				"q4_0 cache does not differ from f16 cache beyond noise after 3 rounds; differences under ~3 % cannot be seen on this server — run more rounds to look closer."},
	}
	for _, tt := range tests {
		if got, want := tuneWithAnswers(tt.drift).Headline(), tt.want; got != want {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.name, got, want)
		}
	}
}

// TestTuneTableAnswersColumns: every setting's rows carry its answers'
// figures against the first setting's, the first's own rows its floor,
// and "—" where the distribution was not measured.
func TestTuneTableAnswersColumns(t *testing.T) {
	t.Parallel()
	floorKL := q8Drift()
	floorKL.FloorSameTop, floorKL.FloorKL = 0.995, 2e-7
	tests := []struct {
		name  string
		drift *TuneDrift
		want  [][]string // each setting's Same top and KL cells
	}{
		{"measured", q8Drift(), [][]string{{"floor 100.0 %", "floor 0"}, {"99.2 %", "0.0041"}, {Missing, Missing}}},
		{"a floor above 0", floorKL, [][]string{{"floor 99.5 %", "floor 2.0e-07"}, {"99.2 %", "0.0041"}, {Missing, Missing}}},
		{"text only", nil, [][]string{{Missing, Missing}, {Missing, Missing}, {Missing, Missing}}},
	}
	for _, tt := range tests {
		tb := tuneWithAnswers(tt.drift).Table()
		if got, want := tb.Columns[len(tb.Columns)-2:], []string{"Same top\ntoken %", "KL divergence\n(nats)"}; !slices.Equal(got, want) {
			t.Fatalf("%s: headings %q, want %q", tt.name, got, want)
		}
		if got, want := len(tb.Rows), 3; got != want {
			t.Fatalf("%s: %d rows, want %d", tt.name, got, want)
		}
		for s, row := range tb.Rows {
			if got, want := row[len(row)-2:], tt.want[s]; !slices.Equal(got, want) {
				t.Errorf("%s: %s's answers' cells %q, want %q", tt.name, row[2], got, want)
			}
			if got, want := len(row), len(tb.Columns); got != want {
				t.Errorf("%s: row of %d cells under %d headings", tt.name, got, want)
			}
		}
	}
}

// TestTuneReplayWords: a comparison whose runs replayed a trace says its
// one level as the replay — in the verdict, the table's Users column and
// the level words — where a Kovara plan's says its users.
func TestTuneReplayWords(t *testing.T) {
	t.Parallel()
	r := tuneWithAnswers(nil)
	r.Plan.Concurrency = []int{TuneReplayLevel}
	for i := range r.Verdicts {
		r.Verdicts[i].Concurrency = TuneReplayLevel
	}
	for i := range r.Runs {
		r.Runs[i].Levels[0].Concurrency = TuneReplayLevel
	}
	want := "q8_0 cache is faster than f16 cache: in the replay output tok/s +9.0 % (±3 %). " +
		"q4_0 cache does not differ from f16 cache beyond noise after 3 rounds; differences under ~3 % cannot be seen on this server — run more rounds to look closer."
	if got := r.Headline(); got != want {
		t.Errorf("headline\ngot  %q\nwant %q", got, want)
	}
	if rows := r.Table().Rows; len(rows) == 0 || rows[0][0] != "replay" {
		t.Errorf("the table's first row %q, want the replay's level", rows[0])
	}
	for c, want := range map[int][2]string{TuneReplayLevel: {"the replay", "in the replay"}, 1: {"1 user", "at 1 user"}, 8: {"8 users", "at 8 users"}} {
		if got := [2]string{TuneLevelWords(c), TuneAtLevel(c)}; got != want {
			t.Errorf("level %d: %q, want %q", c, got, want)
		}
	}
}
