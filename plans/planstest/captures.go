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

// capturesB4748 is the folder of the documents the plans wrote against a
// real llama-server b4748 (testdata/llamacpp-b4748/README.md says how):
// the plans that have no b9749 capture.
func capturesB4748() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata", "llamacpp-b4748")
}

// capture reads and decodes one captured document, failing the test when
// it cannot.
func capture[T any](t testing.TB, name string, decode func([]byte) (*T, error)) *T {
	t.Helper()
	return captureIn(t, captures(), name, decode)
}

// captureIn is capture from the folder dir.
func captureIn[T any](t testing.TB, dir, name string, decode func([]byte) (*T, error)) *T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
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

// LlamaKovara is the Kovara method a real llama-server b4748 (-np 4)
// ran: 1 and 2 users, 24 requests each, 256-token prompts, 32-token
// answers; calibration stopped at 261 tokens (its one problem).
func LlamaKovara(t testing.TB) *results.File {
	return captureIn(t, capturesB4748(), "kovara.json", results.Decode)
}

// LlamaKovaraWall is a Kovara run on a real llama-server b4748 with a
// wall plug (a stand-in Shelly Gen2 whose power follows the server's
// CPU): 1 and 2 users, 8 requests each, read idle at 40 W first.
func LlamaKovaraWall(t testing.TB) *results.File {
	return captureIn(t, capturesB4748(), "kovara-wall.json", results.Decode)
}

// LlamaStages is a quick three-stage run (4 users) on llama-server b4748,
// whose 2,048-token slots cut the cold prefill to 1,878 tokens.
func LlamaStages(t testing.TB) *results.StagesResult {
	return captureIn(t, capturesB4748(), "stages.json", results.StagesDoc.Decode)
}

// LlamaSpecDec is the speculative-decoding plan on llama-server b4748
// drafting with tiny2.gguf (-md): b4748 reports no drafting counters,
// in /metrics or in the answers, so acceptance is missing.
func LlamaSpecDec(t testing.TB) *results.SpecDecResult {
	return captureIn(t, capturesB4748(), "specdec.json", results.SpecDecDoc.Decode)
}

// LlamaRate is the rate plan at 1 and 2 requests a second on llama-server
// b4748 (20 requests each, goodput against TPOT ≤ 5 ms, kept up at
// neither).
func LlamaRate(t testing.TB) *results.RateResult {
	return captureIn(t, capturesB4748(), "rate.json", results.RateDoc.Decode)
}

// LlamaTune is the settings comparison of llama-server b4748 started by
// the app with -np 1 and -np 4, 3 rounds at 1 and 4 users: no difference
// beyond noise, the answers the same.
func LlamaTune(t testing.TB) *results.TuneResult {
	return captureIn(t, capturesB4748(), "tune.json", results.TuneDoc.Decode)
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
