package hw

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// WallSample is one reading of a plug, T from the sampler's start (a
// monotonic offset, as Sample.T).
type WallSample struct {
	T      time.Duration
	PowerW float64
}

// WallSampler reads a plug at a steady interval from Start until Stop or
// its context ends. A reading that fails is a gap (said once in
// Warnings), never a 0 W reading.
type WallSampler struct {
	interval time.Duration
	start    time.Time
	cancel   context.CancelFunc
	done     chan struct{}

	mu      sync.Mutex
	samples []WallSample
	warns   []string
	failed  int
	// lastStamp is the plug's own stamp of the latest sample (""
	// where it gives none); repeats counts readings of a measurement
	// already kept.
	lastStamp string
	repeats   int
}

// StartSampling reads w (its family known: DetectWall first) every
// interval (0: DefaultInterval, at least MinInterval) until Stop.
func (w *Wall) StartSampling(ctx context.Context, interval time.Duration) *WallSampler {
	if interval == 0 {
		interval = DefaultInterval
	}
	interval = max(interval, MinInterval)
	ctx, cancel := context.WithCancel(ctx)
	s := &WallSampler{interval: interval, start: time.Now(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			// A reading is stamped when its answer came: the plug
			// measured before that, so a reading stamped inside the idle
			// window was taken before anything was sent (stamped when the
			// request left, a slow answer could carry the first request's
			// power into the idle).
			r, err := w.Read(ctx)
			at := time.Since(s.start)
			s.mu.Lock()
			switch {
			case err == nil && r.Updated != "" && r.Updated == s.lastStamp:
				// The same measurement read again: a sensor that
				// updates slower than it is read (Home Assistant's, at
				// its own pace) gives one sample per update, so a level
				// it updated too seldom in is said to be short.
				s.repeats++
			case err == nil:
				s.lastStamp = r.Updated
				s.samples = append(s.samples, WallSample{T: at, PowerW: r.PowerW})
			case ctx.Err() == nil:
				s.failed++
				if s.failed == 1 {
					s.warns = append(s.warns, "the wall plug missed a reading: "+err.Error())
				}
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// Offset is t as an offset from the sampler's start, for level windows.
func (s *WallSampler) Offset(t time.Time) time.Duration { return t.Sub(s.start) }

// Interval is the sampling interval.
func (s *WallSampler) Interval() time.Duration { return s.interval }

// Samples are the readings so far, oldest first.
func (s *WallSampler) Samples() []WallSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]WallSample(nil), s.samples...)
}

// Warnings say what went wrong while sampling, with how many readings
// were missed.
func (s *WallSampler) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.warns...)
	if s.failed > 1 {
		out = append(out, "the wall plug missed "+strconv.Itoa(s.failed)+" readings in all")
	}
	return out
}

// Stop ends sampling and waits for the reading in flight.
func (s *WallSampler) Stop() {
	s.cancel()
	<-s.done
}

// WallLevel is what the plug saw in one window: its mean power and
// energy, and the same less the idle power (the load's own cost; the
// whole is the bill). OK is false when the readings cannot support them
// (none within the gap limit of an edge, as Energy rules for a GPU).
type WallLevel struct {
	DurationS  float64
	Samples    int
	MeanPowerW float64
	EnergyJ    float64
	// IdleW is the idle power taken out; AboveIdleJ the energy above it
	// (never below 0: a plug's noise around idle is not negative work).
	IdleW      float64
	AboveIdleJ float64
	OK         bool
	// Short says the window held fewer than three of the plug's readings:
	// its figure leans on the curve between them.
	Short bool
}

// WallEnergy integrates the plug's readings over [from, to] with the
// arithmetic Energy uses for a GPU (a piecewise-linear curve through the
// readings, trapezoids, the same gap limit), and takes idleW out.
func WallEnergy(samples []WallSample, from, to time.Duration, idleW float64) WallLevel {
	as := make([]Sample, len(samples))
	for i, s := range samples {
		as[i] = Sample{T: s.T, GPU: 0, Valid: FieldPower, PowerW: s.PowerW}
	}
	e := Energy(as, from, to, []int{0})
	l := WallLevel{DurationS: e.DurationS, Samples: e.Samples, IdleW: idleW}
	if e.EnergyJ == nil || e.MeanPowerW == nil {
		return l
	}
	l.OK, l.EnergyJ, l.MeanPowerW = true, *e.EnergyJ, *e.MeanPowerW
	l.AboveIdleJ = max(l.EnergyJ-idleW*l.DurationS, 0)
	l.Short = e.Samples < 3
	return l
}

// WallIdle is the plug's mean power over an idle window: the mean of
// its readings inside it (not the curve to its edges, which would lean
// on the first reading under load after it); ok false when it read
// nothing there.
func WallIdle(samples []WallSample, from, to time.Duration) (float64, bool) {
	sum, n := 0.0, 0
	for _, s := range samples {
		if s.T >= from && s.T <= to {
			sum += s.PowerW
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Latest is the newest reading, for the live view.
func (s *WallSampler) Latest() (WallSample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return WallSample{}, false
	}
	return s.samples[len(s.samples)-1], true
}

// Repeats is how many readings were the plug's previous measurement
// read again, and left out.
func (s *WallSampler) Repeats() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repeats
}
