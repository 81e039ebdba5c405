package ui

import (
	"testing"

	"github.com/kovara/desktop/plans"
)

// TestEveryPlanHasAFormAndAView: a registered plan the Benchmark place
// has no form for, or History no result view for, would be offered and
// then fail; each form is shown when its plan is chosen.
func TestEveryPlanHasAFormAndAView(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		for _, k := range plans.All {
			if planForms[k.ID] == nil || b.forms[k.ID] == nil {
				t.Errorf("%s: no form", k.ID)
				continue
			}
			if resultViews[k.ID] == nil {
				t.Errorf("%s: no result view", k.ID)
			}
			b.planSelect.SetSelected(k.Title)
			if b.kind() != k || b.formBox.Objects[0] != b.forms[k.ID].content() {
				t.Errorf("%s chosen: its form is not the one shown", k.ID)
			}
		}
		if len(planForms) != len(plans.All) || len(resultViews) != len(plans.All) {
			t.Errorf("%d forms and %d views for %d plans", len(planForms), len(resultViews), len(plans.All))
		}
	})
}
