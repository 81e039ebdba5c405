package compare

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/hw"
)

func TestEnergyRowsOnlyWithTelemetry(t *testing.T) {
	t.Parallel()
	a := session([]int{1, 8})
	b := session([]int{1, 8})
	for _, r := range Table([]*results.File{a, b}, nil) {
		if r.Metric.ID == "tokens_per_joule" {
			t.Fatal("energy rows without any telemetry")
		}
	}
	a.Local.Telemetry = &hw.Telemetry{Levels: map[int]hw.LevelTelemetry{1: {TokensPerJoule: ptr(2.0)}, 8: {TokensPerJoule: ptr(5.0)}}}
	b.Local.Telemetry = &hw.Telemetry{Levels: map[int]hw.LevelTelemetry{1: {TokensPerJoule: ptr(2.5)}}}
	var got []Row
	for _, r := range Table([]*results.File{a, b}, nil) {
		if r.Metric.ID == "tokens_per_joule" {
			got = append(got, r)
		}
	}
	if len(got) != 2 {
		t.Fatalf("tokens per joule rows: %d, want one per level", len(got))
	}
	// Energy has no interval: the change is shown, never called, so
	// never coloured.
	if c := got[0].Cells[1]; !c.Present || c.Better != 0 || c.Delta < 0.249 || c.Delta > 0.251 {
		t.Errorf("level 1: %+v, want +25 %%, not coloured", c)
	}
	if c := got[1].Cells[1]; c.Present {
		t.Errorf("level 8 of run 2 has no energy: want a gap, got %+v", c)
	}
}
