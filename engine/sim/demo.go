package sim

import (
	"time"
)

// Demo is the simulator behind the demo and the app's "Built-in simulator"
// endpoint: vLLM-like, paced like an 8B model in FP8 on one data-centre
// GPU — 4 ms a token for one user (250 tok/s), slowing a little as the
// batch grows so the throughput curve has a realistic shape. The default
// plan (1, 8, 32 × 100 requests of 256 tokens) takes about two minutes,
// most of it the one-user level, as it would on such a server. At 1 ms a token
// the simulator out-ran what a two-core machine can read beside it: the
// first result a newcomer saw had ITL p50 0.0 ms at 32 streams (chunks
// read together) and a TTFT p95 at 8 users above the one at 32.
func Demo() Config {
	return Config{
		Personality:   VLLM,
		Models:        []string{"kovara-sim-8b"},
		PrefillRate:   40000,
		TokenInterval: 4 * time.Millisecond,
		BatchSlowdown: 0.012,
		BatchCapacity: 64,
		Jitter:        0.1,
		Seed:          7,
	}
}

// TuneDemo is the simulator behind the settings comparison's demo: two
// quantisations of one model, the larger decoding a fifth slower, so the
// comparison finds a difference beyond noise and their answers differ,
// read token by token through the chat route by a small drift.
func TuneDemo() Config {
	c := Demo()
	c.Models = []string{"kovara-sim-8b-q4", "kovara-sim-8b-q8"}
	c.ModelSlowdown = map[string]float64{"kovara-sim-8b-q8": 1.2}
	c.Answers = Distribution{ModelDrift: map[string]float64{"kovara-sim-8b-q8": 0.15}, DriftSeed: 4}
	return c
}

// CapacityDemo is the simulator behind `kovara-bench demo --plan capacity`:
// twelve slots with the rest queued, and decoding slowing as the batch
// grows, so the capacity plan's defaults (per-user ≥ 20 tok/s, TTFT p95 ≤
// 2 s, 1,024-token prompts, 256-token answers) find 12 users in about a
// minute: a thirteenth waits for a whole answer (over 2 s) before its
// first token.
func CapacityDemo() Config {
	return Config{
		Personality:   VLLM,
		Models:        []string{"kovara-sim-8b"},
		PrefillRate:   40000,
		TokenInterval: 2 * time.Millisecond,
		BatchSlowdown: 0.3,
		BatchCapacity: 12,
		Seed:          7,
	}
}

// AnswersDemo is the simulator behind the answers comparison's demo: a
// llama.cpp server of two models, the second a "quantisation" whose
// logits drift (KL 0.014 nats a token: between what Q6_K and Q4_K_M
// cost Llama 3 8B), so the demo measures a drift beyond the floor of the
// size a person meets.
func AnswersDemo() Config {
	c := Demo()
	c.Personality = LlamaCpp
	c.Models = []string{"kovara-sim-8b-f16", "kovara-sim-8b-q4"}
	c.Answers = Distribution{ModelDrift: map[string]float64{"kovara-sim-8b-q4": 0.35}, DriftSeed: 4}
	return c
}
