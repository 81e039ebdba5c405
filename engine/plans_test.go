package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

// TestPlanStartInterrupted: a plan stopped before its start-up is done
// says it was interrupted while checking the endpoint, whichever plan it
// is, and gives no result.
func TestPlanStartInterrupted(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := map[string]func() (bool, error){
		"stages": func() (bool, error) {
			r, err := RunStages(ctx, setup.StagesPlan{Quick: true}, setup.Endpoint{URL: url}, Observer{})
			return r != nil, err
		},
		"specdec": func() (bool, error) {
			r, err := RunSpecDec(ctx, setup.DefaultSpecDecPlan(), setup.Endpoint{URL: url}, Observer{})
			return r != nil, err
		},
	}
	for name, run := range runs {
		result, err := run()
		if !errors.Is(err, ErrInterrupted) || !strings.HasPrefix(err.Error(), string(PhaseCheck)+":") {
			t.Errorf("%s: %v, want interrupted while %s", name, err, PhaseCheck)
		}
		if result {
			t.Errorf("%s: a result from a plan that never started", name)
		}
	}
}
