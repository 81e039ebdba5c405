package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// message is one chat message as a client sends it.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// served is what a client read of one answer: its text (content only,
// as a client keeps it for the next turn) and what the server said of
// the prompt cache.
type served struct {
	text    string
	usage   *usageJSON
	timings map[string]float64
}

// chatTurn sends msgs, streamed or not, and reads the answer.
func chatTurn(t *testing.T, url string, msgs []message, stream bool, maxTokens int) served {
	t.Helper()
	req := map[string]any{
		"model": "kovara-sim-8b", "messages": msgs, "max_tokens": maxTokens, "temperature": 0, "stream": stream,
	}
	if stream {
		req["stream_options"] = map[string]any{"include_usage": true}
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if !stream {
		resp, err := freshConns.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d, %v: %s", resp.StatusCode, err, b)
		}
		var c struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
			Usage   *usageJSON         `json:"usage"`
			Timings map[string]float64 `json:"timings"`
		}
		if err := json.Unmarshal(b, &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("not a chat completion (%v): %s", err, b)
		}
		return served{c.Choices[0].Message.Content, c.Usage, c.Timings}
	}
	res := mustStream(t, url, body)
	if res.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", res.status, res.body)
	}
	s := summarize(t, res.lines)
	return served{strings.Join(s.texts, ""), s.usage, s.timings}
}

// cacheSays is what a personality's answer says of the cached tokens:
// usage's prompt_tokens_details and llama.cpp's timings.cache_n, -1 for
// each one absent.
func (a served) cacheSays() (usage, cacheN int) {
	usage, cacheN = -1, -1
	if a.usage != nil && a.usage.Details != nil {
		usage = a.usage.Details.CachedTokens
	}
	if v, ok := a.timings["cache_n"]; ok {
		cacheN = int(v)
	}
	return usage, cacheN
}

// wantSaid is what a personality says of cached tokens when the truth is
// cached (-1: nothing), as the real servers do (docs/servers.md):
// llama.cpp always, in usage and timings; vLLM and SGLang in usage only
// with their report on and only above 0; the OpenAI API always, in
// usage; Ollama never.
func wantSaid(cfg Config, cached int) (usage, cacheN int) {
	switch p := cfg.Personality; {
	case p == LlamaCpp:
		return cached, cached
	case (p == VLLM || p == SGLang) && cfg.CacheReport && cached > 0, p == Strict:
		return cached, -1
	}
	return -1, -1
}

func on() *bool { b := true; return &b }

// words is n filler words that no prompt of these tests shares by chance.
func words(tag string, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s%d", tag, i%97)
	}
	return b.String()
}

// TestSharedSystemPromptCached: every request sends one long system
// message and its own question. The first is cold; every later one is
// served the system message from cache, in whole blocks with the
// template, and says so where its server does.
func TestSharedSystemPromptCached(t *testing.T) {
	t.Parallel()
	const system = 2000 // words, 125 whole blocks
	tests := []struct {
		name string
		cfg  Config
	}{
		{"llama.cpp", Config{Personality: LlamaCpp}},
		{"vLLM with its cached-token report", Config{Personality: VLLM, PromptCache: on(), CacheReport: true}},
		{"vLLM without it", Config{Personality: VLLM, PromptCache: on()}},
		{"SGLang with its cache report", Config{Personality: SGLang, PromptCache: on(), CacheReport: true}},
		{"Ollama", Config{Personality: Ollama, PromptCache: on(), ContextLength: 8192}},
		{"the OpenAI API", Config{Personality: Strict, PromptCache: on()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.RecordTruth, cfg.TokenInterval = true, time.Millisecond
			s, url := startSim(t, cfg)
			sys := words("sys", system)
			for n := int64(1); n <= 4; n++ {
				for _, stream := range []bool{true, false} {
					n := n
					if !stream {
						n += 100
					}
					a := chatTurn(t, url, []message{{"system", sys}, {"user", fmt.Sprintf("Request %d: what does part %d say?", n, n)}}, stream, 8)
					tr := waitTruth(t, s, n)
					want := s.Config().CachedPrefix(system, tr.PromptTokens)
					if n == 1 {
						want = 0 // the first request finds the cache empty
					}
					if tr.CachedTokens != want {
						t.Errorf("request %d: %d of %d prompt tokens from cache, want %d", n, tr.CachedTokens, tr.PromptTokens, want)
					}
					if a.usage == nil || a.usage.PromptTokens != tr.PromptTokens {
						t.Errorf("request %d: usage %+v, want %d prompt tokens, cached ones included", n, a.usage, tr.PromptTokens)
					}
					gotU, gotN := a.cacheSays()
					wantU, wantN := wantSaid(cfg, tr.CachedTokens)
					if gotU != wantU || gotN != wantN {
						t.Errorf("request %d: said cached_tokens %d and cache_n %d (-1: absent), want %d and %d", n, gotU, gotN, wantU, wantN)
					}
				}
			}
		})
	}
}

