package setup

import (
	"strings"
	"testing"
)

// TestPlanWorkload: the Kovara plan validates its shared prefix and
// turns, and refuses a prompts file (the rate plan's) in a plain sentence.
func TestPlanWorkload(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    Workload
		want string // a part of the error; "" for none
	}{
		{"none", Workload{}, ""},
		{"a prefix in groups with turns", Workload{SharedPrefix: 2000, PrefixGroups: 2, Turns: 3}, ""},
		{"a prompts file", Workload{PromptsFile: "mine.jsonl"}, "your own prompts file is for the rate plan"},
		{"groups without a prefix", Workload{PrefixGroups: 2}, "prefix groups need a shared prefix"},
		{"too many turns", Workload{Turns: MaxTurns + 1}, "turns is not allowed"},
	}
	for _, tt := range tests {
		p := DefaultPlan()
		p.Workload = tt.w
		err := p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want %q", tt.name, err, tt.want)
		}
	}
}
