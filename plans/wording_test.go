package plans_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestWordsOnTheRealCaptures (#47): what real llama-server runs show
// says what their figures do, the way a person met it driving the app:
// the settings comparison's advice names today's default rounds; a rate
// it answered at the pace offered is kept up with in throughput, judged
// on latency; the capacity table's per-user speed above its total is
// explained; speculative decoding says whether it is worth it (here:
// what is missing to say); the three stages say what they found, with
// the cold prefill the server counted in the headline and the note alike;
// the context headline says the depth measured beside the one asked for.
func TestWordsOnTheRealCaptures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		doc   plans.Doc
		want  []string // in the headline and notes
		never []string
	}{
		{"tune", plans.NewTune(planstest.LlamaTune(t)),
			[]string{fmt.Sprintf("run more rounds (%d is the default).", setup.TuneDefaultRounds)}, []string{"(6 is the default)"}},
		{"rate", plans.NewRate(planstest.LlamaRate(t)),
			[]string{"At 1 req/s it kept up in throughput (1.10 req/s finished, all 20 requests answered), but not in latency: only 55 % of requests met the service level (95 % must).",
				"Goodput at 2 req/s: 60 % of requests met TPOT (time per output token after the first) ≤ 5 ms — goodput counts only those (1.32 req/s)."},
			[]string{"did not keep up"}},
		{"capacity", plans.NewCapacity(planstest.LlamaCapacity(t)),
			[]string{"so at 1 user the per-user p50 (561.6 tok/s) is above the total (448.2 tok/s)"}, nil},
		{"specdec", plans.NewSpecDec(planstest.LlamaSpecDec(t)),
			[]string{"Is it worth it? This run cannot say: the server reported no acceptance"}, nil},
		{"stages", plans.NewStages(planstest.LlamaStages(t)),
			[]string{"One user decoded at 287.6 tok/s (the code prompt: decode_single in the wiki block); a cold prefill of 1878 prompt tokens (the server's count) ran at 1255 tok/s (prefill_tps); 4 users at once decoded 571.9 tok/s in total (decode_agg), 146.2 each on average.",
				"the server's context holds 2048 tokens, so the cold prefill was 1878 prompt tokens (the server's count) instead of 2000"},
			[]string{"about 1843"}},
		{"context", plans.NewContext(planstest.LlamaContext(t)),
			[]string{"From a short prompt to 8192 tokens (8170 measured) of context", "cold prefill, from 1024 tokens (1029 measured) on,", "At 8192 tokens the first token took"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := tt.doc.Headline() + "\n" + strings.Join(tt.doc.Notes(), "\n")
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.never {
				if strings.Contains(text, w) {
					t.Errorf("says %q:\n%s", w, text)
				}
			}
		})
	}
}
