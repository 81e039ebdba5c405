package compare

import (
	"math"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// FormatDelta writes a cell's change against the first run as a signed
// percentage with one decimal: "+12.3 %", "−4.0 %" (a true minus sign), or
// "0.0 %" when it rounds to nothing. It is "" when the cell has no delta.
func FormatDelta(c Cell) string {
	if !c.HasDelta || math.IsNaN(c.Delta) || math.IsInf(c.Delta, 0) {
		return ""
	}
	return signedPercent(c.Delta) + " %"
}

// FormatInterval writes a judged cell's interval of the change as
// percentages with one decimal, "−15.1 … −8.8 %"; "" when the
// change was not judged against noise. An interval without an end (a run
// too short to bound it) says so: "−99.9 … ∞ %".
func FormatInterval(c Cell) string {
	if c.Noise == NoiseUnknown || math.IsNaN(c.Low) || math.IsNaN(c.High) {
		return ""
	}
	high := "\u221e"
	if !math.IsInf(c.High, 1) {
		high = signedPercent(c.High)
	}
	return signedPercent(c.Low) + " \u2026 " + high + " %"
}

// FormatChange is a cell's change as the table shows it: the delta, and
// after it, for a change beyond noise, its interval in brackets:
// "−12.0 % (−15.1 … −8.8 %)"; for one that cannot be judged, why:
// "+150.9 % (too few samples to judge)", "(too wide to tell)". A
// difference within noise shows its delta alone. "" when the cell has
// no delta.
func FormatChange(c Cell) string {
	d := FormatDelta(c)
	if d == "" {
		return d
	}
	switch c.Noise {
	case BeyondNoise:
		d += " (" + FormatInterval(c) + ")"
	case TooFew, TooWide:
		d += " (" + c.Noise.String() + ")"
	}
	return d
}

// signedPercent writes a relative change as a percentage with one decimal
// and its sign ("+12.3", "−4.0" with a true minus sign, "0.0" when it
// rounds to nothing), without the unit.
func signedPercent(x float64) string {
	pct := math.Round(x*1000) / 10 // percent, one decimal
	s := strconv.FormatFloat(math.Abs(pct), 'f', 1, 64)
	switch {
	case pct > 0:
		return "+" + s
	case pct < 0:
		return "\u2212" + s
	}
	return s
}

// FormatValue writes a metric's value without its unit, with as many
// decimals as the unit deserves: the results file keeps milliseconds and
// rates to 0.001, but a table reads better with three significant figures
// or so, and small values keep more decimals than large ones. Counts are
// whole numbers. A value that is not a number is shown as Absent.
func FormatValue(m Metric, v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Absent
	}
	a := math.Abs(v)
	var decimals int
	switch m.Unit {
	case "":
		decimals = 0
	case "tok":
		decimals = 1
	case "nats":
		// KL divergences span orders of magnitude (1e-6 for Q8_0 on a
		// small model, 0.1 for a bad quantisation): the one rule that
		// says them everywhere.
		return results.NatsText(v)
	case "%":
		if v == 0 {
			return "0"
		}
		decimals = pick(a, 1, 2, 1)
	case "tok/s":
		decimals = pick(a, 10, 2, 1)
	case "tok/J":
		// A small model's or a starved machine's 0.016 tok/J keeps its
		// figures, as a GPU's 4.2 does.
		decimals = pick(a, 1, 3, 2)
	case "req/s":
		decimals = pick(a, 10, 3, 2)
		if a >= 100 {
			decimals = 1
		}
	case "ms":
		decimals = pick(a, 10, 2, 1)
		if a >= 1000 {
			decimals = 0
		}
	default:
		decimals = pick(a, 10, 2, 1)
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-") // no "-0.0"
	}
	return s
}

// pick returns small when a is below limit, else large.
func pick(a, limit float64, small, large int) int {
	if a < limit {
		return small
	}
	return large
}

// Mark is a changed cell's mark: " +" better, " −" worse, "" neither
// (the legend under a comparison table says which is which).
func Mark(better int) string {
	switch better {
	case 1:
		return " +"
	case -1:
		return " −"
	}
	return ""
}
