package storage

import (
	"testing"

	"github.com/kovara/desktop/plans"
)

func TestSummaryState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    Summary
		want string
	}{
		{Summary{Summary: plans.Summary{Complete: true}}, "complete"},
		{Summary{}, "incomplete"},
		{Summary{Summary: plans.Summary{Complete: true, Problems: []string{"a", "b"}}}, "finished, 2 problems"},
		{Summary{Summary: plans.Summary{Problems: []string{"a"}}}, "incomplete, 1 problem"},
	}
	for _, tt := range tests {
		if got := tt.s.State(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.s, got, tt.want)
		}
	}
}
