package engine

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/hw"
)

// wallIdle is how long the wall plug is read idle before anything is
// sent, and wallEvery how often it is read: a plug updates about once a
// second. Variables for tests, which read a stand-in faster.
var (
	wallIdle  = 5 * time.Second
	wallEvery = hw.DefaultInterval
)

// wallWatch is the wall plug of one run (issue #49): its idle power read
// before the first request, and each measured stage's window. Like the
// GPU telemetry it never ends the benchmark: a plug that does not answer
// is a warning.
type wallWatch struct {
	w                *hw.Wall
	smp              *hw.WallSampler
	idleFrom, idleTo time.Duration
	windows          []hw.LevelWindow
	t0               time.Time               // the run's start: the zero of the series and windows kept
	idle             atomic.Pointer[float64] // the idle mean, once read (the live view reads it)
	warns            []string
}

// watchWall finds the endpoint's plug, starts reading it, and reads it
// idle for wallIdle (said in the log) before returning; nil without a
// plug.
func watchWall(ctx context.Context, ep setup.Endpoint, obs Observer, t0 time.Time) *wallWatch {
	if ep.Wall == "" {
		return nil
	}
	w, err := hw.ParseWall(ep.Wall, ep.WallToken)
	if err != nil {
		return &wallWatch{warns: []string{"wall power is off: " + scrub(err.Error(), ep.WallToken)}}
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = w.DetectWall(dctx)
	cancel()
	if err != nil {
		return &wallWatch{warns: []string{"wall power unavailable: " + scrub(err.Error(), ep.WallToken)}}
	}
	g := &wallWatch{w: w, smp: w.StartSampling(ctx, wallEvery), t0: t0}
	obs.logf("reading the wall plug (%s at %s) at idle for %s", w.Family.Name(), w.Host(), wallIdle)
	obs.Live.setWall(g.latest)
	obs.Live.setPhase(PhaseWallIdle)
	g.idleFrom = g.smp.Offset(time.Now())
	select {
	case <-ctx.Done():
	case <-time.After(wallIdle):
	}
	g.idleTo = g.smp.Offset(time.Now())
	if idle, ok := hw.WallIdle(g.smp.Samples(), g.idleFrom, g.idleTo); ok {
		g.idle.Store(&idle)
	}
	return g
}

// latest is the plug's newest reading for the live view, from the run's
// start, with the idle once it is known.
func (g *wallWatch) latest() (WallReading, bool) {
	s, ok := g.smp.Latest()
	if !ok {
		return WallReading{}, false
	}
	return WallReading{At: s.T - g.smp.Offset(g.t0), PowerW: s.PowerW, IdleW: g.idle.Load()}, true
}

// level records a finished stage's window and output tokens under key,
// as gpuWatch.level does.
func (g *wallWatch) level(key, concurrency int, start, end time.Time, outputTokens int64) {
	if g == nil || g.smp == nil {
		return
	}
	g.windows = append(g.windows, hw.LevelWindow{Key: key, Concurrency: concurrency, Start: start, End: end, OutputTokens: outputTokens})
}

// stop ends the readings.
func (g *wallWatch) stop() {
	if g != nil && g.smp != nil {
		g.smp.Stop()
	}
}

// finish stops the readings and works out the idle power and each
// level's: nil without a plug; warnings alone where it could not be read.
func (g *wallWatch) finish() (*results.WallTelemetry, []string) {
	if g == nil {
		return nil, nil
	}
	if g.smp == nil {
		return nil, g.warns
	}
	g.stop()
	samples := g.smp.Samples()
	t := &results.WallTelemetry{Family: string(g.w.Family), Host: g.w.Host(), IntervalMS: g.smp.Interval().Milliseconds(),
		IdleS: (g.idleTo - g.idleFrom).Seconds(), Levels: map[int]results.WallLevel{}, Warnings: append(g.warns, g.smp.Warnings()...)}
	idle, ok := hw.WallIdle(samples, g.idleFrom, g.idleTo)
	if ok {
		t.IdleW = &idle
	} else {
		t.Warnings = append(t.Warnings, "the wall plug gave no reading while idle, so nothing is taken out as idle power")
	}
	// The series and the windows are kept from the run's start, as the
	// live view and the charts count time.
	shift := -g.smp.Offset(g.t0)
	t.Series = &results.WallSeries{TS: make([]float64, 0, len(samples)), PowerW: make([]float64, 0, len(samples))}
	for _, s := range samples {
		t.Series.TS = append(t.Series.TS, roundS(s.T+shift))
		t.Series.PowerW = append(t.Series.PowerW, s.PowerW)
	}
	for _, win := range g.windows {
		l := hw.WallEnergy(samples, g.smp.Offset(win.Start), g.smp.Offset(win.End), idle)
		lv := results.WallLevel{StartS: roundS(win.Start.Sub(g.t0)), EndS: roundS(win.End.Sub(g.t0)),
			DurationS: l.DurationS, Samples: l.Samples, Short: l.Short, OutputTokens: win.OutputTokens}
		if l.OK {
			lv.MeanPowerW, lv.EnergyJ = ptr(l.MeanPowerW), ptr(l.EnergyJ)
			if l.EnergyJ > 0 {
				lv.TokensPerJoule = ptr(float64(win.OutputTokens) / l.EnergyJ)
			}
			if ok {
				lv.AboveIdleW, lv.AboveIdleJ = ptr(max(l.MeanPowerW-idle, 0)), ptr(l.AboveIdleJ)
				if l.AboveIdleJ > 0 {
					lv.TokensPerJouleAboveIdle = ptr(float64(win.OutputTokens) / l.AboveIdleJ)
				}
			}
		}
		t.Levels[win.Key] = lv
	}
	return t, t.Warnings
}

// roundS is d in seconds to the millisecond, as the series keeps it.
func roundS(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }
