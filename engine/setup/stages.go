package setup

import (
	"errors"
	"fmt"
	"time"
)

// DefaultUsers is the many-user stage's default number of users.
const DefaultUsers = 8

// StagesPlan is what the three-stage plan sends.
type StagesPlan struct {
	Model string // the model to request; "" for the only one served
	Users int    // the many-user stage's users; 0 means DefaultUsers
	// Quick: the protocol's quick lengths (128-token single-user answers,
	// a 2,000-token prefill, 64-token many-user answers: stagesQuick), for
	// a smoke test. Its numbers are labelled as not the plan's.
	Quick bool
	// ServerThinking leaves thinking at the server's default; otherwise
	// every request asks for thinking off through chat_template_kwargs
	// (dropped if the server refuses it).
	ServerThinking bool
	Timeout        time.Duration // per request; 0 means PlanTimeout
	// SpecDecode says how speculative decoding was set up on the server
	// ("MTP 3", "EAGLE-3, 4 draft tokens", "none"), for the wiki block.
	SpecDecode string
	Note       string // free text appended to bench_note
	Simulated  bool   // the endpoint is the built-in simulator
	// MetricsInterval: how often /metrics is read (0: 1 s; negative: never).
	MetricsInterval time.Duration
}

// DefaultStagesPlan is the plan with its defaults.
func DefaultStagesPlan() StagesPlan {
	return StagesPlan{Users: DefaultUsers, Timeout: PlanTimeout}
}

// Validate refuses a plan that cannot run.
func (p StagesPlan) Validate() error {
	var errs []error
	if p.Users < 0 || p.Users > 1024 {
		errs = append(errs, fmt.Errorf("users %d is not allowed: use 1 to 1024 (0 for the default %d)", p.Users, DefaultUsers))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is not allowed: it must be more than 0", p.Timeout))
	}
	return errors.Join(errs...)
}

// WithDefaults fills what is left zero.
func (p StagesPlan) WithDefaults() StagesPlan {
	if p.Users == 0 {
		p.Users = DefaultUsers
	}
	if p.Timeout == 0 {
		p.Timeout = PlanTimeout
	}
	return p
}
