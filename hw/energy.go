package hw

import (
	"slices"
	"sort"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// defaultGap is the gap limit when the samples do not show an interval.
const defaultGap = 5 * time.Second

type powerPoint struct {
	t time.Duration
	w float64
}

// Energy works out one level's window [from, to] (offsets as in Sample.T)
// for the GPUs listed (nil: every GPU in samples).
//
// The arithmetic, exactly:
//
//   - Each GPU's power is a piecewise-linear curve through its power
//     readings; a missing reading ([N/A], a line lost) is skipped, so the
//     curve bridges it linearly. Before its first and after its last reading
//     the curve is held flat at that reading.
//   - The window's total power is the sum of the GPUs' curves. Energy is the
//     trapezoidal integral of the total, evaluated at both window edges
//     (interpolated) and at every tick inside. Because the curves are
//     piecewise linear with corners only at ticks, this is exact for them.
//   - Mean power is energy divided by the window's length. Peak power is the
//     highest total at a tick inside the window (at the edges if none is).
//   - The gap limit is five sampling intervals (five times the median tick
//     spacing; 5 s when that cannot be told). Energy, mean and peak are
//     left nil when any chosen GPU has no power reading within the gap
//     limit of either window edge — a sampler that died mid-level would
//     otherwise be held flat to the end. Gaps inside the window are bridged
//     linearly; MaxGapS reports the longest unread stretch.
//   - Utilisation, SM clock, link, temperature and memory figures use only
//     the readings inside the window; utilisation and the SM clock are
//     their plain mean.
//   - Clock event (throttle) reasons are a step function: each reading's
//     reasons hold until that GPU's next reading, held flat at the edges
//     like power, under the same gap limit (see clockEvents).
func Energy(samples []Sample, from, to time.Duration, gpus []int) telemetry.LevelEnergy {
	le := telemetry.LevelEnergy{DurationS: (to - from).Seconds()}
	if to <= from {
		le.DurationS = 0
		return le
	}
	var chosen []int
	if gpus != nil {
		chosen = slices.Clone(gpus)
		slices.Sort(chosen)
		chosen = slices.Compact(chosen)
	} else {
		for _, s := range samples {
			chosen = append(chosen, s.GPU)
		}
		slices.Sort(chosen)
		chosen = slices.Compact(chosen)
	}
	if len(chosen) == 0 {
		return le
	}

	power := map[int][]powerPoint{}
	var ticks []time.Duration
	for _, s := range samples {
		if !selected(chosen, s.GPU) {
			continue
		}
		ticks = append(ticks, s.T)
		if s.Has(FieldPower) {
			power[s.GPU] = append(power[s.GPU], powerPoint{s.T, s.PowerW})
		}
	}
	slices.Sort(ticks)
	ticks = slices.Compact(ticks)
	for _, pts := range power {
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].t < pts[j].t })
	}
	gap := gapLimit(ticks)

	// Evaluation points: both edges and every tick strictly inside.
	at := []time.Duration{from}
	inside := 0
	for _, t := range ticks {
		if t > from && t < to {
			at = append(at, t)
		}
		if t >= from && t <= to {
			inside++
		}
	}
	at = append(at, to)
	le.Samples = inside

	// Per-GPU curves and figures.
	known := true
	totals := make([]float64, len(at))
	for _, g := range chosen {
		ge := telemetry.GPUEnergy{Index: g}
		pts := power[g]
		usable := covers(pts, from, to, gap)
		le.MaxGapS = max(le.MaxGapS, longestGap(pts, from, to).Seconds())
		if usable {
			var e float64
			prev := curve(pts, at[0])
			totals[0] += prev
			for i := 1; i < len(at); i++ {
				v := curve(pts, at[i])
				totals[i] += v
				e += (prev + v) / 2 * (at[i] - at[i-1]).Seconds()
				prev = v
			}
			mean := e / le.DurationS
			ge.EnergyJ, ge.MeanPowerW = &e, &mean
		} else {
			known = false
		}
		fillInside(&ge, samples, g, from, to)
		if ge.PeakTempC != nil && (le.PeakTempC == nil || *ge.PeakTempC > *le.PeakTempC) {
			v := *ge.PeakTempC
			le.PeakTempC = &v
		}
		le.GPUs = append(le.GPUs, ge)
	}
	clockEvents(&le, samples, chosen, from, to, gap)
	if known {
		var e float64
		for i := 1; i < len(at); i++ {
			e += (totals[i-1] + totals[i]) / 2 * (at[i] - at[i-1]).Seconds()
		}
		mean := e / le.DurationS
		peak := max(totals[0], totals[len(totals)-1])
		if len(at) > 2 {
			peak = slices.Max(totals[1 : len(totals)-1])
		}
		le.EnergyJ, le.MeanPowerW, le.PeakPowerW = &e, &mean, &peak
	}
	var utilSum float64
	var utilN int
	for _, ge := range le.GPUs {
		if ge.MeanUtilPct != nil {
			utilSum += *ge.MeanUtilPct
			utilN++
		}
	}
	if utilN > 0 {
		u := utilSum / float64(utilN)
		le.MeanUtilPct = &u
	}
	return le
}

