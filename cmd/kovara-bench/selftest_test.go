package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSelftestReports runs a small selftest with the built binary (it
// serves the simulator from itself in a child process).
func TestSelftestReports(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := buildBinary(t)
	out, err := exec.Command(bin, "selftest", "--levels", "1,8", "--tokens", "6", "--interval", "10ms").CombinedOutput()
	if err != nil {
		t.Fatalf("selftest: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"TTFT err p50", "merged", "allocs/chunk", "This machine "} {
		if !strings.Contains(text, want) {
			t.Errorf("selftest output lacks %q:\n%s", want, text)
		}
	}
	lines := strings.Split(text, "\n")
	rows := 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 13 && (f[0] == "1" || f[0] == "8") && f[2] == "0" {
			rows++
		}
	}
	if rows != 2 {
		t.Errorf("want two level rows with no failed requests:\n%s", text)
	}
	if _, err := exec.LookPath("nice"); err == nil && !strings.Contains(text, "the simulator runs at nice 10") {
		t.Errorf("the simulator was not niced:\n%s", text)
	}
}
