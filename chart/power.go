package chart

import (
	"math"
	"slices"

	"github.com/kovara/desktop/engine/results"
)

// NoPower is said instead of the power chart when neither the GPUs nor
// a wall plug kept readings over time.
const NoPower = "No power readings over time: give the endpoint a GPU telemetry source or a wall plug."

// PowerOverTime is a run's power over its time (issue #49): the wall
// plug's readings, the GPUs' total, the wall's idle as a flat line, and
// each measured window as a bar along the top named on the x axis at
// its middle, so the power a level drew reads against its name. ok is
// false when neither source kept a series.
func PowerOverTime(p results.Powered, pal Palette) (Spec, bool) {
	heading, keys := p.EnergyKeys()
	tel, wall := p.Power()
	spec := Spec{Title: "Power over the run", XLabel: "the run's time; each measured window named by its " + lowerFirst(heading),
		YLabel: "W", YFromZero: true, Palette: pal}
	top := 0.0
	var wallWindow, gpuWindow func(k int) (float64, float64, bool)
	if wall != nil && wall.Series != nil && len(wall.Series.TS) > 0 {
		s := Series{Name: "wall", X: wall.Series.TS, Y: wall.Series.PowerW, Kind: Line, Color: 0}
		spec.Series = append(spec.Series, s)
		top = max(top, slices.Max(s.Y))
		if wall.IdleW != nil {
			x := []float64{s.X[0], s.X[len(s.X)-1]}
			spec.Series = append(spec.Series, Series{Name: "wall at idle", X: x, Y: []float64{*wall.IdleW, *wall.IdleW}, Kind: Line, Color: 5})
		}
		wallWindow = func(k int) (float64, float64, bool) {
			lv, ok := wall.Levels[k]
			return lv.StartS, lv.EndS, ok && lv.EndS > lv.StartS
		}
	}
	if tel != nil && len(tel.Series.TS) > 0 {
		x := make([]float64, len(tel.Series.TS))
		y := make([]float64, len(tel.Series.TS))
		for i, t := range tel.Series.TS {
			x[i], y[i] = t+tel.Series.ZeroS, math.NaN()
			if v := tel.Series.PowerW[i]; v != nil {
				y[i] = *v
				top = max(top, *v)
			}
		}
		spec.Series = append(spec.Series, Series{Name: "GPUs", X: x, Y: y, Kind: Line, Color: 3})
		gpuWindow = func(k int) (float64, float64, bool) {
			lv, ok := tel.Levels[k]
			return lv.StartS, lv.EndS, ok && lv.EndS > lv.StartS
		}
	}
	if len(spec.Series) == 0 {
		return Spec{}, false
	}
	// The windows: a bar each above the highest reading.
	bar := top * 1.08
	var bx, by []float64
	for _, k := range keys {
		var from, to float64
		ok := false
		for _, w := range []func(int) (float64, float64, bool){wallWindow, gpuWindow} {
			if w != nil && !ok {
				from, to, ok = w(k.Key)
			}
		}
		if !ok {
			continue
		}
		// A little short of each end, so windows that touch read apart.
		in := (to - from) * 0.02
		bx = append(bx, from+in, to-in, to-in)
		by = append(by, bar, bar, math.NaN())
		spec.XTicks = append(spec.XTicks, (from+to)/2)
		spec.XTickLabels = append(spec.XTickLabels, k.Label)
	}
	if len(bx) == 0 {
		spec.XLabel = "seconds since the run's start"
	} else {
		spec.Series = append(spec.Series, Series{Name: "measured", X: bx, Y: by, Kind: Line, Color: 2})
	}
	return spec, true
}

// lowerFirst is s with its first letter small, for a heading inside a
// sentence ("Concurrency" → "concurrency").
func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
