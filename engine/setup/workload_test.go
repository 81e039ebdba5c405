package setup

import (
	"strings"
	"testing"
)

func TestWorkloadValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    Workload
		want string // a part of the error; "" for none
	}{
		{"synthetic", Workload{}, ""},
		{"prefix in groups with turns", Workload{SharedPrefix: 2000, PrefixGroups: 4, Turns: 10}, ""},
		{"a file", Workload{PromptsFile: "p.jsonl", SkipBad: true}, ""},
		{"negative prefix", Workload{SharedPrefix: -1}, "shared prefix of -1 tokens"},
		{"groups without a prefix", Workload{PrefixGroups: 2}, "prefix groups need a shared prefix"},
		{"too many turns", Workload{Turns: MaxTurns + 1}, "turns is not allowed"},
		{"a file with turns", Workload{PromptsFile: "p.jsonl", Turns: 3}, "a prompts file holds whole requests"},
		{"a file with a prefix", Workload{PromptsFile: "p.jsonl", SharedPrefix: 100}, "a prompts file holds whole requests"},
		{"skip without a file", Workload{SkipBad: true}, "needs a prompts file"},
	}
	for _, tc := range tests {
		err := tc.w.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	p := DefaultRatePlan()
	p.Workload.Turns = -2
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "turns") {
		t.Errorf("the rate plan let a bad workload through: %v", err)
	}
}

func TestWorkloadExtraTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		w    Workload
		want int
	}{
		{Workload{}, 0},
		{Workload{SharedPrefix: 2000}, 2000},
		{Workload{Turns: 10}, 9 * (64 + 128)},
		{Workload{SharedPrefix: 500, Turns: 3}, 500 + 2*(64+128)},
	}
	for _, tc := range tests {
		if got := tc.w.ExtraTokens(64, 128); got != tc.want {
			t.Errorf("%+v: got %d, want %d", tc.w, got, tc.want)
		}
	}
}
