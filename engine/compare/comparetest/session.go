package comparetest

import (
	"github.com/kovara/desktop/engine/results"
)

func ptr[T any](v T) *T { return &v }

func dist(n int, mean, p50, p95, p99 float64) *results.Dist {
	return &results.Dist{N: n, Mean: mean, Min: p50 / 2, P50: p50, Max: p50 * 3, P95: ptr(p95), P99: ptr(p99)}
}

// BaseRun is a complete hardware record at one concurrency level. Every
// pointer is freshly allocated, so editing one record never touches another.
func BaseRun(c int) results.Run {
	return results.Run{
		RunKind:       results.RunKindHardware,
		Evidence:      results.EvidenceSelfReported,
		ModelID:       "acme/llama-8b",
		ModelRevision: ptr("abc123"),
		Engine:        ptr("vllm"),
		EngineVersion: ptr("0.10.1"),
		Accelerator:   ptr("H100-SXM"),
		GPUCount:      ptr(1),
		Precision:     ptr("bf16"),
		Profile:       ptr("default"),
		InputTokens:   1024,
		OutputTokens:  256,
		Concurrency:   c,
		Requests:      100,
		Warmup:        4,
		Seed:          7,
		Metrics: results.Metrics{
			RequestsOK:        100,
			DurationS:         50,
			RequestThroughput: 2,
			OutputThroughput:  512,
			InputTokensMean:   ptr(1024.0),
			OutputTokensMean:  ptr(256.0),
			TokenCountMethod:  results.TokenCountServerUsage,
			TTFTMs:            dist(100, 210, 200, 300, 400),
			ITLMs:             dist(25500, 20, 19, 30, 40),
			LatencyMs:         dist(100, 8000, 7900, 9000, 9500),
			TPOTMs:            dist(100, 30.5, 30, 35, 38),
		},
		Environment: results.Environment{
			Client:            "kovara-desktop",
			OS:                "linux",
			Machine:           "amd64",
			MaxTokens:         256,
			IgnoreEOS:         true,
			IgnoreEOSHonoured: ptr(true),
			Stream:            true,
			StreamOptions:     true,
			PromptGenerator:   "kovara-synthetic-v1",
			Seed:              7,
			PercentileMethod:  results.PercentileLinear,
			TimeoutS:          120,
		},
	}
}

// Session is a complete results file with one record per level (BaseRun
// at each); each edit is applied to every record.
func Session(levels []int, edits ...func(*results.Run)) *results.File {
	f := &results.File{
		Format:        results.Format,
		FormatVersion: results.FormatVersion,
		Complete:      true,
		CreatedAt:     "2026-01-02T03:04:05Z",
		Manifest:      &results.ManifestRef{Revision: "r0123456789ab", ContentHash: "sha256:00"},
	}
	for _, c := range levels {
		r := BaseRun(c)
		for _, e := range edits {
			e(&r)
		}
		f.Runs = append(f.Runs, r)
	}
	return f
}
