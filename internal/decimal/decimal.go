// Package decimal writes numbers the way people type them back.
package decimal

import (
	"math"
	"strconv"
	"strings"
)

// Short writes x as a plain decimal to four significant digits, never
// dropping a whole digit and never in exponent form: "20000", "2.5",
// "0.01", "3.333". Rates are written so (results.RateNumber for a
// reader, setup.FormatRate for a field that is read back).
func Short(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	prec := max(0, 3-int(math.Floor(math.Log10(math.Abs(x)))))
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
