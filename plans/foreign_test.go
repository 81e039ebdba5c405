package plans_test

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// Another client on the server is a problem in every plan that measures
// the server: each plan's Problems says it from the document's readings.
func TestForeignLoadIsAProblemInEveryPlan(t *testing.T) {
	t.Parallel()
	load := func() *results.ServerMetrics {
		return &results.ServerMetrics{Family: results.FamilyLlamaCpp, ForeignLoad: []results.ForeignLoad{
			{Stage: "level 1", Readings: 10, Foreign: 6, MaxRequests: 2, MaxRunning: 2, MaxOurs: 1}}}
	}
	set := map[string]func(plans.Doc){
		results.PlanKovara:   func(d plans.Doc) { d.(plans.Kovara).File.Local.ServerMetrics = load() },
		results.PlanStages:   func(d plans.Doc) { d.(plans.Stages).Result.Local.ServerMetrics = load() },
		results.PlanSpecDec:  func(d plans.Doc) { d.(plans.SpecDec).Result.Local.ServerMetrics = load() },
		results.PlanCapacity: func(d plans.Doc) { d.(plans.Capacity).Result.Local.ServerMetrics = load() },
		results.PlanContext:  func(d plans.Doc) { d.(plans.Context).Result.Local.ServerMetrics = load() },
	}
	for _, c := range planstest.Cases() {
		s, ok := set[c.Doc.Kind().ID]
		if !ok || c.Failed {
			continue // the settings comparison's runs are Kovara runs, each judged as one
		}
		s(c.Doc)
		if !strings.Contains(strings.Join(c.Doc.Problems(), "\n"), "another client was using the server during level 1") {
			t.Errorf("%s: problems %q do not say another client", c.Name, c.Doc.Problems())
		}
	}
}
