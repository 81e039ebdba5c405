package plans

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestComparableKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		plans []string
		want  string
		err   string
	}{
		{[]string{"", results.PlanKovara}, results.PlanKovara, ""},
		{[]string{results.PlanStages, results.PlanStages}, results.PlanStages, ""},
		{[]string{results.PlanSpecDec, results.PlanSpecDec, results.PlanSpecDec}, results.PlanSpecDec, ""},
		{[]string{results.PlanKovara, results.PlanStages}, "", "one kind"},
		{nil, "", "no runs"},
	}
	for _, tc := range cases {
		k, err := ComparableKind(tc.plans)
		got := ""
		if k != nil {
			got = k.ID
		}
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ComparableKind(%v) = %q, %v; want %q, %q", tc.plans, got, err, tc.want, tc.err)
		}
	}
}
