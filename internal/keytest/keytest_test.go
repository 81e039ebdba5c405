package keytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const key = "sk-test-0a1b2c3d4e5f60718293a4b5c6d7e8f9"

func TestFind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		found      bool
	}{
		{"whole key", "Authorization: Bearer " + key, true},
		{"cut after 13 of its characters", "invalid api key " + key[:13] + "…", true},
		{"its last 10 characters", "…" + key[len(key)-10:], true},
		{"the public prefix alone", "keys look like sk-test-", false},
		{"9 characters in a row", "x" + key[5:14] + "x", false},
		{"nothing", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Find(tc.text, key); (got != "") != tc.found {
				t.Errorf("Find(%q) = %q, want found %v", tc.text, got, tc.found)
			}
		})
	}
}

// recorder is a testing.TB that keeps what a scan reported.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, format)
}

func TestScanTree(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"data/index.json":        `{"runs":[]}`,
		"data/runs/a.json":       `{"error":"invalid api key ` + key[:20] + `"}`,
		"config/endpoints.json":  `{"name":"lab"}`,
		"config/deep/notes.json": "fine",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := &recorder{TB: t}
	if n := ScanTree(r, root, key); n != len(files) {
		t.Errorf("read %d files, want %d", n, len(files))
	}
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "holds the API key") {
		t.Errorf("reported %q, want the one file holding part of the key", r.errors)
	}
}
