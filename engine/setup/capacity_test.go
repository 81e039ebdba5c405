package setup

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestCapacityRequestsHoldAP95: every capacity level sends enough
// requests for its p95, the rule results.MinP95 states.
func TestCapacityRequestsHoldAP95(t *testing.T) {
	if got, want := CapacityRequests(1), results.MinP95; got != want {
		t.Errorf("CapacityRequests(1) = %d, want results.MinP95 = %d", got, want)
	}
}
