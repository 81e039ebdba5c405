//go:build unix

// Package hwtest holds the stand-in GPU tools the tests of the packages
// above hw run plans against (hw's own tests use their own fakes).
package hwtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// StandInSMI puts a stand-in nvidia-smi first on the PATH for the rest of
// the test: two RTX 3090s (hw/testdata's captured inventory), each drawing
// watts at Gen4 x16 whenever sampled. The test cannot run in parallel
// (t.Setenv).
func StandInSMI(t testing.TB, watts float64) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	inv := filepath.Join(filepath.Dir(here), "..", "testdata", "smi_inventory_2x3090.csv")
	if _, err := os.Stat(inv); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	line := fmt.Sprintf("%%d, %.2f, 90, 20000, 1800, 60, 4, 16\\n", watts)
	script := `#!/bin/sh
case "$*" in
*-lms*) while :; do printf '` + fmt.Sprintf(line, 0) + fmt.Sprintf(line, 1) + `'; sleep 0.2; done ;;
*--query-gpu=index*) cat "` + inv + `" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
