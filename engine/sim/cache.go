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
//
// A conversation's next turn sends the messages before it, the answer as
// an assistant message and a new question. The cache remembers each
// answer's words after its prompt's, as llama.cpp's slot keeps the
// generated tokens in its KV cache and vLLM caches full blocks of them,
// so the next turn is served its history, answers included, from cache.

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

// keyHasher makes a prompt's cache keys word by word, and can go on where
// the prompt ended with the words of its answer, so that the answer's keys
// are those of the next turn, which sends the prompt's messages and the
// answer as one more. A word never runs from one text into the next: a
// chat template puts its markup between messages.
type keyHasher struct {
	h, w   uint64 // the prefix's hash; the hash of the word being read
	words  int    // words finished
	inWord bool
	keys   promptKeys // the keys made since the last take
}

func newKeyHasher() keyHasher { return keyHasher{h: 0x9e3779b97f4a7c15} }

func (kh *keyHasher) add(t string) {
	for i := 0; i < len(t); i++ {
		kh.byte(t[i])
	}
}

func (kh *keyHasher) addBytes(t []byte) {
	for _, c := range t {
		kh.byte(c)
	}
}

func (kh *keyHasher) byte(c byte) {
	if isSpace(c) {
		kh.end()
		return
	}
	if !kh.inWord {
		kh.inWord, kh.w = true, 0xcbf29ce484222325
	}
	kh.w = (kh.w ^ uint64(c)) * 0x100000001b3
}

// end finishes the word being read, if any.
func (kh *keyHasher) end() {
	if !kh.inWord {
		return
	}
	kh.inWord = false
	kh.h = mix64(kh.h ^ kh.w)
	kh.words++
	if kh.words <= cacheBlock {
		kh.keys.start = append(kh.keys.start, kh.h)
	}
	if kh.words%cacheBlock == 0 {
		kh.keys.blocks = append(kh.keys.blocks, kh.h)
	}
}

// take hands over the keys made so far and starts collecting afresh.
func (kh *keyHasher) take() promptKeys {
	k := kh.keys
	kh.keys = promptKeys{}
	return k
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
	c.makeRoom(keys)
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
	c.insert(promptKeys{blocks: keys.blocks[hit:], start: keys.start[start:]})
	if hit == 0 && byWord {
		return start
	}
	return hit * cacheBlock
}

// remember keeps the keys of what followed a prompt, its answer, for the
// next turn of the conversation.
func (c *promptCache) remember(keys promptKeys) {
	if len(keys.blocks) == 0 && len(keys.start) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.makeRoom(keys)
	c.insert(keys)
}

// makeRoom starts the cache empty again when keys would take it past
// its bound.
func (c *promptCache) makeRoom(keys promptKeys) {
	if c.blocks == nil || len(c.blocks)+len(keys.blocks) > maxCachedBlocks {
		c.blocks = make(map[uint64]struct{}, len(keys.blocks))
	}
	if c.starts == nil || len(c.starts)+len(keys.start) > maxCachedBlocks {
		c.starts = make(map[uint64]struct{}, len(keys.start))
	}
}

func (c *promptCache) insert(keys promptKeys) {
	for _, k := range keys.blocks {
		c.blocks[k] = struct{}{}
	}
	for _, k := range keys.start {
		c.starts[k] = struct{}{}
	}
}
