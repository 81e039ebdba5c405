package hw

import (
	"slices"
	"time"

	"github.com/kovara/desktop/telemetry"
)

type maskPoint struct {
	t time.Duration
	m uint64
}

// clockEvents sets the window's clock event figures (LevelEnergy and each
// GPUEnergy's ClockEventS and ThrottledShare) from the readings that carry
// FieldClockEvents. A reading's reasons hold from its time until the GPU's
// next reading; before the first and after the last they are held flat, as
// Energy holds power at the edges, and a GPU whose readings stop more than
// gap short of either edge has no figures (nor has the level, while any
// GPU that reports reasons has none). GPUs that never report reasons are
// left out of the level's figures.
func clockEvents(le *telemetry.LevelEnergy, samples []Sample, chosen []int, from, to, gap time.Duration) {
	pts := map[int][]maskPoint{}
	for _, s := range samples {
		if s.Has(FieldClockEvents) && selected(chosen, s.GPU) {
			pts[s.GPU] = append(pts[s.GPU], maskPoint{s.T, s.ClockEvents})
		}
	}
	if len(pts) == 0 {
		return
	}
	levelKnown := true
	var all [][]maskPoint
	for i := range le.GPUs {
		p := pts[le.GPUs[i].Index]
		if len(p) == 0 {
			continue
		}
		slices.SortStableFunc(p, func(a, b maskPoint) int { return cmpDuration(a.t, b.t) })
		if !coversMasks(p, from, to, gap) {
			levelKnown = false
			continue
		}
		ge := &le.GPUs[i]
		ge.ClockEventS, ge.ThrottledShare = maskFigures([][]maskPoint{p}, from, to)
		all = append(all, p)
	}
	if levelKnown && len(all) > 0 {
		le.ClockEventS, le.ThrottledShare = maskFigures(all, from, to)
	}
}

// maskFigures steps through [from, to] with every GPU's reasons held from
// one reading to the next, ORs the GPUs' masks in each step, and adds the
// step's length to each reason set and to the throttled time when any
// slowdown bit is.
func maskFigures(gpus [][]maskPoint, from, to time.Duration) (map[string]float64, *float64) {
	edges := []time.Duration{from, to}
	for _, p := range gpus {
		for _, x := range p {
			if x.t > from && x.t < to {
				edges = append(edges, x.t)
			}
		}
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	slow := telemetry.SlowdownMask()
	secs := map[string]float64{}
	var throttled time.Duration
	for i := 1; i < len(edges); i++ {
		a, d := edges[i-1], edges[i]-edges[i-1]
		var m uint64
		for _, p := range gpus {
			m |= maskAt(p, a)
		}
		for _, name := range telemetry.ClockEventNames(m) {
			secs[name] += d.Seconds()
		}
		if m&slow != 0 {
			throttled += d
		}
	}
	share := throttled.Seconds() / (to - from).Seconds()
	return secs, &share
}

// maskAt is the reasons in force at t: the last reading at or before t, or
// the first reading when t is before it.
func maskAt(p []maskPoint, t time.Duration) uint64 {
	i, found := slices.BinarySearchFunc(p, t, func(x maskPoint, t time.Duration) int { return cmpDuration(x.t, t) })
	switch {
	case found:
		// The last of equal times.
		for i+1 < len(p) && p[i+1].t == t {
			i++
		}
		return p[i].m
	case i == 0:
		return p[0].m
	}
	return p[i-1].m
}

func coversMasks(p []maskPoint, from, to, gap time.Duration) bool {
	pw := make([]powerPoint, len(p))
	for i, x := range p {
		pw[i] = powerPoint{t: x.t}
	}
	return covers(pw, from, to, gap)
}

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// clockShares sets each GPU's SMClockShare from its mean SM clock and the
// card's maximum in the inventory, and the level's as their mean.
func clockShares(le *telemetry.LevelEnergy, inventory []telemetry.GPU) {
	maxOf := map[int]float64{}
	for _, g := range inventory {
		if g.SMClockMaxMHz != nil && *g.SMClockMaxMHz > 0 {
			maxOf[g.Index] = *g.SMClockMaxMHz
		}
	}
	var sum float64
	n := 0
	for i := range le.GPUs {
		ge := &le.GPUs[i]
		m, ok := maxOf[ge.Index]
		if !ok || ge.MeanSMClockMHz == nil {
			continue
		}
		v := *ge.MeanSMClockMHz / m
		ge.SMClockShare = &v
		sum += v
		n++
	}
	if n > 0 {
		v := sum / float64(n)
		le.SMClockShare = &v
	}
}
