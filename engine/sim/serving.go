package sim

import (
	"fmt"
	"strings"
)

// ServingLine is the line a process serving the simulator prints first,
// so whoever started it (the selftest, tests) can find its address with
// URLFromServingLine.
func ServingLine(p Personality, model, url string) string {
	return fmt.Sprintf("simulator (%s) serving %q at %s — Ctrl-C to stop\n", p, model, url)
}

// URLFromServingLine returns the base URL in a ServingLine.
func URLFromServingLine(line string) (string, bool) {
	i := strings.Index(line, "http://")
	if i < 0 {
		return "", false
	}
	f := strings.Fields(line[i:])
	return f[0], true
}
