package setup

import (
	"errors"
	"fmt"
	"time"
)

// DefaultSpecDecLevels are the mode's default concurrency levels.
func DefaultSpecDecLevels() []int { return []int{1, 4, 16} }

// DefaultSpecDecMaxTokens caps each answer; most stop well before it.
const DefaultSpecDecMaxTokens = 512

// SpecDecPlan is what the speculative-decoding mode sends.
type SpecDecPlan struct {
	Model  string
	Levels []int // concurrency levels; nil means DefaultSpecDecLevels
	// Requests per level; 0 means enough to send every prompt at least
	// once and give each slot two requests.
	Requests       int
	MaxTokens      int // 0 means DefaultSpecDecMaxTokens
	ServerThinking bool
	Timeout        time.Duration // per request; 0 means PlanTimeout
	// SpecDecode says how speculative decoding is set up on the server,
	// as the user describes it ("EAGLE-3, 4 draft tokens").
	SpecDecode      string
	Simulated       bool
	MetricsInterval time.Duration
}

// DefaultSpecDecPlan is the mode with its defaults.
func DefaultSpecDecPlan() SpecDecPlan {
	return SpecDecPlan{Levels: DefaultSpecDecLevels(), MaxTokens: DefaultSpecDecMaxTokens, Timeout: PlanTimeout}
}

// WithDefaults fills what is left zero.
func (p SpecDecPlan) WithDefaults() SpecDecPlan {
	if len(p.Levels) == 0 {
		p.Levels = DefaultSpecDecLevels()
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = DefaultSpecDecMaxTokens
	}
	if p.Timeout == 0 {
		p.Timeout = PlanTimeout
	}
	return p
}

// Validate refuses a plan that cannot run.
func (p SpecDecPlan) Validate() error {
	var errs []error
	for _, c := range p.Levels {
		if c < 1 {
			errs = append(errs, fmt.Errorf("concurrency %d is not allowed: each level needs at least 1 request in flight", c))
		}
	}
	if p.Requests < 0 {
		errs = append(errs, fmt.Errorf("requests %d is not allowed", p.Requests))
	}
	if p.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("max tokens %d is not allowed", p.MaxTokens))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is not allowed: it must be more than 0", p.Timeout))
	}
	return errors.Join(errs...)
}
