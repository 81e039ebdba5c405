package sim

import "time"

// RateDemo is the simulator behind the rate plan's demo: four slots with
// the rest queued (as llama-server -np 4), decoding slowing as the batch
// grows, fast enough that a sweep of 128-token answers finds the highest
// rate it keeps up with, a little over 20 requests a second, in under a
// minute, and shows the queue growing past it. Its prompt cache is on,
// as vLLM's automatic prefix caching is by default, and counted only in
// its /metrics, as vLLM's is unless --enable-prompt-tokens-details: a
// demo with a shared prefix or conversations shows what the cache saves.
// Prefill is slow enough for a cold 2,000-token prefix to show.
func RateDemo() Config {
	on := true
	return Config{
		Personality:   VLLM,
		Models:        []string{"kovara-sim-8b"},
		PromptCache:   &on,
		PrefillRate:   10000,
		TokenInterval: time.Millisecond,
		BatchSlowdown: 0.1,
		BatchCapacity: 4,
		Seed:          7,
	}
}