// gapLimit is hangIntervals times the median spacing of ticks.
func gapLimit(ticks []time.Duration) time.Duration {
	if len(ticks) < 2 {
		return defaultGap
	}
	d := make([]time.Duration, 0, len(ticks)-1)
	for i := 1; i < len(ticks); i++ {
		d = append(d, ticks[i]-ticks[i-1])
	}
	slices.Sort(d)
	med := d[len(d)/2]
	if med <= 0 {
		return defaultGap
	}
	return hangIntervals * med
}

// curve is the GPU's power at t: linear between readings, flat outside.
func curve(pts []powerPoint, t time.Duration) float64 {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].t >= t })
	switch {
	case i == 0:
		return pts[0].w
	case i == len(pts):
		return pts[len(pts)-1].w
	case pts[i].t == t:
		return pts[i].w
	}
	a, b := pts[i-1], pts[i]
	f := float64(t-a.t) / float64(b.t-a.t)
	return a.w + f*(b.w-a.w)
}

// covers reports whether the readings reach both ends of the window: one
// no further than gap from each edge. Gaps in the middle are bridged.
func covers(pts []powerPoint, from, to, gap time.Duration) bool {
	var firstNear, lastNear time.Duration
	found := false
	for _, p := range pts {
		if p.t < from-gap || p.t > to+gap {
			continue
		}
		if !found {
			firstNear, found = p.t, true
		}
		lastNear = p.t
	}
	return found && firstNear <= from+gap && lastNear >= to-gap
}

// longestGap is the longest part of [from, to] with no reading in it.
func longestGap(pts []powerPoint, from, to time.Duration) time.Duration {
	last := from
	var worst time.Duration
	for _, p := range pts {
		if p.t < from || p.t > to {
			continue
		}
		worst = max(worst, p.t-last)
		last = p.t
	}
	return max(worst, to-last)
}

// fillInside sets the figures that only use readings inside the window.
func fillInside(ge *telemetry.GPUEnergy, samples []Sample, gpu int, from, to time.Duration) {
	var util, clock float64
	var nUtil, nClock int
	var peakW, temp, mem float64
	var gen, width int
	var hasW, hasT, hasM, hasG, hasWd bool
	for _, s := range samples {
		if s.GPU != gpu || s.T < from || s.T > to {
			continue
		}
		if s.Has(FieldUtil) {
			util += s.UtilPct
			nUtil++
		}
		if s.Has(FieldSMClock) {
			clock += s.SMClockMHz
			nClock++
		}
		if s.Has(FieldPower) && (!hasW || s.PowerW > peakW) {
			peakW, hasW = s.PowerW, true
		}
		if s.Has(FieldTemp) && (!hasT || s.TempC > temp) {
			temp, hasT = s.TempC, true
		}
		if s.Has(FieldMemUsed) && (!hasM || s.MemUsedMiB > mem) {
			mem, hasM = s.MemUsedMiB, true
		}
		if s.Has(FieldPCIeGen) && (!hasG || s.PCIeGen > gen) {
			gen, hasG = s.PCIeGen, true
		}
		if s.Has(FieldPCIeWidth) && (!hasWd || s.PCIeWidth > width) {
			width, hasWd = s.PCIeWidth, true
		}
	}
	if nUtil > 0 {
		u := util / float64(nUtil)
		ge.MeanUtilPct = &u
	}
	if nClock > 0 {
		c := clock / float64(nClock)
		ge.MeanSMClockMHz = &c
	}
	if hasW {
		ge.PeakPowerW = &peakW
	}
	if hasT {
		ge.PeakTempC = &temp
	}
	if hasM {
		ge.PeakMemMiB = &mem
	}
	if hasG {
		ge.PCIeGenPeak = &gen
	}
	if hasWd {
		ge.PCIeWidthPeak = &width
	}
}
