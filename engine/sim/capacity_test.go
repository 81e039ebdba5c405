package sim

import (
	"testing"
	"time"
)

func TestCapacityModel(t *testing.T) {
	t.Parallel()
	sl := ServiceLevel{UserTPS: 20, TTFTP95: 2 * time.Second, PromptWords: 1024, OutputTokens: 256, MaxConcurrency: 256}
	tests := []struct {
		name string
		cfg  Config
		sl   ServiceLevel
		want int
	}{
		{"the capacity demo: its twelve slots", CapacityDemo(), sl, 12},
		{"decode rate bound", Config{TokenInterval: 4 * time.Millisecond, BatchSlowdown: 0.5, BatchCapacity: 6},
			ServiceLevel{UserTPS: 92, TTFTP95: 60 * time.Millisecond, PromptWords: 128, OutputTokens: 24, MaxConcurrency: 256}, 4},
		{"the maximum", Config{TokenInterval: 4 * time.Millisecond, BatchCapacity: 6},
			ServiceLevel{UserTPS: 10, TTFTP95: 60 * time.Millisecond, PromptWords: 128, OutputTokens: 24, MaxConcurrency: 5}, 5},
		{"prefill too slow for one user", Config{TokenInterval: 4 * time.Millisecond, PrefillRate: 1000},
			ServiceLevel{UserTPS: 10, TTFTP95: 60 * time.Millisecond, PromptWords: 128, OutputTokens: 24, MaxConcurrency: 5}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cfg.Capacity(tt.sl)
			if err != nil || got != tt.want {
				t.Errorf("Capacity = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
	// A ceiling the queue might meet is not answered.
	if _, err := (Config{TokenInterval: time.Millisecond, BatchCapacity: 2}).Capacity(
		ServiceLevel{UserTPS: 1, TTFTP95: time.Second, PromptWords: 10, OutputTokens: 10, MaxConcurrency: 8}); err == nil {
		t.Error("an ambiguous question got an answer")
	}
}
