package sim

import "time"

// RateDemo is the simulator behind the rate plan's demo: four slots with
// the rest queued (as llama-server -np 4), decoding slowing as the batch
// grows, fast enough that a sweep of 128-token answers finds the highest
// rate it keeps up with, a little over 20 requests a second, in under a
// minute, and shows the queue growing past it.
func RateDemo() Config {
	return Config{
		Personality:   VLLM,
		Models:        []string{"kovara-sim-8b"},
		PrefillRate:   40000,
		TokenInterval: time.Millisecond,
		BatchSlowdown: 0.1,
		BatchCapacity: 4,
		Seed:          7,
	}
}
