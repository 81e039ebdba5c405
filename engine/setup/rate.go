package setup

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/internal/decimal"
)

// The rate plan (docs/plans.md, "The rate plan"): requests sent at a
// rate, open loop, whatever the server does with them, with each
// request's latency taken from the time it was meant to leave.

// How the rate plan spaces its requests.
const (
	ArrivalConstant = "constant" // evenly, 1/rate apart
	ArrivalPoisson  = "poisson"  // exponential gaps: independent users
	ArrivalGamma    = "gamma"    // gamma gaps with shape Burstiness
)

// Arrivals are the arrival patterns, in the order forms list them.
var Arrivals = []string{ArrivalPoisson, ArrivalConstant, ArrivalGamma}

// The rate plan's defaults and bounds.
const (
	RateDefaultRequests     = 64
	RateDefaultInputTokens  = 256
	RateDefaultOutputTokens = 128
	RateDefaultMaxInFlight  = 64
	RateDefaultWarmup       = 2
	RateMaxInFlight         = 1024
	RateMaxRequests         = 100000
	// RateMinRate and RateMaxRate bound a rate given by hand (requests/s).
	RateMinRate = 0.01
	RateMaxRate = 10000
	// RateSweepFrom is where a sweep starts when the request timed to
	// choose its start fails; it doubles to RateSweepMax, and
	// RateSweepRefine bisections then narrow the highest sustainable rate.
	RateSweepFrom   = 1
	RateSweepMax    = 512
	RateSweepRefine = 2
	// RateGoodputTarget is the share of requests that must meet the
	// service level for a rate to count as sustained: the p95 the
	// service level names.
	RateGoodputTarget = 0.95
)

// RateSLO is the service level goodput is judged by: each request on its
// own TTFT (from its intended send), its time per output token and its
// own output speed. A zero field is not judged.
type RateSLO struct {
	TTFTMs  float64 // --slo-ttft-p95: the time to first token each request must meet, ms
	TPOTMs  float64 // --slo-tpot: ms per output token after the first
	UserTPS float64 // --slo-user-tps: output tokens a second each request must see
}

// Set says whether any limit is given.
func (s RateSLO) Set() bool { return s.TTFTMs > 0 || s.TPOTMs > 0 || s.UserTPS > 0 }

// RatePlan is what the rate plan sends.
type RatePlan struct {
	Model string // "" for the only one served
	// Rates are the offered rates in requests/s, lowest first; nil with
	// Sweep.
	Rates []float64
	// Sweep finds the highest sustainable rate: doubling from SweepFrom
	// to SweepMax (0: RateSweepMax), then bisecting. SweepFrom 0 starts
	// at half the rate one request at a time keeps up with (timed on one
	// request before the sweep), RateSweepFrom if that request fails.
	Sweep     bool
	SweepFrom float64
	SweepMax  float64
	// Arrival is ArrivalConstant, ArrivalPoisson ("" too) or ArrivalGamma.
	Arrival string
	// Burstiness is the gamma shape (0: 1, which is Poisson): below 1
	// burstier, above 1 more even.
	Burstiness float64
	// MaxInFlight caps the requests in flight at once (0:
	// RateDefaultMaxInFlight); a request due while all are busy waits,
	// and that wait counts in its latency.
	MaxInFlight int
	// Requests is how many requests each rate sends (0:
	// RateDefaultRequests): a rate lasts about Requests/rate seconds.
	Requests     int
	InputTokens  int // 0: RateDefaultInputTokens
	OutputTokens int // 0: RateDefaultOutputTokens
	// Warmup is the unmeasured requests sent one by one before the first
	// rate (0: none; negative: none either).
	Warmup int
	// Seed makes the prompts and the send schedule: the same seed sends
	// at the same times. Without FixedSeed the prompts get a fresh seed
	// (a server's cache has not seen them); the schedule keeps Seed.
	Seed      int64
	FixedSeed bool
	SLO       RateSLO
	// Workload is what each request asks: the synthetic prompt unless it
	// says a prompts file, a shared prefix or turns.
	Workload Workload
	// Replay, when set, sends a recorded trace as the plan's one level
	// in place of Rates or Sweep (its requests, their times, prompts and
	// answers the trace's).
	Replay    *Replay
	Timeout   time.Duration // per request; 0: PlanTimeout
	Simulated bool
	// MetricsInterval: how often /metrics is read (0: 1 s; negative: never).
	MetricsInterval time.Duration
}

// DefaultRatePlan is the rate plan with its defaults: a sweep, Poisson.
func DefaultRatePlan() RatePlan {
	return RatePlan{Sweep: true, Arrival: ArrivalPoisson, MaxInFlight: RateDefaultMaxInFlight, Requests: RateDefaultRequests,
		InputTokens: RateDefaultInputTokens, OutputTokens: RateDefaultOutputTokens, Warmup: RateDefaultWarmup, Seed: DefaultSeed, Timeout: PlanTimeout}
}

// WithDefaults fills what is left zero.
func (p RatePlan) WithDefaults() RatePlan {
	if p.Arrival == "" {
		p.Arrival = ArrivalPoisson
	}
	if p.Burstiness == 0 {
		p.Burstiness = 1
	}
	if p.MaxInFlight == 0 {
		p.MaxInFlight = RateDefaultMaxInFlight
	}
	if p.Requests == 0 {
		p.Requests = RateDefaultRequests
	}
	if p.InputTokens == 0 {
		p.InputTokens = RateDefaultInputTokens
	}
	if p.OutputTokens == 0 {
		p.OutputTokens = RateDefaultOutputTokens
	}
	if p.Timeout == 0 {
		p.Timeout = PlanTimeout
	}
	if p.Sweep {
		if p.SweepMax == 0 {
			p.SweepMax = RateSweepMax
		}
	}
	if p.Rates != nil {
		p.Rates = slices.Compact(slices.Sorted(slices.Values(p.Rates)))
	}
	return p
}

