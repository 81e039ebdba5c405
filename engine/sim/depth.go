package sim

import (
	"errors"
	"math"
	"strings"
	"time"
)

// The depth model: how a server slows as the context grows, the ground
// truth the context plan is tested against (docs/plans.md, "The context
// plan"). Real servers read a long prompt more slowly per token than a
// short one (attention looks back over every token before it) and decode
// more slowly with a deep context (every step reads the whole KV cache).
// Both effects are off unless Config.PrefillDepthTokens or
// Config.DecodeDepthTokens is set, so nothing else the simulator does
// changes.

// prefillCost is T(n), the time to read the first n tokens of a context
// from nothing: n/PrefillRate × (1 + n/PrefillDepthTokens), quadratic in
// n with the depth model on, linear without it.
func (c *Config) prefillCost(n int) float64 {
	sec := float64(n) / c.PrefillRate
	if c.PrefillDepthTokens > 0 {
		sec *= 1 + float64(n)/float64(c.PrefillDepthTokens)
	}
	return sec
}

// prefill is how long reading a prompt of prompt tokens takes when its
// first cached tokens come from the prompt cache: T(prompt) − T(cached),
// the cost of the tokens after the cache, each at its own depth.
func (c *Config) prefill(prompt, cached int) time.Duration {
	return time.Duration((c.prefillCost(prompt) - c.prefillCost(cached)) * float64(time.Second))
}

// decodeDepth stretches the decode interval of a token computed with ctx
// tokens in the context: 1 + ctx/DecodeDepthTokens, or 1 without the
// depth model.
func (c *Config) decodeDepth(ctx int) float64 {
	if c.DecodeDepthTokens <= 0 {
		return 1
	}
	return 1 + float64(ctx)/float64(c.DecodeDepthTokens)
}

// textTokens is the tokens of a text by WordTokens, word by word; 0
// without it.
func (c *Config) textTokens(text string) int {
	if c.WordTokens == nil {
		return 0
	}
	n := 0
	for _, w := range strings.Fields(text) {
		n += c.WordTokens(w)
	}
	return n
}

// wordTokens is the prompt tokens of words words (TokensPerWord).
func (c *Config) wordTokens(words int) int {
	if c.TokensPerWord <= 0 || c.TokensPerWord == 1 {
		return words
	}
	return int(math.Round(float64(words) * c.TokensPerWord))
}

// cachedTokens is what the prompt cache serves of a prompt of prompt
// tokens whose first hit words it has seen: the template's tokens come
// first, so they are cached too, and a server always evaluates at least
// the last token.
func (c *Config) cachedTokens(hit, prompt int) int {
	if hit <= 0 {
		return 0
	}
	return min(hit+c.TemplateOverhead, prompt-1)
}

// PrefillTime is the time from admission to the first token of a request
// of prompt tokens, cached of them from the prompt cache, with this
// configuration (defaults filled in): the truth a prefill is measured
// against.
func (c Config) PrefillTime(prompt, cached int) time.Duration {
	c = c.withDefaults()
	return c.prefill(prompt, cached)
}

// DecodeTime is the time from the first token to the last of an answer of
// n tokens after a prompt of prompt tokens, for one sequence alone: token
// i (from 1) is computed with prompt+i tokens in the context, one
// TokenInterval × decodeDepth(prompt+i) after the one before.
func (c Config) DecodeTime(prompt, n int) time.Duration {
	c = c.withDefaults()
	var d time.Duration
	for i := 1; i < n; i++ {
		d += time.Duration(float64(c.TokenInterval) * c.decodeDepth(prompt+i))
	}
	return d
}

// CachedPrefix is what the prompt cache serves of a prompt of prompt
// tokens that repeats, from its start, sharedWords words of one sent
// before: the shared words in whole cache blocks, and the template.
func (c Config) CachedPrefix(sharedWords, prompt int) int {
	c = c.withDefaults()
	return c.cachedTokens(c.wordTokens(sharedWords/cacheBlock*cacheBlock), prompt)
}

// DepthTruth is what the depth model says a context plan measures of one
// conversation: a cold prompt of Prompt tokens answered with Answer
// tokens, then a follow-up (the prompt, the answer as streamed, a new
// question) of FollowUpPrompt tokens of which FollowUpCached come from
// the cache: the prompt's words and the answer's, in whole blocks.
type DepthTruth struct {
	PrefillTPS     float64       // Prompt / PrefillTime(Prompt, 0): the server's own prompt timer
	DecodeTPS      float64       // Answer / DecodeTime(Prompt, Answer): the plan's formula
	ColdTTFT       time.Duration // RequestOverhead + PrefillTime(Prompt, 0)
	FollowUpTTFT   time.Duration // RequestOverhead + PrefillTime(FollowUpPrompt, FollowUpCached)
	FollowUpCached int
}

// Depth is the depth model's truth for a conversation whose cold prompt
// has prompt tokens (promptWords of them the first message's words),
// answered with answer tokens, and whose follow-up has followUpPrompt
// tokens: exact for one user at a time, without jitter or a batch
// slowdown; an error otherwise.
func (c Config) Depth(prompt, promptWords, answer, followUpPrompt int) (DepthTruth, error) {
	c = c.withDefaults()
	if c.Jitter != 0 || c.BatchSlowdown != 0 || c.SpecDecode != nil {
		return DepthTruth{}, errors.New("sim: the depth model is exact only without jitter, batch slowdown and speculative decoding")
	}
	if prompt < 1 || answer < 2 {
		return DepthTruth{}, errors.New("sim: a depth truth needs a prompt and an answer of at least 2 tokens")
	}
	cold := c.prefill(prompt, 0)
	t := DepthTruth{ColdTTFT: c.RequestOverhead + cold, PrefillTPS: float64(prompt) / cold.Seconds()}
	t.DecodeTPS = float64(answer) / c.DecodeTime(prompt, answer).Seconds()
	if *c.PromptCache {
		// Each answer token is one of the simulator's words.
		t.FollowUpCached = c.cachedTokens(c.wordTokens((promptWords+answer)/cacheBlock*cacheBlock), followUpPrompt)
	}
	t.FollowUpTTFT = c.RequestOverhead + c.prefill(followUpPrompt, t.FollowUpCached)
	return t, nil
}

// ContextDemo is the simulator behind `kovara-bench demo --plan context`
// and the app's context demo: llama.cpp-like (timings, a prompt cache, its
// context at /props), with a depth model a homelab GPU might show with a
// small model: about 10,000 prompt tokens/s on a short prompt falling to
// half at 16k, decoding 250 tok/s on an empty context and 125 at 32k. Its
// context of 16,384 tokens makes the plan's default depths 0 to 8k, so the
// demo takes well under a minute.
func ContextDemo() Config {
	return Config{
		Personality:        LlamaCpp,
		Models:             []string{"kovara-sim-8b"},
		PrefillRate:        10000,
		PrefillDepthTokens: 16384,
		TokenInterval:      4 * time.Millisecond,
		DecodeDepthTokens:  32768,
		BatchCapacity:      1,
		ContextLength:      16384,
		RequestOverhead:    3 * time.Millisecond,
		Seed:               7,
	}
}
