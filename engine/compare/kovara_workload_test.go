package compare

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestVerdictWorkload: Kovara runs whose requests differ (the method's
// prompts, a shared system prompt, conversations) are not like for like,
// and the verdict names the requests of each; the same workload is.
func TestVerdictWorkload(t *testing.T) {
	t.Parallel()
	prefix := &results.Workload{SharedPrefix: 2000, SharedPrefixWords: 1500, PrefixGroups: 1}
	tests := []struct {
		name   string
		a, b   *results.Workload
		want   bool
		saying string
	}{
		{"both the method's prompts", nil, nil, true, ""},
		{"the same shared prefix", prefix, &results.Workload{SharedPrefix: 2000, SharedPrefixWords: 1480, PrefixGroups: 1}, true, ""},
		{"the method's against a shared prefix", nil, prefix, false, "requests differs (the synthetic prompt vs a shared 2,000-token system prompt)"},
		{"other turns", &results.Workload{Turns: 3}, &results.Workload{Turns: 5}, false, "3-turn conversations vs 5-turn conversations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, b := session([]int{1, 8}), session([]int{1, 8})
			a.Local.Workload, b.Local.Workload = tt.a, tt.b
			v := VerdictOf(a, b)
			if v.Comparable != tt.want {
				t.Fatalf("comparable %v, want %v: %s", v.Comparable, tt.want, v.Sentence())
			}
			if tt.saying != "" && !strings.Contains(v.Sentence(), tt.saying) {
				t.Errorf("verdict %q lacks %q", v.Sentence(), tt.saying)
			}
		})
	}
}
