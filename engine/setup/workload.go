package setup

import (
	"errors"
	"fmt"
)

// Workload is what a plan's requests ask beyond the method's synthetic
// prompt (docs/plans.md, "Your own load"): a person's own prompts from a
// file, a long system prompt that groups of users share, or conversations
// that carry their history. The zero value is the synthetic prompt.
type Workload struct {
	// PromptsFile is a JSONL or ShareGPT JSON file of prompts
	// (--prompts); each request sends one, sampled with the seed.
	PromptsFile string
	// SkipBad skips a malformed record of PromptsFile, named by its line,
	// where the default refuses the file at it.
	SkipBad bool
	// SharedPrefix is the length, in tokens, of the system prompt every
	// request of a group starts with (--shared-prefix); 0: none.
	SharedPrefix int
	// PrefixGroups splits the users into groups with a system prompt
	// each (0: 1).
	PrefixGroups int
	// Turns is how many turns each user's conversation has before it
	// starts a new one (--turns); every turn sends the whole history. 0
	// or 1: one question a request.
	Turns int
}

// The workload's bounds.
const (
	MaxSharedPrefix = 200000
	MaxPrefixGroups = 64
	MaxTurns        = 100
)

// Set says whether the workload is anything but the synthetic prompt.
func (w Workload) Set() bool {
	return w.PromptsFile != "" || w.SharedPrefix > 0 || w.Turns > 1
}

// Groups is how many system prompts the users share (1 without a shared
// prefix).
func (w Workload) Groups() int { return max(w.PrefixGroups, 1) }

// Conversation is how many turns a conversation has (1: none).
func (w Workload) Conversation() int { return max(w.Turns, 1) }

// ExtraTokens is how many prompt tokens the workload adds to a plan's
// longest prompt of input tokens with answers of output, held against
// the server's context with the plan's own: the system prompt and, in a
// conversation's last turn, every turn before it.
func (w Workload) ExtraTokens(input, output int) int {
	extra := max(w.SharedPrefix, 0)
	if w.Turns > 1 {
		extra += (w.Turns - 1) * (input + output)
	}
	return extra
}

// Validate refuses a workload that cannot run, one sentence per problem.
func (w Workload) Validate() error {
	var errs []error
	if w.SharedPrefix < 0 || w.SharedPrefix > MaxSharedPrefix {
		errs = append(errs, fmt.Errorf("a shared prefix of %d tokens is not allowed: use 0 (none) to %d", w.SharedPrefix, MaxSharedPrefix))
	}
	if w.PrefixGroups < 0 || w.PrefixGroups > MaxPrefixGroups {
		errs = append(errs, fmt.Errorf("%d prefix groups is not allowed: use 1 to %d", w.PrefixGroups, MaxPrefixGroups))
	}
	if w.PrefixGroups > 1 && w.SharedPrefix == 0 {
		errs = append(errs, errors.New("prefix groups need a shared prefix: give its length in tokens"))
	}
	if w.Turns < 0 || w.Turns > MaxTurns {
		errs = append(errs, fmt.Errorf("%d turns is not allowed: use 1 to %d", w.Turns, MaxTurns))
	}
	if w.PromptsFile != "" && (w.SharedPrefix > 0 || w.Turns > 1) {
		errs = append(errs, errors.New("a prompts file holds whole requests: it cannot be given with a shared prefix or turns, which build their own"))
	}
	if w.SkipBad && w.PromptsFile == "" {
		errs = append(errs, errors.New("skipping malformed prompts needs a prompts file"))
	}
	return errors.Join(errs...)
}
