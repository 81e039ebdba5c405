package chart

import (
	"math"

	"github.com/kovara/desktop/engine/results"
)

// HardwareOverLevels is what the cards did in each measured window
// (issue #50): a bar per slowdown reason for the share of the window it
// was active, and the SM clock against its maximum as a line, both in %
// of the window, one group per window named by its label. ok is false
// when the run's source reported neither a slowdown nor clocks.
func HardwareOverLevels(p results.Powered, pal Palette) (Spec, bool) {
	heading, keys := p.EnergyKeys()
	tel, _ := p.Power()
	if tel == nil {
		return Spec{}, false
	}
	labels, reasons, shares := results.SlowdownShares(p)
	spec := Spec{Title: "What the cards did", XLabel: lowerFirst(heading), YLabel: "% of the window",
		YFromZero: true, YAtLeast: 100, Palette: pal, XPad: 0.6}
	x := make([]float64, len(labels))
	for i := range x {
		x[i] = float64(i + 1)
	}
	spec.XTicks, spec.XTickLabels = x, labels
	for i, r := range reasons {
		y := make([]float64, len(x))
		for j, v := range shares[i] {
			y[j] = v * 100
		}
		spec.Series = append(spec.Series, Series{Name: "slowed for " + r.Short, X: x, Y: y, Kind: Bars, Color: 1 + i})
	}
	clock := make([]float64, 0, len(x))
	seen := false
	for _, k := range keys {
		lt, ok := tel.Levels[k.Key]
		if !ok {
			continue
		}
		v := math.NaN()
		if lt.SMClockShare != nil {
			v, seen = *lt.SMClockShare*100, true
		}
		clock = append(clock, v)
	}
	if seen {
		spec.Series = append(spec.Series, Series{Name: "clock, % of its maximum", X: x, Y: clock, Kind: Line, Color: 0})
	}
	if len(spec.Series) == 0 {
		return Spec{}, false
	}
	return spec, true
}
