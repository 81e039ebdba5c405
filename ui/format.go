package ui

import "strconv"

// trimFloat writes v without trailing zeros ("120", "0.5").
func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
