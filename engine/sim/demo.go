package sim

import "time"

// Demo is the simulator behind the demo and the app's "Built-in simulator"
// endpoint: vLLM-like, fast enough that the default plan (1, 8, 32 × 100
// requests of 256 tokens) finishes in well under a minute, and slowing a
// little as the batch grows so the throughput curve has a realistic shape.
func Demo() Config {
	return Config{
		Personality:   VLLM,
		Models:        []string{"kovara-sim-8b"},
		PrefillRate:   40000,
		TokenInterval: time.Millisecond,
		BatchSlowdown: 0.012,
		BatchCapacity: 64,
		Jitter:        0.1,
		Seed:          7,
	}
}
