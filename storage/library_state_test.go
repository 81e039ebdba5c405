package storage

import "testing"

func TestSummaryState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    Summary
		want string
	}{
		{Summary{Complete: true}, "complete"},
		{Summary{}, "incomplete"},
		{Summary{Complete: true, Problems: []string{"a", "b"}}, "finished, 2 problems"},
		{Summary{Problems: []string{"a"}}, "incomplete, 1 problem"},
	}
	for _, tt := range tests {
		if got := tt.s.State(); got != tt.want {
			t.Errorf("%+v: got %q, want %q", tt.s, got, tt.want)
		}
	}
}
