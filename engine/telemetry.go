package engine

import (
	"context"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/hw"
)

// inventoryTimeout bounds the GPU inventory at the start of a run: over
// ssh it also finds which tool the machine has (hw's detection).
const inventoryTimeout = 30 * time.Second

// gpuWatch is the GPU telemetry of one run: a sampler started before the
// first measured request, the window of every level, and what went wrong.
// The benchmark never waits on it: every failure becomes a warning.
type gpuWatch struct {
	src     hw.Source
	inv     []results.GPU
	smp     *hw.Sampler
	windows []hw.LevelWindow
	warns   []string
	t0      time.Time // the run's start, which the series is placed against
}

// watchGPUs starts telemetry from source ("" for none). It returns nil
// when there is no source.
func watchGPUs(ctx context.Context, source string, t0 time.Time) *gpuWatch {
	src, err := hw.ParseSource(source)
	if src == nil {
		if err != nil {
			return &gpuWatch{warns: []string{"GPU telemetry is off: " + err.Error()}}
		}
		return nil
	}
	g := &gpuWatch{src: src, t0: t0}
	ictx, cancel := context.WithTimeout(ctx, inventoryTimeout)
	inv, err := src.Inventory(ictx)
	cancel()
	if err != nil {
		g.warns = append(g.warns, "GPU telemetry unavailable: "+err.Error())
		return g
	}
	g.inv = inv
	smp, err := src.Start(ctx, hw.DefaultInterval)
	if err != nil {
		g.warns = append(g.warns, "GPU telemetry unavailable: "+err.Error())
		return g
	}
	g.smp = smp
	return g
}

// level records a finished stage's window and output tokens under key
// (see session.gpuWindow).
func (g *gpuWatch) level(key, concurrency int, start, end time.Time, outputTokens int64) {
	if g == nil || g.smp == nil {
		return
	}
	g.windows = append(g.windows, hw.LevelWindow{Key: key, Concurrency: concurrency, Start: start, End: end, OutputTokens: outputTokens})
}

// latest is the newest total power and utilisation, for the live view.
func (g *gpuWatch) latest() (hw.Point, bool) {
	if g == nil || g.smp == nil {
		return hw.Point{}, false
	}
	return g.smp.Latest()
}

// stop ends sampling early (a failed stage); finish may follow.
func (g *gpuWatch) stop() {
	if g != nil && g.smp != nil {
		g.smp.Stop()
	}
}

// finish stops sampling and returns the telemetry for local.telemetry and
// the warnings to add to the run's.
func (g *gpuWatch) finish() (*results.Telemetry, []string) {
	if g == nil {
		return nil, nil
	}
	if g.src == nil {
		return nil, g.warns
	}
	g.stop()
	t := hw.NewTelemetry(g.src, g.inv, g.smp, g.windows, g.warns...)
	t.Tool = hw.Tool(g.src)
	if g.smp != nil {
		// The series counts from the sampler's start, which came after
		// the inventory: the chart places it on the run's time.
		t.Series.ZeroS = roundS(-g.smp.Offset(g.t0))
	}
	for _, w := range g.windows {
		if lv, ok := t.Levels[w.Key]; ok {
			lv.StartS, lv.EndS = roundS(w.Start.Sub(g.t0)), roundS(w.End.Sub(g.t0))
			t.Levels[w.Key] = lv
		}
	}
	return &t, t.Warnings
}
