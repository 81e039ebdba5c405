package sim

import (
	"errors"
	"time"
)

// The load model's answer to "how many users at once within a service
// level?", the ground truth the capacity plan is tested against
// (docs/plans.md, "The capacity plan").

// ServiceLevel is a capacity question: a per-user output rate floor and a
// TTFT p95 ceiling, for prompts of PromptWords words and answers of
// OutputTokens tokens, up to MaxConcurrency users.
type ServiceLevel struct {
	UserTPS        float64
	TTFTP95        time.Duration
	PromptWords    int
	OutputTokens   int
	MaxConcurrency int
}

// Capacity is the largest closed-loop concurrency, up to
// sl.MaxConcurrency, at which this configuration meets sl. Up to
// BatchCapacity every request is admitted at once: its TTFT is its
// prefill, and every sequence decodes one token per
// TokenInterval·(1+BatchSlowdown·(c−1)). Past BatchCapacity, a share of at
// least (c−BatchCapacity)/c of the requests waits in the queue for a whole
// answer before its prefill; with that share over 5 % and the ceiling below
// one answer's time, TTFT p95 misses. A question this model cannot answer
// exactly (jitter, a prompt cache, a ceiling the queue might still meet) is
// an error rather than a guess.
func (c Config) Capacity(sl ServiceLevel) (int, error) {
	c = c.withDefaults()
	if c.Jitter != 0 || *c.PromptCache {
		return 0, errors.New("sim: capacity is exact only without jitter and prompt cache")
	}
	if sl.UserTPS <= 0 || sl.TTFTP95 <= 0 || sl.PromptWords < 1 || sl.OutputTokens < 2 || sl.MaxConcurrency < 1 {
		return 0, errors.New("sim: incomplete service level")
	}
	prefill := time.Duration(float64(sl.PromptWords+c.TemplateOverhead) / c.PrefillRate * float64(time.Second))
	interval := func(b int) time.Duration {
		return time.Duration(float64(c.TokenInterval) * (1 + c.BatchSlowdown*float64(b-1)))
	}
	capacity := 0
	for n := 1; n <= sl.MaxConcurrency; n++ {
		b := min(n, c.BatchCapacity)
		rate := float64(time.Second) / float64(interval(b))
		ttftOK := prefill <= sl.TTFTP95
		if n > c.BatchCapacity {
			answer := prefill + time.Duration(sl.OutputTokens-1)*interval(b)
			if sl.TTFTP95 >= answer || float64(n-c.BatchCapacity)/float64(n) <= 0.05 {
				return 0, errors.New("sim: the TTFT ceiling is not below one whole answer's time past the batch capacity")
			}
			ttftOK = false
		}
		if !ttftOK || rate < sl.UserTPS {
			break
		}
		capacity = n
	}
	return capacity, nil
}
