package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func TestStagesTable(t *testing.T) {
	t.Parallel()
	mk := func(code, agg float64, quick bool) *results.StagesResult {
		return &results.StagesResult{Model: "m", Quick: quick,
			Decode: []results.DecodeStage{{Prompt: "code", DecodeTPS: ptr(code)}},
			Users:  &results.UsersStage{Users: 8, AggregateTPS: ptr(agg)}}
	}
	rows := StagesTable([]*results.StagesResult{mk(50, 300, false), mk(55, 270, false)})
	byID := map[string]Row{}
	for _, r := range rows {
		byID[r.Metric.ID] = r
	}
	if c := byID["decode_code"].Cells[1]; c.Better != 1 || c.Delta < 0.099 || c.Delta > 0.101 {
		t.Errorf("decode: %+v", c)
	}
	if c := byID["decode_agg"].Cells[1]; c.Better != -1 {
		t.Errorf("aggregate: %+v", c)
	}
	if c := byID["prefill_tps"].Cells[0]; c.Present {
		t.Error("no prefill measured: want a gap")
	}
	// One measurement each: a change under 10 % is shown, not marked
	// (the flat rule marked anything past 0.5 %).
	rows = StagesTable([]*results.StagesResult{mk(50, 300, false), mk(48.5, 290, false)})
	for _, r := range rows {
		if c := r.Cells[1]; c.HasDelta && (c.Better != 0 || c.Delta > -0.02) {
			t.Errorf("%s: %+v, want a change of about −3 %% unmarked", r.Metric.ID, c)
		}
	}
	if l := SingleFigureLegend(rows); l == "" {
		t.Error("no legend for the unmarked changes")
	}
	if ok, diffs := StagesVerdict([]*results.StagesResult{mk(1, 1, false), mk(1, 1, true)}); ok || len(diffs) != 1 {
		t.Errorf("quick vs full: %v %v", ok, diffs)
	}
}