// TestMultiTurnServedFromCache holds a conversation of five turns, each
// sending the history (the questions and the answers as streamed) and a
// new question: each turn is served from cache the turn before's prompt
// and answer, short of one block at most, and says so where its server
// does. An answer cut short is remembered as far as it went; reasoning,
// which the client does not send back, ends the shared history.
func TestMultiTurnServedFromCache(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		stream    bool
		reasoning bool
	}{
		{"llama.cpp", Config{Personality: LlamaCpp}, true, false},
		{"llama.cpp, not streamed", Config{Personality: LlamaCpp}, false, false},
		{"vLLM", Config{Personality: VLLM, PromptCache: on(), CacheReport: true}, true, false},
		{"vLLM, not streamed", Config{Personality: VLLM, PromptCache: on(), CacheReport: true}, false, false},
		{"llama.cpp, turn 2 cut short", Config{Personality: LlamaCpp, Faults: func(n int64) Fault {
			if n == 2 {
				return FaultNoDone
			}
			return FaultNone
		}}, true, false},
		{"llama.cpp, reasoning first", Config{Personality: LlamaCpp, ReasoningTokens: 3}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.RecordTruth, cfg.TokenInterval = true, time.Millisecond
			s, url := startSim(t, cfg)
			var history []message
			var prev Truth
			for k := int64(1); k <= 5; k++ {
				history = append(history, message{"user", fmt.Sprintf("Request %d: %s", k, words(fmt.Sprintf("q%d-", k), 20+int(k)*7))})
				a := chatTurn(t, url, history, tt.stream, 30)
				history = append(history, message{"assistant", a.text})
				tr := waitTruth(t, s, k)
				if a.text == "" || tr.CompletionTokens == 0 {
					t.Fatalf("turn %d: no answer", k)
				}
				lo, hi := 0, 0 // the first turn is cold
				switch {
				case k > 1 && tt.reasoning:
					lo, hi = prev.PromptTokens-cacheBlock, prev.PromptTokens
				case k > 1:
					lo, hi = prev.PromptTokens+prev.CompletionTokens-cacheBlock, tr.PromptTokens-1
				}
				if tr.CachedTokens < lo || tr.CachedTokens > hi {
					t.Errorf("turn %d: %d of %d prompt tokens from cache, want %d to %d (turn %d: %d prompt tokens, %d answered)",
						k, tr.CachedTokens, tr.PromptTokens, lo, hi, k-1, prev.PromptTokens, prev.CompletionTokens)
				}
				if tr.Fault == FaultNone {
					gotU, gotN := a.cacheSays()
					if wantU, wantN := wantSaid(cfg, tr.CachedTokens); gotU != wantU || gotN != wantN {
						t.Errorf("turn %d: said cached_tokens %d and cache_n %d (-1: absent), want %d and %d", k, gotU, gotN, wantU, wantN)
					}
				} else if tr.CompletionTokens != faultAfter {
					t.Errorf("turn %d: %d tokens before the cut, want %d", k, tr.CompletionTokens, faultAfter)
				}
				prev = tr
			}
		})
	}
}

// TestNoPromptCacheNoCachedTokens: without the prompt cache nothing is
// served from it, a shared system message or a conversation's history
// alike, and the server says 0 where it says anything.
func TestNoPromptCacheNoCachedTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		{"vLLM by default", Config{Personality: VLLM, CacheReport: true}},
		{"llama.cpp with the cache off", Config{Personality: LlamaCpp, PromptCache: new(bool)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.RecordTruth, cfg.TokenInterval = true, time.Millisecond
			s, url := startSim(t, cfg)
			sys := words("sys", 500)
			history := []message{{"system", sys}}
			for k := int64(1); k <= 3; k++ {
				history = append(history, message{"user", fmt.Sprintf("Request %d: and then?", k)})
				a := chatTurn(t, url, history, true, 16)
				history = append(history, message{"assistant", a.text})
				tr := waitTruth(t, s, k)
				if tr.CachedTokens != 0 {
					t.Errorf("turn %d: %d prompt tokens from cache, want 0", k, tr.CachedTokens)
				}
				gotU, gotN := a.cacheSays()
				if wantU, wantN := wantSaid(cfg, 0); gotU != wantU || gotN != wantN {
					t.Errorf("turn %d: said cached_tokens %d and cache_n %d (-1: absent), want %d and %d", k, gotU, gotN, wantU, wantN)
				}
			}
		})
	}
}
