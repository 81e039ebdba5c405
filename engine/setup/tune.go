package setup

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// How a setting of a settings comparison puts the server into its state.
const (
	ByCommand = "command" // the app starts the server with a command line
	ByModel   = "model"   // the same server, another model
	ByHand    = "manual"  // the person changes the server and presses Continue
)

// TuneSetting is one setting of the server.
type TuneSetting struct {
	Name string
	How  string // ByCommand, ByModel or ByHand
	// Command, Env and SSH start the server (How is ByCommand).
	Command string
	Env     []string
	SSH     string
	// Model is the model to request: the setting itself when How is
	// ByModel, else the plan's model when empty.
	Model string
	// Instruction says what to change by hand (How is ByHand).
	Instruction string
	// Before runs before each of the setting's turns, on the server's
	// machine (through SSH when it is set).
	Before string
}

// The settings comparison's bounds and defaults (docs/method.md,
// "Comparing settings").
const (
	TuneMinSettings   = 2
	TuneMaxSettings   = 8
	TuneDefaultRounds = 12
	TuneMaxRounds     = 50
	// TuneAnswerTokens caps each answer of the outputs check.
	TuneAnswerTokens  = 128
	tuneBeforeTimeout = 2 * time.Minute
)

// TuneDefaultPlan is the inner plan a settings comparison starts from: one
// user and eight, short enough that twelve rounds of two settings take
// minutes on a small server.
func TuneDefaultPlan() KovaraPlan {
	p := DefaultPlan()
	p.Concurrency = []int{1, 8}
	p.Requests = 32
	p.InputTokens = 512
	p.OutputTokens = 128
	p.Warmup = 2
	return p
}

// TunePlan is a settings comparison.
type TunePlan struct {
	Settings []TuneSetting
	Rounds   int // 0: TuneDefaultRounds
	// Inner is the Kovara plan each run measures; its seed is fresh for
	// every run.
	Inner KovaraPlan
	// Replay, when set, is what each run measures in place of Inner's
	// levels: a rate plan replaying a recorded trace (its Replay set),
	// the same trace at the same times for every setting. Inner still
	// gives the model, the timeout and whether it is the simulator.
	Replay *RatePlan
	// StartTimeout bounds a started server's wait for its model list (0:
	// 5 minutes); a setting changed by hand waits as long for the server
	// to answer again.
	StartTimeout time.Duration
	// NoAnswers leaves the outputs check out.
	NoAnswers bool
}

// Validate refuses a comparison that cannot run.
func (p TunePlan) Validate() error {
	var errs []error
	if n := len(p.Settings); n < TuneMinSettings || n > TuneMaxSettings {
		errs = append(errs, fmt.Errorf("a settings comparison takes %d to %d settings, not %d", TuneMinSettings, TuneMaxSettings, n))
	}
	seen := map[string]bool{}
	for i, s := range p.Settings {
		name := strings.TrimSpace(s.Name)
		switch {
		case name == "":
			errs = append(errs, fmt.Errorf("setting %d has no name", i+1))
		case seen[name]:
			errs = append(errs, fmt.Errorf("two settings are called %q: each needs its own name", name))
		}
		seen[name] = true
		switch s.How {
		case ByCommand:
			if strings.TrimSpace(s.Command) == "" {
				errs = append(errs, fmt.Errorf("setting %q starts the server but has no command", name))
			}
		case ByModel:
			if strings.TrimSpace(s.Model) == "" {
				errs = append(errs, fmt.Errorf("setting %q is a model but names none", name))
			}
		case ByHand:
			if strings.TrimSpace(s.Instruction) == "" {
				errs = append(errs, fmt.Errorf("setting %q is changed by hand but says nothing of what to change", name))
			}
		default:
			errs = append(errs, fmt.Errorf("setting %q: %q is not a way to reach a setting (command, model or by hand)", name, s.How))
		}
	}
	if p.Rounds < 0 || p.Rounds > TuneMaxRounds {
		errs = append(errs, fmt.Errorf("rounds %d is not allowed: 1 to %d", p.Rounds, TuneMaxRounds))
	}
	inner := p.Inner
	if inner.Model == "" {
		inner.Model = "x" // each setting may name its own
	}
	if err := inner.Validate(); err != nil {
		errs = append(errs, err)
	}
	if p.Replay != nil {
		rp := *p.Replay
		switch {
		case rp.Replay == nil:
			errs = append(errs, errors.New("a settings comparison's replay names no trace"))
		default:
			if rp.Model == "" {
				rp.Model = "x"
			}
			if err := rp.Validate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
