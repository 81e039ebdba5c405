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
	"time"
)

// StandInSMI puts a stand-in nvidia-smi first on the PATH for the rest of
// the test: two RTX 3090s (hw/testdata's captured inventory), each drawing
// watts at Gen4 x16 and 1800 MHz of its 2100 MHz SM clock whenever
// sampled, no clock event reason active. The test cannot run in parallel
// (t.Setenv).
func StandInSMI(t testing.TB, watts float64) {
	t.Helper()
	StandInSMIThrottled(t, watts, 0, 0)
}

// StandInSMIThrottled is StandInSMI whose cards report the clock event
// reasons mask (nvidia-smi's clocks_event_reasons.active, 0x4 its power
// cap: results.ClockEventReasons) from after the sampler started on; 0
// reasons: none ever. The stand-in prints a tick every 0.2 s and counts
// them, so after is rounded to its ticks.
func StandInSMIThrottled(t testing.TB, watts float64, after time.Duration, reasons uint64) {
	t.Helper()
	standIn(t, watts, after, reasons, "")
}

// serverPrograms is what the stand-ins list as the programs on their
// cards (nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,
// used_memory, nounits): one server across both cards, as llama-server
// splitting a model over two GPUs shows — no other program, so no
// finding.
const serverPrograms = `00000000:01:00.0, 4242, /app/llama-server, 20000\n00000000:08:00.0, 4242, /app/llama-server, 20000\n`

// StandInSMIOtherProgram is StandInSMI with another program beside the
// server on GPU 0: name holding mib MiB (6200 of the 3090s' 24576 is a
// problem of the run, results.OtherProgramsProblemShare; 300 a note).
func StandInSMIOtherProgram(t testing.TB, watts float64, name string, mib float64) {
	t.Helper()
	standIn(t, watts, 0, 0, fmt.Sprintf("00000000:01:00.0, 977, %s, %.0f\\n", name, mib))
}

func standIn(t testing.TB, watts float64, after time.Duration, reasons uint64, extra string) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	inv := filepath.Join(filepath.Dir(here), "..", "testdata", "smi_inventory_2x3090.csv")
	if _, err := os.Stat(inv); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	line := fmt.Sprintf("%%d, %.2f, 90, 20000, 1800, 60, 4, 16, $m\\n", watts)
	programs := serverPrograms
	if extra != "" {
		programs += extra
	}
	ticks := int(after / (200 * time.Millisecond))
	script := `#!/bin/sh
case "$*" in
*-lms*) i=0; while :; do
  m=0x0000000000000000
  if [ ` + fmt.Sprint(reasons) + ` -ne 0 ] && [ $i -ge ` + fmt.Sprint(ticks) + ` ]; then m=` + fmt.Sprintf("0x%016X", reasons) + `; fi
  printf "` + fmt.Sprintf(line, 0) + fmt.Sprintf(line, 1) + `"; i=$((i+1)); sleep 0.2
done ;;
*--query-gpu=index,clocks.max.sm*) printf '0, 2100, 0x0000000000000001\n1, 2100, 0x0000000000000001\n' ;;
*--query-compute-apps=*) printf '` + programs + `' ;;
*--query-gpu=index*) cat "` + inv + `" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// StandInSMIReasonsFrom is StandInSMI whose cards report, at each tick,
// the clock event reasons mask written in file ("0x0000000000000004" its
// power cap; none while the file is missing): a test changes what the
// cards do between runs by writing it.
func StandInSMIReasonsFrom(t testing.TB, watts float64, file string) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	inv := filepath.Join(filepath.Dir(here), "..", "testdata", "smi_inventory_2x3090.csv")
	if _, err := os.Stat(inv); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	line := fmt.Sprintf("%%d, %.2f, 90, 20000, 1800, 60, 4, 16, $m\\n", watts)
	programs := serverPrograms
	script := `#!/bin/sh
case "$*" in
*-lms*) while :; do
  m=$(cat "` + file + `" 2>/dev/null); [ -n "$m" ] || m=0x0000000000000000
  printf "` + fmt.Sprintf(line, 0) + fmt.Sprintf(line, 1) + `"; sleep 0.2
done ;;
*--query-gpu=index,clocks.max.sm*) printf '0, 2100, 0x0000000000000001\n1, 2100, 0x0000000000000001\n' ;;
*--query-compute-apps=*) printf '` + programs + `' ;;
*--query-gpu=index*) cat "` + inv + `" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
