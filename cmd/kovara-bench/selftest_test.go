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
	for _, want := range []string{"TTFT err p50", "merged", "CPU µs/chunk", "syscalls/chunk", "switches/chunk", "allocs/chunk", "This machine "} {
		if !strings.Contains(text, want) {
			t.Errorf("selftest output lacks %q:\n%s", want, text)
		}
	}
	lines := strings.Split(text, "\n")
	rows := 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 16 && (f[0] == "1" || f[0] == "8") && f[2] == "0" {
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

// TestSelftestVerdict: the sentences under the table say up to which level
// this machine measures within 1 ms, and why a level missed when the
// client fell a token behind.
func TestSelftestVerdict(t *testing.T) {
	t.Parallel()
	ok := func(streams int) selftestRow {
		return selftestRow{streams: streams, ttft: [3]float64{0.01, 0.05, 0.1}, itl: [3]float64{0.001, 0.04, 0.2}}
	}
	late := func(streams, merged int) selftestRow {
		r := ok(streams)
		r.ttft[1], r.merged = 12.5, merged
		return r
	}
	tests := []struct {
		name       string
		rows       []selftestRow
		want, lack []string
	}{
		{"all within", []selftestRow{ok(1), ok(64), ok(256)},
			[]string{"within 1 ms (p99) up to at least 256 concurrent streams"},
			[]string{"fell a whole token behind", "run selftest again"}},
		{"256 merged", []selftestRow{ok(1), ok(64), late(256, 37), late(1024, 900)},
			[]string{"up to 64 concurrent streams", "At 256 streams the client fell a whole token behind on 37 chunks",
				"At 1024 streams the client fell a whole token behind on 900 chunks", "run selftest again"},
			nil},
		{"first level missed", []selftestRow{late(1, 0), ok(64)},
			[]string{"does not measure within 1 ms (p99) even at the first level", "run selftest again"},
			[]string{"fell a whole token behind"}},
	}
	for _, tt := range tests {
		var b strings.Builder
		printSelftest(&b, tt.rows)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, b.String())
			}
		}
		for _, w := range tt.lack {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: output should not say %q:\n%s", tt.name, w, b.String())
			}
		}
	}
}

func TestParsePerfCount(t *testing.T) {
	t.Parallel()
	for out, want := range map[string]int64{
		"13697,,raw_syscalls:sys_enter,53657451,100.00,,\n":  13697,
		"\n 42,,raw_syscalls:sys_enter,1,100.00,,":           42,
		"<not counted>,,raw_syscalls:sys_enter,0,100.00,,\n": -1,
		"Error: no permission":                               -1,
	} {
		got, ok := parsePerfCount(out)
		if (want < 0) == ok || (ok && got != want) {
			t.Errorf("parsePerfCount(%q) = %d, %v; want %d", out, got, ok, want)
		}
	}
}
