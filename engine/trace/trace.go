// Package trace holds a recording of a person's own traffic to their
// server with no text in it (issue #51): one JSON line per request, in
// Mooncake's trace format (timestamp, input_length, output_length,
// hash_ids) with this app's own fields beside, so vLLM's and SGLang's
// replay tools read it as they read Mooncake's, and this app replays it
// with what they cannot: the API the client spoke, whether it streamed,
// what the server took from its cache and what the client saw.
//
// A prompt's words never reach a trace: only its prefix structure, as
// salted hashes of fixed-size blocks of it (Blocks), which says "this
// request repeats the first 18 blocks of that one" and nothing of what
// they said. The salt is drawn per recording and never written anywhere,
// so even the person who recorded the trace cannot test a guessed text
// against it afterwards.
package trace

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
)

// The APIs a request can speak, as a trace names them.
const (
	APIChat        = "openai-chat"        // /v1/chat/completions
	APICompletions = "openai-completions" // /v1/completions
	APIAnthropic   = "anthropic-messages" // /v1/messages
	APIOllamaChat  = "ollama-chat"        // /api/chat
	APIOllamaGen   = "ollama-generate"    // /api/generate
)

// BlockBytes is the size of a prompt block this app hashes: about 512
// tokens of English at four bytes a token, Mooncake's block of 512
// tokens. The proxy has no tokenizer (and needs none: the server counts
// the tokens), so its blocks are of the prompt's bytes, and a replay
// spreads the server's token count over them by their bytes.
const BlockBytes = 2048

// Request is one line of a trace. The first four fields are Mooncake's;
// the rest are this app's, absent from an imported public trace where it
// does not say them.
type Request struct {
	// Timestamp is the request's arrival in ms from the trace's start.
	Timestamp int64 `json:"timestamp"`
	// InputLength and OutputLength are the prompt's and the answer's
	// tokens, as the server counted them (Usage says whence).
	InputLength  int `json:"input_length"`
	OutputLength int `json:"output_length"`
	// HashIDs are the prompt's blocks, each the salted hash of it and
	// every block before it (Blocks): two requests share their first n
	// ids exactly when their prompts share their first n blocks.
	HashIDs []int64 `json:"hash_ids"`

	// MessageIDs are the prompt up to the end of each of its parts —
	// the tools, the system prompt, each message — each the salted hash
	// of all of it to there (Prefixes): a conversation's next turn holds
	// the whole prompt of the turn before, so the last id of that one is
	// among its ids, however short both are (a block of 2,048 bytes is
	// longer than most chat turns). Absent where the request has no
	// messages (an imported trace).
	MessageIDs []int64 `json:"message_ids,omitempty"`

	// Time is the arrival's wall-clock time (RFC 3339, the recording
	// machine's zone), for replaying a part of a day (--from, --to).
	Time string `json:"time,omitempty"`
	// API is the request's API (the API… constants) and Path its path.
	API  string `json:"api,omitempty"`
	Path string `json:"path,omitempty"`
	// Model is the model the request named.
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream,omitempty"`
	// MaxTokens is the answer length the client asked for at most; 0
	// where it asked none.
	MaxTokens int `json:"max_tokens,omitempty"`
	// PromptBytes is the hashed prompt's length in bytes and BlockBytes
	// its block size: the last block is the rest.
	PromptBytes int `json:"prompt_bytes,omitempty"`
	BlockBytes  int `json:"block_bytes,omitempty"`
	// CachedTokens is how many prompt tokens the server said it took
	// from its prompt cache; nil where it did not say.
	CachedTokens *int `json:"cached_tokens,omitempty"`
	// TTFTMs is the time from the request's arrival at the proxy to the
	// first token it passed back, and DurationMs to the answer's end,
	// both as the proxy saw them; TTFTMs nil where no token came.
	TTFTMs     *float64 `json:"ttft_ms,omitempty"`
	DurationMs float64  `json:"duration_ms,omitempty"`
	// Status is the server's HTTP status; 0 where it gave none.
	Status int `json:"status,omitempty"`
	// Error is what went wrong, in words: the client hung up, the server
	// failed or could not be reached. "" for a whole answer.
	Error string `json:"error,omitempty"`
	// Usage says where the token counts came from: UsageServer (the
	// server's own usage), UsageCounted (no usage: the answer's token
	// chunks counted, the prompt unknown) or "" in an imported trace.
	Usage string `json:"usage,omitempty"`
}

// Where a request's token counts came from.
const (
	UsageServer  = "server"
	UsageCounted = "counted"
)

// Salt is a recording's secret: the key of its block hashes. It is drawn
// at random for each recording and kept only in memory.
type Salt [32]byte

