package engine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Parsers for the plan fields people type, shared by the CLI's flags and
// the app's form so both accept and refuse the same things, in the same
// words.

// ParseLevels reads a comma-separated list of concurrency levels, like
// "1, 8, 32".
func ParseLevels(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", part)
		}
		if n < 1 {
			return nil, fmt.Errorf("concurrency %d is not allowed: each level needs at least 1 request in flight", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("give at least one concurrency level, like 1,8,32")
	}
	return out, nil
}

// FormatLevels writes levels the way ParseLevels reads them.
func FormatLevels(levels []int) string {
	s := make([]string, len(levels))
	for i, l := range levels {
		s[i] = strconv.Itoa(l)
	}
	return strings.Join(s, ",")
}

// ParseCount reads a whole number of at least min, naming the field in the
// error.
func ParseCount(field, s string, min int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a whole number", field, strings.TrimSpace(s))
	}
	if n < min {
		return 0, fmt.Errorf("%s must be at least %d", field, min)
	}
	return n, nil
}

// ParseSeed reads the prompt generator's seed (any 64-bit integer). An
// empty text asks for a fresh seed each run: fixed is false.
func ParseSeed(s string) (seed int64, fixed bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("seed: %q is not a whole number (leave it empty for a new seed each run)", s)
	}
	return n, true, nil
}

// ParseTimeout reads seconds ("120", "0.5") or a duration ("90s", "2m").
func ParseTimeout(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v <= 0 {
			return 0, fmt.Errorf("timeout %s: it must be more than 0 seconds", s)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q: give seconds, like 120, or a duration, like 90s", s)
	}
	return d, nil
}

// ParseSilence reads how long a run lets its requests go without a byte
// from the server before asking whether it is still there (seconds, or
// a duration like 30s): 0 says the silence but never ends the run.
func ParseSilence(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if v, ferr := strconv.ParseFloat(s, 64); ferr == nil {
		d, err = time.Duration(v*float64(time.Second)), nil
	}
	switch {
	case err != nil || d < 0:
		return 0, fmt.Errorf("silence %q: give seconds, like 10, or a duration, like 30s; 0 never ends the run", s)
	case d == 0:
		return -DefaultSilence, nil
	case d < time.Second:
		return 0, fmt.Errorf("silence %s: at least 1 second, or 0 to never end the run", s)
	}
	return d, nil
}

// ParsePositive reads a number above 0 ("20", "2.5"), naming the field in
// the error.
func ParsePositive(field, s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s: %q is not a number", field, s)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%s must be more than 0", field)
	}
	return v, nil
}
