package engine

import (
	"slices"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/setup"
)

// levelFirstNumber is the request number of a level's first measured
// request (docs/method.md): numbers depend only on the plan.
func levelFirstNumber(p setup.KovaraPlan, level int) int64 {
	return prompt.MeasuredRequest(p.Warmup, p.Requests, level, 0)
}

func maxConcurrency(p setup.KovaraPlan) int { return slices.Max(p.Concurrency) }