// NewSalt draws a salt.
func NewSalt() (Salt, error) {
	var s Salt
	if _, err := rand.Read(s[:]); err != nil {
		return s, fmt.Errorf("draw a trace's salt: %w", err)
	}
	return s, nil
}

// maxID keeps a hash id a whole number JSON readers hold exactly (2^53):
// JavaScript and Python's json read it back as the same number.
const idBits = 53

// Blocks are prompt's hash ids: prompt cut into blocks of size bytes,
// each id the first 53 bits of SHA-256 over the salt, the previous
// block's hash and the block, so an id stands for the whole prefix up to
// its block. An empty prompt has none.
func Blocks(salt Salt, prompt []byte, size int) []int64 {
	if size <= 0 {
		size = BlockBytes
	}
	ids := make([]int64, 0, (len(prompt)+size-1)/size)
	var prev [sha256.Size]byte
	h := sha256.New()
	for at := 0; at < len(prompt); at += size {
		h.Reset()
		h.Write(salt[:])
		h.Write(prev[:])
		h.Write(prompt[at:min(at+size, len(prompt))])
		h.Sum(prev[:0])
		ids = append(ids, int64(binary.BigEndian.Uint64(prev[:8])>>(64-idBits)))
	}
	return ids
}

// Prefixes are prompt's message ids: for each end in ends (ascending
// offsets into prompt), the first 53 bits of SHA-256 over the salt, a
// byte apart from Blocks' and prompt up to that end. One hash runs over
// the prompt once; each id is its state at an end.
func Prefixes(salt Salt, prompt []byte, ends []int) []int64 {
	h := sha256.New()
	h.Write(salt[:])
	h.Write([]byte{'m'})
	ids := make([]int64, 0, len(ends))
	at := 0
	var sum [sha256.Size]byte
	for _, e := range ends {
		if e < at || e > len(prompt) {
			break
		}
		h.Write(prompt[at:e])
		at = e
		h.Sum(sum[:0])
		ids = append(ids, int64(binary.BigEndian.Uint64(sum[:8])>>(64-idBits)))
	}
	return ids
}

// Writer appends requests to a trace file, one whole line per write, so
// a recorder killed at any moment leaves every line it finished and at
// most one cut line, which Read passes over.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	n   int
	err error
}

// Create opens path to append a trace to (made readable by this user
// only: a trace holds no text, but when a person was busy is theirs).
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the trace: %w", err)
	}
	return &Writer{f: f}, nil
}

// Add writes r as one line. After a failed write every later Add returns
// that error.
func (w *Writer) Add(r Request) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("write the trace: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if _, err := w.f.Write(line); err != nil {
		w.err = fmt.Errorf("write the trace: %w", err)
		return w.err
	}
	w.n++
	return nil
}

// Count is how many requests were written.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close the trace: %w", err)
	}
	return w.err
}

// MaxLine bounds one line of a trace: a prompt of a million tokens has
// under 600 blocks of 2048 bytes, about 12 kB of ids.
const MaxLine = 1 << 20

// ErrNotTrace is wrapped by Read's error for input that is not a trace.
var ErrNotTrace = errors.New("not a trace")

// Read reads a trace: every line a request, blank lines skipped, a last
// line cut short (a recorder killed mid-write) passed over and counted
// in cut. Any other line that is not a request is an error naming it.
// At most max requests are read (0: no bound); more is an error.
func Read(r io.Reader, max int) (reqs []Request, cut int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	var bad error
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if bad != nil {
			// A bad line before the end is not a cut last line.
			return nil, 0, bad
		}
		var q Request
		var has struct {
			T *json.RawMessage `json:"timestamp"`
			I *json.RawMessage `json:"input_length"`
			O *json.RawMessage `json:"output_length"`
		}
		if err := json.Unmarshal(line, &q); err != nil || json.Unmarshal(line, &has) != nil || has.T == nil || has.I == nil || has.O == nil || !plausible(q) {
			bad = fmt.Errorf("line %d: %w: each line should be a JSON object with timestamp, input_length and output_length", n, ErrNotTrace)
			continue
		}
		if max > 0 && len(reqs) == max {
			return nil, 0, fmt.Errorf("the trace has more than %d requests", max)
		}
		reqs = append(reqs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("read the trace: %w", err)
	}
	if bad != nil {
		if len(reqs) == 0 {
			return nil, 0, bad
		}
		cut = 1
	}
	return reqs, cut, nil
}

// plausible: a line that decoded is a request only with sane figures.
func plausible(q Request) bool {
	return q.Timestamp >= 0 && q.InputLength >= 0 && q.OutputLength >= 0 && q.Timestamp < math.MaxInt64/2
}
