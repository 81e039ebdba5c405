package sim

import (
	"bufio"
	"fmt"
	"io"
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

// ReadServingURL reads the first line a process serving the simulator
// printed (its ServingLine) and returns the base URL in it; out is left
// just past that line's buffer, so a caller that keeps the process should
// go on draining out.
func ReadServingURL(out io.Reader) (string, error) {
	line, err := bufio.NewReader(out).ReadString('\n')
	if url, ok := URLFromServingLine(line); ok {
		return url, nil
	}
	if err != nil {
		return "", fmt.Errorf("the simulator process said %q: %w", line, err)
	}
	return "", fmt.Errorf("the simulator process said %q, with no address", line)
}
