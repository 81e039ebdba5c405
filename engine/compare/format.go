package compare

import (
	"math"
	"strconv"
	"strings"
)

// FormatDelta writes a cell's change against the first run as a signed
// percentage with one decimal: "+12.3 %", "−4.0 %" (a true minus sign), or
// "0.0 %" when it rounds to nothing. It is "" when the cell has no delta.
func FormatDelta(c Cell) string {
	if !c.HasDelta || math.IsNaN(c.Delta) || math.IsInf(c.Delta, 0) {
		return ""
	}
	pct := math.Round(c.Delta*1000) / 10 // percent, one decimal
	s := strconv.FormatFloat(math.Abs(pct), 'f', 1, 64)
	switch {
	case pct > 0:
		return "+" + s + " %"
	case pct < 0:
		return "\u2212" + s + " %"
	}
	return s + " %"
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
	case "%":
		if v == 0 {
			return "0"
		}
		decimals = pick(a, 1, 2, 1)
	case "tok/s":
		decimals = pick(a, 10, 2, 1)
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
