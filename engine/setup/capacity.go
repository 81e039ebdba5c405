package setup

import (
	"errors"
	"fmt"
	"math"
)

// Capacity plan defaults.
const (
	DefaultSLOUserTPS   = 20   // tokens/s each user sees; faster than people read
	DefaultSLOTTFTP95Ms = 2000 // ms
	DefaultCapacityMax  = 256
	// capacityMinRequests is results.MinP95, the successes a level
	// needs for its p95 (TestCapacityRequestsHoldAP95 holds them equal:
	// this package imports nothing of the results format).
	capacityMinRequests       = 20
	capacityRequestsPerStream = 3
)

// CapacityRequestsRule says CapacityRequests in a capacity result.
var CapacityRequestsRule = fmt.Sprintf("max(%d, %d × concurrency)", capacityMinRequests, capacityRequestsPerStream)

// CapacityPlan is what the capacity plan sends and the service level it
// holds the server to.
type CapacityPlan struct {
	// KovaraPlan gives the model, prompt and answer lengths, warmup, seed and
	// timeout of the Kovara method; the search chooses the levels and
	// their requests, so KovaraPlan.Concurrency and KovaraPlan.Requests are unused.
	KovaraPlan
	UserTPS        float64 // per-user output rate floor, tokens/s (p5 of requests)
	TTFTP95Ms      float64 // ceiling on TTFT p95, ms
	MaxConcurrency int
}

// DefaultCapacityPlan is the capacity plan with its defaults.
func DefaultCapacityPlan() CapacityPlan {
	p := DefaultPlan()
	return CapacityPlan{KovaraPlan: p, UserTPS: DefaultSLOUserTPS, TTFTP95Ms: DefaultSLOTTFTP95Ms, MaxConcurrency: DefaultCapacityMax}
}

// CapacityRequests is the number of requests at concurrency c: enough for a
// p95 and three per stream.
func CapacityRequests(c int) int { return max(capacityMinRequests, capacityRequestsPerStream*c) }

// Validate refuses a plan that cannot run, one sentence per problem.
func (p CapacityPlan) Validate() error {
	var errs []error
	if !(p.UserTPS > 0) || math.IsInf(p.UserTPS, 0) {
		errs = append(errs, fmt.Errorf("the per-user tok/s floor %v is not allowed: it must be more than 0", p.UserTPS))
	}
	if !(p.TTFTP95Ms > 0) || math.IsInf(p.TTFTP95Ms, 0) {
		errs = append(errs, fmt.Errorf("the TTFT p95 ceiling %v ms is not allowed: it must be more than 0", p.TTFTP95Ms))
	}
	if p.MaxConcurrency < 1 {
		errs = append(errs, fmt.Errorf("maximum concurrency %d is not allowed: it must be at least 1", p.MaxConcurrency))
	} else if err := p.Kovara().Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Kovara is the Kovara plan the levels run under.
func (p CapacityPlan) Kovara() KovaraPlan {
	k := p.KovaraPlan
	k.Concurrency = []int{max(p.MaxConcurrency, 1)}
	k.Requests = CapacityRequests(max(p.MaxConcurrency, 1))
	return k
}