// Validate refuses a plan that cannot run, one sentence per problem.
func (p RatePlan) Validate() error {
	var errs []error
	if p.Replay != nil {
		if err := p.Replay.Validate(); err != nil {
			errs = append(errs, err)
		}
		if p.Sweep || len(p.Rates) > 0 {
			errs = append(errs, errors.New("a trace sends its requests at their recorded times: give the trace or rates, not both"))
		}
		if p.Workload.Set() {
			errs = append(errs, errors.New("a trace makes its own prompts: it cannot be given with a prompts file, a shared prefix or turns"))
		}
	}
	if p.Sweep && len(p.Rates) > 0 {
		errs = append(errs, errors.New("give rates or a sweep, not both"))
	}
	if p.Replay == nil && !p.Sweep && len(p.Rates) == 0 {
		errs = append(errs, errors.New("give at least one rate in requests a second, like 1,2,4, or sweep"))
	}
	for _, r := range p.Rates {
		if !(r >= RateMinRate && r <= RateMaxRate) {
			errs = append(errs, fmt.Errorf("rate %s is not allowed: use %s to %s requests a second", FormatRate(r), FormatRate(RateMinRate), FormatRate(RateMaxRate)))
		}
	}
	if p.Sweep {
		from, top := p.SweepFrom, p.SweepMax
		if top == 0 {
			top = RateSweepMax
		}
		if from == 0 {
			from = RateMinRate // chosen by the run, at least this
		}
		if !(from >= RateMinRate && top <= RateMaxRate && from < top) {
			errs = append(errs, fmt.Errorf("a sweep from %s to %s requests a second is not allowed: it starts at %s or more and ends above its start, at most %s",
				FormatRate(from), FormatRate(top), FormatRate(RateMinRate), FormatRate(RateMaxRate)))
		}
	}
	switch p.Arrival {
	case "", ArrivalConstant, ArrivalPoisson, ArrivalGamma:
	default:
		errs = append(errs, fmt.Errorf("arrival %q is not one of constant, poisson or gamma", p.Arrival))
	}
	if p.Burstiness < 0 || p.Burstiness > 100 || math.IsNaN(p.Burstiness) {
		errs = append(errs, fmt.Errorf("burstiness %g is not allowed: give the gamma shape, more than 0 and at most 100 (1 is Poisson, below 1 burstier)", p.Burstiness))
	}
	if p.Burstiness != 0 && p.Burstiness != 1 && p.Arrival != ArrivalGamma {
		errs = append(errs, errors.New("burstiness shapes gamma arrivals only: add --arrival gamma"))
	}
	if p.MaxInFlight < 0 || p.MaxInFlight > RateMaxInFlight {
		errs = append(errs, fmt.Errorf("max in flight %d is not allowed: use 1 to %d", p.MaxInFlight, RateMaxInFlight))
	}
	if p.Requests < 0 || p.Requests > RateMaxRequests {
		errs = append(errs, fmt.Errorf("requests per rate %d is not allowed: use 1 to %d", p.Requests, RateMaxRequests))
	}
	if p.InputTokens < 0 {
		errs = append(errs, fmt.Errorf("input tokens %d is not allowed: it must be at least 1", p.InputTokens))
	}
	if p.OutputTokens < 0 || p.OutputTokens == 1 {
		errs = append(errs, fmt.Errorf("output tokens %d is not allowed: a time per output token needs answers of at least 2 tokens", p.OutputTokens))
	}
	if p.SLO.TTFTMs < 0 || p.SLO.TPOTMs < 0 || p.SLO.UserTPS < 0 {
		errs = append(errs, errors.New("a service level limit cannot be negative"))
	}
	if p.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %s is not allowed: it must be more than 0", p.Timeout))
	}
	if err := p.Workload.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ParseRates reads rates as the CLI and the app take them: requests a
// second, comma-separated ("1,2,4" or "0.5, 8"); "sweep" gives nil and
// sweep true.
func ParseRates(s string) (rates []float64, sweep bool, err error) {
	if strings.EqualFold(strings.TrimSpace(s), "sweep") {
		return nil, true, nil
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(part, "/s"), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, false, fmt.Errorf("%q is not a rate: give requests a second, like 0.5, 2 or 10, or the word sweep", part)
		}
		rates = append(rates, v)
	}
	if len(rates) == 0 {
		return nil, false, errors.New("give at least one rate in requests a second, like 1,2,4, or sweep")
	}
	return rates, false, nil
}

// FormatRate writes a rate as ParseRates reads it, a plain decimal to
// four significant digits that never drops a whole digit: "2", "0.5",
// "20000" (not "2e+04").
func FormatRate(r float64) string { return decimal.Short(r) }

// FormatRates writes rates as ParseRates reads them ("sweep" for a sweep).
func FormatRates(rates []float64, sweep bool) string {
	if sweep {
		return "sweep"
	}
	s := make([]string, len(rates))
	for i, r := range rates {
		s[i] = FormatRate(r)
	}
	return strings.Join(s, ",")
}
