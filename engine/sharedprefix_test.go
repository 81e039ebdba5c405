package engine

import (
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// TestCacheFromPromptN: llama.cpp b4748 says its cache only through
// timings.prompt_n (the tokens it evaluated) beside usage.prompt_tokens;
// a newer build's cache_n or cached_tokens is read first, and an answer
// with no prompt_n says nothing.
func TestCacheFromPromptN(t *testing.T) {
	t.Parallel()
	b4748 := func(prompt, evaluated int) *outcome {
		return &outcome{hasUsage: true, promptTok: prompt, hasTimings: true, timingsIn: evaluated}
	}
	tests := []struct {
		name       string
		oks        []*outcome
		source     string
		cached     int64
		prompt     int64
		shared     int
		sharedSaid bool
	}{
		{"b4748", []*outcome{b4748(270, 254), b4748(270, 1)}, results.CacheFromPromptN, 16 + 269, 540, 269, true},
		{"cache_n first", []*outcome{{hasUsage: true, promptTok: 270, hasTimings: true, timingsIn: 254, hasCacheN: true, timingsCache: 16}},
			results.CacheFromTimings, 16, 270, 16, true},
		{"cached_tokens first", []*outcome{{hasUsage: true, promptTok: 270, hasCached: true, cachedTok: 12, hasTimings: true, timingsIn: 200}},
			results.CacheFromUsage, 12, 270, 12, true},
		{"no prompt_n", []*outcome{b4748(270, 0)}, "", 0, 0, 0, false},
		{"no timings", []*outcome{{hasUsage: true, promptTok: 270}}, "", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc := requestCache(tt.oks)
			switch {
			case tt.source == "" && pc != nil:
				t.Errorf("requestCache = %+v, want nothing said", pc)
			case tt.source != "" && (pc == nil || pc.Source != tt.source || pc.CachedTokens != tt.cached || pc.PromptTokens != tt.prompt):
				t.Errorf("requestCache = %+v, want %s %d of %d", pc, tt.source, tt.cached, tt.prompt)
			}
			shared, said := sharedTokens(*tt.oks[len(tt.oks)-1])
			if shared != tt.shared || said != tt.sharedSaid {
				t.Errorf("sharedTokens = %d, %v; want %d, %v", shared, said, tt.shared, tt.sharedSaid)
			}
		})
	}
}

// TestMergeCacheKeepsShared: shards' per-request counts add up, and the
// merged level keeps the larger shared start the shards measured, so a
// merged run is held to the same line as its shards.
func TestMergeCacheKeepsShared(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	a := &results.PromptCache{CachedTokens: 160, PromptTokens: 2700, Requests: 10, Source: results.CacheFromPromptN, SharedTokens: n(16)}
	b := &results.PromptCache{CachedTokens: 180, PromptTokens: 2700, Requests: 10, Source: results.CacheFromPromptN, SharedTokens: n(18)}
	got := mergeCache([]*results.PromptCache{a, b})
	if got == nil || got.Source != results.CacheFromPromptN || got.CachedTokens != 340 || got.Requests != 20 || got.SharedTokens == nil || *got.SharedTokens != 18 {
		t.Fatalf("mergeCache = %+v, want 340 cached over 20 requests from prompt_n, 18 shared", got)
	}
	if got.Beyond() != 0 {
		t.Errorf("beyond the shared start: %v, want 0", got.Beyond())
	}
}
