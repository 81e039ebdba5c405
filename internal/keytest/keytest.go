// Package keytest finds an API key, or any part of it, where the app and
// the CLI must never put it: in the files they write and the text they
// show or print.
package keytest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fragments are key's 10-character windows past its public "sk-" prefix.
// A test key is long and random-looking, so any one of them in a text is
// a leak, not a coincidence.
func Fragments(key string) []string {
	var out []string
	for i := 3; i+10 <= len(key); i++ {
		out = append(out, key[i:i+10])
	}
	return out
}

// Find says where any fragment of key stands in text (quoted with what
// surrounds it), or "" when none does.
func Find(text, key string) string {
	for _, f := range Fragments(key) {
		if i := strings.Index(text, f); i >= 0 {
			return fmt.Sprintf("%q", text[max(0, i-30):min(len(text), i+40)])
		}
	}
	return ""
}

// ScanTree fails the test for every file under root holding key or any
// part of it, and returns how many files it read, so a caller can tell a
// scan of the app's folders from a scan of an empty one.
func ScanTree(t testing.TB, root, key string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n++
		if data, err := os.ReadFile(path); err == nil {
			if where := Find(string(data), key); where != "" {
				t.Errorf("%s holds the API key (or part of it): %s", path, where)
			}
		}
		return nil
	})
	return n
}
