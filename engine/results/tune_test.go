package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

// TestTuneDefaultRoundsIsSetups: the rounds the sentences call the
// default are the ones a comparison runs by default (#47: the verdict said
// "6 is the default" after the default became 12).
func TestTuneDefaultRoundsIsSetups(t *testing.T) {
	t.Parallel()
	if TuneDefaultRounds != setup.TuneDefaultRounds {
		t.Errorf("results.TuneDefaultRounds %d, setup.TuneDefaultRounds %d", TuneDefaultRounds, setup.TuneDefaultRounds)
	}
}

// TestTuneMoreRoundsSentence: where the intervals are wider than the
// figures, the verdict asks for more rounds in the default's own number,
// read from the constant, or beyond the rounds run when they were as many.
func TestTuneMoreRoundsSentence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rounds int
		want   string
	}{
		{3, fmt.Sprintf("after 3 rounds, but the intervals are wider than the figures: this server's runs are too far apart for so few rounds to see any change — run more rounds (%d is the default).", setup.TuneDefaultRounds)},
		{1, fmt.Sprintf("after 1 round, but the intervals are wider than the figures: this server's runs are too far apart for so few rounds to see any change — run more rounds (%d is the default).", setup.TuneDefaultRounds)},
		{setup.TuneDefaultRounds, fmt.Sprintf("— run more rounds than %d.", setup.TuneDefaultRounds)},
		{20, "— run more rounds than 20."},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.rounds), func(t *testing.T) {
			t.Parallel()
			r := &TuneResult{
				Plan:     TunePlan{Rounds: tt.rounds},
				Settings: []TuneSetting{{Name: "np1", Rounds: tt.rounds}, {Name: "np4", Rounds: tt.rounds}},
				Verdicts: []TuneVerdict{{Setting: 1, Concurrency: 1, Metric: "output_throughput", Label: "output tok/s", Rounds: tt.rounds, Change: 0.1, Low: -1.2, High: 1.4, Verdict: TuneSame}},
			}
			h := r.Headline()
			if !strings.HasPrefix(h, "np4 does not differ from np1 beyond noise ") || !strings.HasSuffix(h, tt.want) {
				t.Errorf("headline %q\nwant it to end %q", h, tt.want)
			}
		})
	}
}

func TestLeastChangeWords(t *testing.T) {
	t.Parallel()
	p := TunePlan{
		Metrics: []TuneMetric{{ID: "output_throughput", Label: "output tok/s"}, {ID: "ttft_p50", Label: "TTFT p50"},
			{ID: "ttft_p95", Label: "TTFT p95"}, {ID: "itl_p50", Label: "ITL p50"}},
		LeastChange: map[string]float64{"output_throughput": 0.03, "ttft_p50": 0.05, "ttft_p95": 0.10, "itl_p50": 0.03},
		Confidence:  0.95,
	}
	if got, want := p.LeastChangeWords(), "3 % for output tok/s and ITL p50, 5 % for TTFT p50, 10 % for TTFT p95"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := p.ConfidenceWords(); got != "95 %" {
		t.Errorf("confidence %q", got)
	}
}

// TestTuneWideIntervalBesideItsVerdict: an interval wider than 1,000 %
// that lies all on one side of no change is said by its near end, so the
// table does not put "too wide to tell" beside a "worse" it called; one
// that spans no change is too wide to tell. Seeded on the settings
// comparison llama-server b4748 gave (plans/planstest's capture).
func TestTuneWideIntervalBesideItsVerdict(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "plans", "planstest", "testdata", "llamacpp-b4748", "tune.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := TuneDoc.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Verdicts) == 0 {
		t.Fatal("the capture has no verdicts")
	}
	v := &r.Verdicts[0]
	tests := []struct {
		low, high float64
		verdict   string
		want      string
	}{
		{0.05, 12, TuneWorse, "above +5.0 %"},
		{-12, -0.05, TuneBetter, "below -5.0 %"},
		{-0.5, 12, TuneSame, "too wide to tell"},
		{-0.02, 0.03, TuneSame, "-2.0 % … +3.0 %"},
	}
	for _, tt := range tests {
		v.Low, v.High, v.Verdict = tt.low, tt.high, tt.verdict
		var got string
		for _, row := range r.Table().Rows {
			if row[0] == TuneLevelLabel(v.Concurrency) && row[1] == v.Label && row[2] == r.Settings[v.Setting].Name {
				got = row[5]
			}
		}
		if got != tt.want {
			t.Errorf("interval %g … %g (%s): cell %q, want %q", tt.low, tt.high, tt.verdict, got, tt.want)
		}
	}
}
