package engine

import (
	"context"
	"time"

	"github.com/kovara/desktop/engine/results"
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
	warns            []string
}

// watchWall finds the endpoint's plug, starts reading it, and reads it
// idle for wallIdle (said in the log) before returning; nil without a
// plug.
func watchWall(ctx context.Context, ep Endpoint, obs Observer) *wallWatch {
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
	g := &wallWatch{w: w, smp: w.StartSampling(ctx, wallEvery)}
	obs.logf("reading the wall plug (%s at %s) at idle for %s", w.Family.Name(), w.Host(), wallIdle)
	obs.Live.setPhase(PhaseWallIdle)
	g.idleFrom = g.smp.Offset(time.Now())
	select {
	case <-ctx.Done():
	case <-time.After(wallIdle):
	}
	g.idleTo = g.smp.Offset(time.Now())
	return g
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
	for _, win := range g.windows {
		l := hw.WallEnergy(samples, g.smp.Offset(win.Start), g.smp.Offset(win.End), idle)
		lv := results.WallLevel{DurationS: l.DurationS, Samples: l.Samples, Short: l.Short}
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
