package sim

import "sync"

// A prompt cache like the ones real servers keep across requests and runs
// (llama.cpp's RAM prompt cache and slot reuse, vLLM's automatic prefix
// caching, SGLang's radix cache): a prompt whose leading words the server
// has seen before is served from cache up to the longest remembered
// prefix, and only the rest is prefilled. Prefixes are remembered in
// blocks of cacheBlock words, as vLLM does in blocks of tokens; the
// simulator's tokens are words (docs/servers.md).

const (
	cacheBlock = 16
	// maxCachedBlocks bounds the memory; past it the cache starts empty
	// again, as a real one evicts.
	maxCachedBlocks = 1 << 18
)

type promptCache struct {
	mu     sync.Mutex
	blocks map[uint64]struct{}
}

// blockKeys hashes the words of texts, in order, into one key per full
// block: key i stands for the first (i+1)·cacheBlock words.
func blockKeys(texts []string) []uint64 {
	var keys []uint64
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
			if words%cacheBlock == 0 {
				keys = append(keys, h)
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
// remembers all of its blocks for the prompts that follow.
func (c *promptCache) take(keys []uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocks == nil || len(c.blocks)+len(keys) > maxCachedBlocks {
		c.blocks = make(map[uint64]struct{}, len(keys))
	}
	hit := 0
	for hit < len(keys) {
		if _, ok := c.blocks[keys[hit]]; !ok {
			break
		}
		hit++
	}
	for _, k := range keys[hit:] {
		c.blocks[k] = struct{}{}
	}
	return hit * cacheBlock
}
