package results

import (
	"strings"
	"testing"
)

// TestStagesHeadlineSaysWhatItFound (#47): the three-stage headline says
// what the stages found after its state — one user's decode (the code
// prompt, decode_single), the cold prefill at its length as the server
// counted it (the aim only where it did not), and the many users' total —
// each figure the table's, instead of a table and a wiki block with no
// sentence.
func TestStagesHeadlineSaysWhatItFound(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	n := func(v int) *int { return &v }
	decode := []DecodeStage{{Prompt: "code", CompletionTokens: 128, DecodeTPS: f(287.6)}, {Prompt: "json", CompletionTokens: 128, DecodeTPS: f(240.4)}}
	counted := &PrefillStage{TargetTokens: 1843, PromptTokens: n(1878), PrefillTPS: f(1255)}
	users := &UsersStage{Users: 4, AggregateTPS: f(571.9), PerUserMeanTPS: f(146.2)}
	tests := []struct {
		name string
		r    StagesResult
		want string
	}{
		{"every stage (llama-server b4748's quick run)", StagesResult{Complete: true, Warnings: []string{"w"}, Decode: decode, Prefill: counted, Users: users},
			"Finished, with 1 warning below: read it before trusting the figures. One user decoded at 287.6 tok/s (the code prompt: decode_single in the wiki block); a cold prefill of 1878 prompt tokens (the server's count) ran at 1255 tok/s (prefill_tps); 4 users at once decoded 571.9 tok/s in total (decode_agg), 146.2 each on average."},
		{"a prefill the server did not count", StagesResult{Complete: true, Decode: decode, Prefill: &PrefillStage{TargetTokens: 1843, PrefillTPS: f(900)}},
			"Complete. One user decoded at 287.6 tok/s (the code prompt: decode_single in the wiki block); a cold prefill of about 1843 tokens (the length aimed at: the server did not count them) ran at 900 tok/s (prefill_tps)."},
		{"queued users", StagesResult{Complete: true, Users: &UsersStage{Users: 8, AggregateTPS: f(300), PerUserMeanTPS: f(80), Queued: true}},
			"Complete. 8 users at once decoded 300.0 tok/s in total (decode_agg), but fewer than 8 ran at once (the server queued some)."},
		{"failed stages say nothing of their figures", StagesResult{Decode: []DecodeStage{{Prompt: "code", Error: "http_500"}}, Prefill: &PrefillStage{Error: "refused"}},
			"Stopped before every stage finished."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.r.Headline(); got != tt.want && !strings.HasPrefix(got, tt.want+" ") {
				t.Errorf("headline %q\nwant     %q", got, tt.want)
			}
		})
	}
}

// TestStagesCutPrefillReworded (#47): a document written before the
// warning said the server's count is read with it saying the count where
// the document has one, and left as written where it has none or the
// sentence is another.
func TestStagesCutPrefillReworded(t *testing.T) {
	t.Parallel()
	const old = "the server's context holds 2048 tokens, so the cold prefill is about 1843 tokens instead of 2000"
	tests := []struct {
		name    string
		prefill string
		warning string
		want    string
	}{
		{"counted", `{"target_tokens": 1843, "prompt_tokens": 1878}`, old,
			"the server's context holds 2048 tokens, so the cold prefill was 1878 prompt tokens (the server's count) instead of 2000"},
		{"not counted", `{"target_tokens": 1843, "prompt_tokens": null}`, old, old},
		{"another aim", `{"target_tokens": 1700, "prompt_tokens": 1878}`, old, old},
		{"another sentence", `{"target_tokens": 1843, "prompt_tokens": 1878}`, old + " (and more)", old + " (and more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := `{"format": "` + FormatStages + `", "format_version": 1, "settings": {"prefill_target_tokens": 2000}, "engine": {"context_length": 2048}, "prefill": ` + tt.prefill + `, "warnings": ["` + tt.warning + `"]}`
			r, err := StagesDoc.Decode([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Warnings) != 1 || r.Warnings[0] != tt.want {
				t.Errorf("warnings %q, want %q", r.Warnings, tt.want)
			}
		})
	}
}
