package planstest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// captures is the folder of what a real llama-server (b9749) answered
// (engine/testdata), found from this file so every package's tests read
// the same documents wherever they run from.
func captures() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "engine", "testdata", "llamacpp-b9749")
}

// capture reads and decodes one captured document, failing the test when
// it cannot.
func capture[T any](t testing.TB, name string, decode func([]byte) (*T, error)) *T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(captures(), name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := decode(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// LlamaCapacity is the capacity search a real llama-server (-np 8) ran
// (docs/plans.md): 8 users, 9 missing on TTFT p95 on both probes.
func LlamaCapacity(t testing.TB) *results.CapacityResult {
	return capture(t, "capacity.json", results.CapacityDoc.Decode)
}

// LlamaContext is the context plan a real llama-server ran.
func LlamaContext(t testing.TB) *results.ContextResult {
	return capture(t, "context.json", results.ContextDoc.Decode)
}

// DisturbedCapacity is a capacity search that was disturbed (issue 23):
// the first probe at 3 users missed TTFT p95 at 26 tok/s per user while
// its repeat met the service level at 124, and total output fell 95 %
// from 2 to 4 users.
func DisturbedCapacity() *results.CapacityResult {
	knee := 2
	return &results.CapacityResult{
		PlanHeader: results.PlanHeader{Format: results.FormatCapacity, FormatVersion: 1, Complete: true, Model: "tiny-model"},
		Settings:   results.CapacitySettings{UserTPS: 20, TTFTP95Ms: 2000, InputTokens: 1024, OutputTokens: 256, MaxConcurrency: 256},
		Probes: []results.CapacityProbe{
			{Concurrency: 1, Requests: 20, Step: results.StepDouble, Met: true, UserTPSP50: ptr(300.0), UserTPSP5: ptr(280.0), TTFTP95Ms: ptr(150.0), OutputTPS: 290},
			{Concurrency: 2, Requests: 20, Step: results.StepDouble, Met: true, UserTPSP50: ptr(250.0), UserTPSP5: ptr(230.0), TTFTP95Ms: ptr(300.0), OutputTPS: 480},
			{Concurrency: 4, Requests: 20, Step: results.StepDouble, Missed: []string{results.LimitTTFT, results.LimitUserTPS}, UserTPSP50: ptr(6.0), UserTPSP5: ptr(3.0), TTFTP95Ms: ptr(9000.0), OutputTPS: 24},
			{Concurrency: 3, Requests: 20, Step: results.StepBisect, Missed: []string{results.LimitTTFT}, UserTPSP50: ptr(26.0), UserTPSP5: ptr(21.0), TTFTP95Ms: ptr(3200.0), OutputTPS: 70},
			{Concurrency: 2, Requests: 20, Step: results.StepRepeat, Met: true, UserTPSP50: ptr(248.0), UserTPSP5: ptr(228.0), TTFTP95Ms: ptr(310.0), OutputTPS: 470},
			{Concurrency: 3, Requests: 20, Step: results.StepRepeat, Met: true, UserTPSP50: ptr(124.0), UserTPSP5: ptr(110.0), TTFTP95Ms: ptr(491.0), OutputTPS: 350},
		},
		Answer: results.CapacityAnswer{Capacity: 2, Held: 2, Missed: 3, MissedAt: 3, MissedOn: []string{results.LimitTTFT}, Uncertain: true, RangeHigh: 3, Knee: &knee},
	}
}
