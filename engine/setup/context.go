package setup

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Context plan defaults.
const (
	DefaultContextOutput  = 128
	DefaultContextRepeats = 3
	// MaxContextDepth bounds a depth given by hand.
	MaxContextDepth = 1 << 21
)

// ContextPlan is what the context plan sends.
type ContextPlan struct {
	Model string // the model to request; "" for the only one served
	// Depths are the cold prompts' lengths in tokens, 0 for a short
	// prompt; nil chooses them from the server's context (ContextDepths).
	Depths       []int
	OutputTokens int // each cold answer's max_tokens; 0 means DefaultContextOutput
	Repeats      int // conversations per user at each depth; 0 means DefaultContextRepeats
	Users        int // users at once; 0 means 1
	// Seed is the prompt generator's seed; without FixedSeed a fresh one
	// is drawn, so no prompt of a run meets a cache from an earlier one.
	Seed      int64
	FixedSeed bool
	Timeout   time.Duration // per request; 0 means PlanTimeout
	Simulated bool
	// MetricsInterval: how often /metrics is read (0: 1 s; negative: never).
	MetricsInterval time.Duration
}

// DefaultContextPlan is the plan with its defaults.
func DefaultContextPlan() ContextPlan {
	return ContextPlan{OutputTokens: DefaultContextOutput, Repeats: DefaultContextRepeats, Users: 1, Timeout: PlanTimeout}
}

// WithDefaults fills what is left zero.
func (p ContextPlan) WithDefaults() ContextPlan {
	if p.OutputTokens == 0 {
		p.OutputTokens = DefaultContextOutput
	}
	if p.Repeats == 0 {
		p.Repeats = DefaultContextRepeats
	}
	if p.Users == 0 {
		p.Users = 1
	}
	if p.Timeout == 0 {
		p.Timeout = PlanTimeout
	}
	if p.Depths != nil {
		// The short prompt is always measured, first: it is the baseline
		// deeper prefill is measured above (results.PrefillBaseline).
		p.Depths = slices.Compact(slices.Sorted(slices.Values(append([]int{0}, p.Depths...))))
	}
	return p
}

// Validate refuses a plan that cannot run, one sentence per problem.
func (p ContextPlan) Validate() error {
	var errs []error
	for _, d := range p.Depths {
		if d < 0 || d > MaxContextDepth {
			errs = append(errs, fmt.Errorf("depth %d is not allowed: use 0 (a short prompt) to %d tokens", d, MaxContextDepth))
		}
	}
	if p.Depths != nil && len(p.Depths) == 0 {
		errs = append(errs, errors.New("give at least one depth, like 1k,8k"))
	}
	if p.OutputTokens < 0 || p.OutputTokens == 1 {
		errs = append(errs, fmt.Errorf("output tokens %d is not allowed: a decode speed needs answers of at least 2 tokens", p.OutputTokens))
	}
	if p.Repeats < 0 || p.Repeats > 100 {
		errs = append(errs, fmt.Errorf("repeats %d is not allowed: use 1 to 100", p.Repeats))
	}
	if p.Users < 0 || p.Users > 256 {
		errs = append(errs, fmt.Errorf("users %d is not allowed: use 1 to 256", p.Users))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is not allowed: it must be more than 0", p.Timeout))
	}
	return errors.Join(errs...)
}
