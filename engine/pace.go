package engine

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/kovara/desktop/engine/setup"
)

// Open-loop send schedules for the rate plan: each request's intended
// send time, worked out before the level from a seed, so the same seed
// sends at the same times and a request's latency can be taken from the
// time it was meant to leave, whatever happened to the one before it.

// Schedule is a precomputed open-loop pacer: request k is due at
// Schedule[k] after the loop's release; the loop ends after the last.
type Schedule []time.Duration

// Due is request k's intended send time.
func (s Schedule) Due(k int) (time.Duration, bool) {
	if k < 0 || k >= len(s) {
		return 0, false
	}
	return s[k], true
}

// NewSchedule is n send times at rate requests a second from seed:
// evenly spaced (constant), with exponential gaps (poisson) or with gamma
// gaps of shape burstiness (gamma; 1 is Poisson, below 1 burstier).
// Every gap has mean 1/rate; the first request is due at the release.
func NewSchedule(arrival string, rate, burstiness float64, n int, seed int64) Schedule {
	if !(rate > 0) || n <= 0 {
		return nil
	}
	shape := 1.0
	switch arrival {
	case setup.ArrivalConstant:
		shape = 0 // no randomness
	case setup.ArrivalGamma:
		if burstiness > 0 {
			shape = burstiness
		}
	}
	// The seed and the rate together pick the stream, so two rates of a
	// run do not send in lockstep.
	rng := rand.New(rand.NewPCG(uint64(seed), math.Float64bits(rate)))
	mean := float64(time.Second) / rate
	out := make(Schedule, n)
	var at float64
	for k := range out {
		out[k] = time.Duration(at)
		gap := mean
		if shape > 0 {
			gap = gammaDraw(rng, shape) / shape * mean
		}
		at += gap
	}
	return out
}

// gammaDraw is a gamma variate of shape k and scale 1 (Marsaglia and
// Tsang; shapes below 1 by the boost of one, U^(1/k)).
func gammaDraw(rng *rand.Rand, k float64) float64 {
	if k < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gammaDraw(rng, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// spinWindow is how long before a request's intended time its slot stops
// sleeping on a timer and yields in a loop instead: Go's timers wake a
// few hundred µs late on a busy machine (13 ms at the 99th percentile
// under a load of 8 on two cores, against 5 ms for the loop), and that
// lateness would be every open-loop request's.
const spinWindow = time.Millisecond

// sleepPrecise is sleepUntil, its last spinWindow spent yielding rather
// than on a timer.
func sleepPrecise(ctx context.Context, clock func() time.Duration, at time.Duration) bool {
	if at-clock() > spinWindow && !sleepUntil(ctx, clock, at-spinWindow) {
		return false
	}
	for clock() < at {
		if ctx.Err() != nil {
			return false
		}
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
