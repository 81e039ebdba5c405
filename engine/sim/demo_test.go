package sim

import (
	"testing"
	"time"
)

// The demo is the first result a newcomer sees: its one-user pace is an
// 8B model's on one GPU (100–300 tok/s), not 1,000 tok/s that a two-core
// client cannot read beside it.
func TestDemoPacedLikeAServer(t *testing.T) {
	t.Parallel()
	c := Demo()
	if perSec := float64(time.Second) / float64(c.TokenInterval); perSec < 100 || perSec > 300 {
		t.Errorf("the demo decodes one user at %.0f tok/s, want an 8B model's 100–300", perSec)
	}
}
