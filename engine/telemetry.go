package engine

import (
	"context"
	"time"

	"github.com/kovara/desktop/hw"
)

// inventoryTimeout bounds the GPU inventory at the start of a run.
const inventoryTimeout = 20 * time.Second

// gpuWatch is the GPU telemetry of one run: a sampler started before the
// first measured request, the window of every level, and what went wrong.
// The benchmark never waits on it: every failure becomes a warning.
type gpuWatch struct {
	src     hw.Source
	inv     []hw.GPU
	smp     *hw.Sampler
	windows []hw.LevelWindow
	warns   []string
}

// watchGPUs starts telemetry from source ("" for none). It returns nil
// when there is no source.
func watchGPUs(ctx context.Context, source string) *gpuWatch {
	src, err := hw.ParseSource(source)
	if src == nil {
		if err != nil {
			return &gpuWatch{warns: []string{"GPU telemetry is off: " + err.Error()}}
		}
		return nil
	}
	g := &gpuWatch{src: src}
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
func (g *gpuWatch) finish() (*hw.Telemetry, []string) {
	if g == nil {
		return nil, nil
	}
	if g.src == nil {
		return nil, g.warns
	}
	g.stop()
	t := hw.NewTelemetry(g.src, g.inv, g.smp, g.windows, g.warns...)
	return &t, t.Warnings
}
