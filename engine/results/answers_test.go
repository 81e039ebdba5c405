package results

import "testing"

// TestAnswersPartsWords: where the greedy answers part, prompt by
// prompt, or that they did not, in words that fit one prompt or many.
func TestAnswersPartsWords(t *testing.T) {
	tests := []struct {
		name  string
		kinds []AnswersKind
		want  string
	}{
		{"nothing compared", nil, ""},
		{"one prompt, the same", []AnswersKind{{Kind: "code"}},
			"Greedy answers at temperature 0: the same as the baseline's in its one prompt, as far as they were read (16 tokens)."},
		{"two prompts, the same", []AnswersKind{{Kind: "code"}, {Kind: "json"}},
			"Greedy answers at temperature 0: the same as the baseline's in all 2 prompts, as far as they were read (16 tokens)."},
		{"one parts", []AnswersKind{{Kind: "code"}, {Kind: "json", PartsAt: 2}},
			"Greedy answers at temperature 0 part from the baseline's in 1 of 2 prompts: json at token 2."},
	}
	for _, tt := range tests {
		r := &AnswersResult{Settings: AnswersSettings{Positions: 16}, Kinds: tt.kinds}
		if got := r.PartsWords(); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
