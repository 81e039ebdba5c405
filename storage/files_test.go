package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.json"), filepath.Join(dir, "big.json")
	if err := os.WriteFile(small, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, want string
	}{
		{"fits", small, ""},
		{"too big", big, "big.json is larger than 2 MiB, far bigger than a results file"},
		{"missing", filepath.Join(dir, "nope.json"), "does not exist"},
		{"a folder", dir, "is a folder; choose a results file inside it"},
	}
	for _, tc := range cases {
		data, err := ReadBounded(tc.path, 2<<20, "a results file")
		if tc.want == "" {
			if err != nil || string(data) != `{"a":1}` {
				t.Errorf("%s: %q, %v", tc.name, data, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to say %q", tc.name, err, tc.want)
		}
	}
	var tb *TooBigError
	if _, err := ReadBounded(big, 2<<20, "a results file"); !errors.As(err, &tb) || tb.Limit != 2<<20 {
		t.Errorf("too big: %v is not a *TooBigError", err)
	}
}
