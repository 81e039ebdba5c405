package sim

import "sync"

// A prompt cache like the ones real servers keep across requests and runs
// (llama.cpp's RAM prompt cache and slot reuse, vLLM's automatic prefix
// caching, SGLang's radix cache): a prompt whose leading words the server
// has seen before is served from cache up to the longest remembered
// prefix, and only the rest is prefilled. Prefixes are remembered in
// blocks of cacheBlock words, as vLLM does in blocks of tokens; the
// llamacpp personality also matches a prompt's start word by word, as
// llama.cpp's slot cache matches to the token, so every prompt of the
// method is served its template, instruction and "Request" from cache
// (docs/servers.md). The simulator's tokens are words, or
// Config.TokensPerWord of them.

const (
	cacheBlock = 16
	// maxCachedBlocks bounds the memory; past it the cache starts empty
	// again, as a real one evicts.
	maxCachedBlocks = 1 << 18
)

type promptCache struct {
	mu     sync.Mutex
	blocks map[uint64]struct{}
	// starts holds a key per leading word of the first block (key i: the
	// first i+1 words), for a cache that matches to the token, as
	// llama.cpp's slot cache does: a prompt that shares only its start
	// with an earlier one (the chat template, the instruction and
	// "Request") is served that start from cache.
	starts map[uint64]struct{}
}

// promptKeys are a prompt's cache keys: one per full block of cacheBlock
// words, and one per word of the first block.
type promptKeys struct {
	blocks, start []uint64
}

// blockKeys hashes the words of texts, in order, into one key per full
// block (key i stands for the first (i+1)·cacheBlock words) and one per
// word of the first block.
func blockKeys(texts []string) promptKeys {
	var keys promptKeys
	h, words := uint64(0x9e3779b97f4a7c15), 0
	for _, t := range texts {
		for i := 0; i < len(t); {
			for i < len(t) && isSpace(t[i]) {
				i++
			}
			if i >= len(t) {
				break
			}
			w := uint64(0xcbf29ce484222325)
			for ; i < len(t) && !isSpace(t[i]); i++ {
				w = (w ^ uint64(t[i])) * 0x100000001b3
			}
			h = mix64(h ^ w)
			words++
			if words <= cacheBlock {
				keys.start = append(keys.start, h)
			}
			if words%cacheBlock == 0 {
				keys.blocks = append(keys.blocks, h)
			}
		}
	}
	return keys
}

// isSpace is ASCII white space; other bytes belong to words (a UTF-8
// space only splits words less finely, which a cache key can afford).
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// take returns how many leading words of the prompt are cached, and
// remembers all of its keys for the prompts that follow. With byWord, a
// prompt that matches no whole block is still served the words of its
// start that an earlier prompt began with.
func (c *promptCache) take(keys promptKeys, byWord bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocks == nil || len(c.blocks)+len(keys.blocks) > maxCachedBlocks {
		c.blocks = make(map[uint64]struct{}, len(keys.blocks))
	}
	if c.starts == nil || len(c.starts)+len(keys.start) > maxCachedBlocks {
		c.starts = make(map[uint64]struct{}, len(keys.start))
	}
	hit := 0
	for hit < len(keys.blocks) {
		if _, ok := c.blocks[keys.blocks[hit]]; !ok {
			break
		}
		hit++
	}
	start := 0
	for start < len(keys.start) {
		if _, ok := c.starts[keys.start[start]]; !ok {
			break
		}
		start++
	}
	for _, k := range keys.blocks[hit:] {
		c.blocks[k] = struct{}{}
	}
	for _, k := range keys.start[start:] {
		c.starts[k] = struct{}{}
	}
	if hit == 0 && byWord {
		return start
	}
	return hit * cacheBlock
}
