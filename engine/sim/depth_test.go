package sim

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestDepthModelFormulas(t *testing.T) {
	t.Parallel()
	c := Config{PrefillRate: 1000, PrefillDepthTokens: 1000, TokenInterval: 10 * time.Millisecond, DecodeDepthTokens: 100}
	tests := []struct {
		name      string
		got, want time.Duration
	}{
		// T(n) = n/R × (1 + n/D): 500 tokens read in 0.5 s × 1.5.
		{"cold prefill", c.PrefillTime(500, 0), 750 * time.Millisecond},
		// T(1000) − T(500) = 2 s − 0.75 s: the cached tokens' share is
		// the cheap, shallow one.
		{"prefill after a cached prefix", c.PrefillTime(1000, 500), 1250 * time.Millisecond},
		// Tokens 1 and 2 of an answer after 100 prompt tokens: 10 ms ×
		// (1 + 101/100) and × (1 + 102/100).
		{"decode", c.DecodeTime(100, 3), 20100*time.Microsecond + 20200*time.Microsecond},
		{"one token has no decode time", c.DecodeTime(100, 1), 0},
	}
	for _, tt := range tests {
		if (tt.got - tt.want).Abs() > time.Microsecond {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	// Off by default: linear prefill, a flat interval.
	plain := Config{PrefillRate: 1000, TokenInterval: 10 * time.Millisecond}
	if got := plain.PrefillTime(1000, 500); got != 500*time.Millisecond {
		t.Errorf("without the depth model: prefill %v, want 500ms", got)
	}
	if got := plain.DecodeTime(30000, 3); got != 20*time.Millisecond {
		t.Errorf("without the depth model: decode %v, want 20ms", got)
	}
	// The cache serves whole blocks and the template, never the last token.
	if got, want := plain.CachedPrefix(40, 100), 32+11; got != want {
		t.Errorf("CachedPrefix(40 words) = %d, want %d", got, want)
	}
	if got := plain.CachedPrefix(10, 100); got != 0 {
		t.Errorf("CachedPrefix(10 words) = %d, want 0: no whole block", got)
	}
	if _, err := (Config{Jitter: 0.1}).Depth(100, 89, 10, 200); err == nil {
		t.Error("Depth with jitter gave a truth")
	}
}

// TestDepthModelServes holds what the simulator really did to the model:
// a cold request's first token no sooner than PrefillTime(prompt, 0)
// after its own record's admission, its last no sooner than
// DecodeTime(prompt, n) after that (gaps growing with the context), and a
// follow-up (the prompt, the answer, a new turn) served from the cache as
// CachedPrefix says and reported in usage and timings. Only lower bounds:
// how late a busy machine runs the simulator is not its model's property
// (timing_test.go).
func TestDepthModelServes(t *testing.T) {
	t.Parallel()
	cfg := ContextDemo()
	cfg.RecordTruth = true
	cfg.TokenInterval = 2 * time.Millisecond
	cfg.DecodeDepthTokens = 2000
	s, url := startSim(t, cfg)
	const words = 3000
	prompt := promptText(7, words)
	res := mustStream(t, url, chatBody("kovara-sim-8b", 7, words, streamOpts(8, true)))
	tr := waitTruth(t, s, 7)
	if tr.PromptTokens != words+11 {
		t.Fatalf("prompt tokens %d, want %d", tr.PromptTokens, words+11)
	}
	want := s.Config().PrefillTime(tr.PromptTokens, 0)
	if got := tr.Chunks[0].Sub(tr.Admitted); got < want {
		t.Errorf("cold: first token %v after admission, want no sooner than %v", got, want)
	}
	// Tokens are paced against absolute deadlines from the first token's
	// (or, when it left late, from when it left), so the last comes no
	// sooner than the prefill and the decode after admission.
	wantSpan := s.Config().DecodeTime(tr.PromptTokens, len(tr.Chunks))
	if got := tr.Chunks[len(tr.Chunks)-1].Sub(tr.Admitted); got < want+wantSpan {
		t.Errorf("cold: last token %v after admission, want no sooner than %v + %v", got, want, wantSpan)
	}
	if flat := 7 * cfg.TokenInterval; wantSpan < 2*flat {
		t.Errorf("the depth model's decode %v is not slower than a flat %v", wantSpan, flat)
	}
	var answer strings.Builder
	for _, l := range res.lines {
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(l.data), &c) == nil && len(c.Choices) > 0 {
			answer.WriteString(c.Choices[0].Delta.Content)
		}
	}
	body, _ := json.Marshal(map[string]any{
		"model": "kovara-sim-8b",
		"messages": []map[string]string{
			{"role": "user", "content": prompt},
			{"role": "assistant", "content": answer.String()},
			{"role": "user", "content": "Request 8: and then?"},
		},
		"stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": 4, "ignore_eos": true,
	})
	follow := mustStream(t, url, body)
	ftr := waitTruth(t, s, 8)
	// The cache remembered the answer after the prompt: the follow-up
	// shares both.
	cached := s.Config().CachedPrefix(words+len(tr.Chunks), ftr.PromptTokens)
	if cached < words-cacheBlock {
		t.Fatalf("the cache model serves %d of a %d-word prompt", cached, words)
	}
	want = s.Config().PrefillTime(ftr.PromptTokens, cached)
	if got := ftr.Chunks[0].Sub(ftr.Admitted); got < want {
		t.Errorf("follow-up: first token %v after admission, want no sooner than %v", got, want)
	}
	last := follow.lines[len(follow.lines)-2].data // the usage chunk, before [DONE]
	var u struct {
		Usage struct {
			Details struct {
				Cached int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
		Timings struct {
			CacheN int `json:"cache_n"`
		} `json:"timings"`
	}
	if err := json.Unmarshal([]byte(last), &u); err != nil {
		t.Fatal(err)
	}
	if u.Usage.Details.Cached != cached || u.Timings.CacheN != cached {
		t.Errorf("the follow-up reported %d cached tokens (cache_n %d), want %d", u.Usage.Details.Cached, u.Timings.CacheN, cached)
	}
	truth, err := s.Config().Depth(tr.PromptTokens, words, 8, ftr.PromptTokens)
	if err != nil {
		t.Fatal(err)
	}
	// The truth's TTFTs are the client's: the request's own overhead
	// first, outside the server's prompt timer.
	cold := truth.ColdTTFT - cfg.RequestOverhead
	if cfg.RequestOverhead == 0 || truth.FollowUpCached != cached || truth.FollowUpTTFT != want+cfg.RequestOverhead || math.Abs(truth.PrefillTPS*cold.Seconds()-float64(tr.PromptTokens)) > 1e-6 {
		t.Errorf("Depth = %+v, disagrees with the served follow-up (%d cached, %v)", truth, cached, want)
	}
}
