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
