// Package clip shortens text for one line of a screen, a log or a results
// file: by characters, never through the middle of one, with an ellipsis
// that says something was cut.
package clip

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s when it has at most n characters, else its first n−1
// characters and "…" (n characters in all). n < 1 gives "".
func Text(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, kept := 0, 0
	for kept < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		kept++
	}
	return s[:i] + "…"
}

// Line is Text of s made one line: runs of white space become one space,
// control characters go, and the ends are trimmed.
func Line(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	return Text(strings.Join(strings.Fields(s), " "), n)
}
