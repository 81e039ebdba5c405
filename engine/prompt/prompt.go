// Package prompt implements the kovara-synthetic-v1 prompt generator.
//
// Every benchmark request carries a synthetic prompt built from three parts:
// a fixed instruction sentence, the request's number, and a run of words drawn
// from an embedded list of 1,024 common English words. The words are chosen
// by a SplitMix64 generator seeded from the run's seed and the request number,
// so a given (seed, request number, word count) always yields the same bytes,
// on every machine, OS and architecture. The full definition, with worked
// examples, is in docs/method.md ("Prompt generator").
//
// Text shape, with k ≥ 1 words:
//
//	<Instruction> Request <n>: <w1> <w2> ... <wk>
//
// and with k = 0 the text ends right after the colon:
//
//	<Instruction> Request <n>:
//
// There is no trailing space or newline in either case.
package prompt

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// Generator is the identifier recorded in results files for this generator.
// Any change to the instruction, the word list, the PRNG or the seeding
// formula requires a new identifier.
const Generator = "kovara-synthetic-v1"

// Instruction is the fixed sentence every prompt starts with. It is plain
// ASCII and never contains the substring "Request ", so the pattern
// `Request (\d+):` matches exactly once in every prompt.
const Instruction = "Write a long story that uses the following words."

// WordListSHA256 is the lowercase hex SHA-256 of the bytes of words.txt.
const WordListSHA256 = "49d3ee3b7caff6d7b6c5b5c74082d6b3d3a7e582c8ce40f7412d601a40585f24"

// Request-number scheme. Every request of a benchmark gets its own number so
// that no two prompts share more than the instruction:
//
//	0                      the compat probe
//	1..4                   calibration attempts (all four reserved, used or not)
//	5..5+W-1               the W warmup requests
//	5+W ...                measured requests, level by level in plan order,
//	                       consecutively within and across levels
//
// The numbers depend only on the plan, never on how calibration went.
const (
	// ProbeRequest is the request number of the compat probe.
	ProbeRequest int64 = 0
	// CalibrationAttempts is how many request numbers are reserved for
	// calibration, whether or not all are used.
	CalibrationAttempts = 4
	// FirstWarmupRequest is the number of the first warmup request.
	FirstWarmupRequest int64 = 1 + CalibrationAttempts
)

// CalibrationRequest returns the request number of calibration attempt
// attempt (0-based, 0..3): 1, 2, 3 or 4.
func CalibrationRequest(attempt int) int64 {
	if attempt < 0 || attempt >= CalibrationAttempts {
		panic(fmt.Sprintf("prompt: calibration attempt %d outside 0..%d", attempt, CalibrationAttempts-1))
	}
	return 1 + int64(attempt)
}

// WarmupRequest returns the request number of warmup request i (0-based).
func WarmupRequest(i int) int64 {
	if i < 0 {
		panic(fmt.Sprintf("prompt: negative warmup index %d", i))
	}
	return FirstWarmupRequest + int64(i)
}

// MeasuredRequest returns the request number of measured request i (0-based)
// of the level at index level (0-based, in plan order), for a plan with
// warmup warmup requests and requestsPerLevel requests in every level.
func MeasuredRequest(warmup, requestsPerLevel, level, i int) int64 {
	if warmup < 0 || requestsPerLevel < 0 || level < 0 || i < 0 || i >= requestsPerLevel {
		panic(fmt.Sprintf("prompt: invalid measured request (warmup %d, per level %d, level %d, index %d)",
			warmup, requestsPerLevel, level, i))
	}
	return FirstWarmupRequest + int64(warmup) + int64(level)*int64(requestsPerLevel) + int64(i)
}

// SplitMix64 constants (Steele, Lea and Flood, 2014) and the odd multiplier
// that spreads the request number over all 64 bits before it is combined
// with the seed.
const (
	golden     = 0x9E3779B97F4A7C15 // state increment
	mixMul1    = 0xBF58476D1CE4E5B9
	mixMul2    = 0x94D049BB133111EB
	requestMul = 0xD1B54A32D192ED03
)

// listSize is the number of words; a power of two so that the top bits of a
// PRNG output index the list without modulo bias.
const (
	listSize  = 1024
	indexBits = 10 // log2(listSize)
	maxWord   = 10 // longest word, in bytes
)

//go:embed words.txt
var wordsFile string

var list = mustParseList(wordsFile)

// mustParseList splits words.txt and checks every property the generator
// relies on. A violation is a build mistake, so it panics at init.
func mustParseList(file string) *[listSize]string {
	sum := sha256.Sum256([]byte(file))
	if got := hex.EncodeToString(sum[:]); got != WordListSHA256 {
		panic("prompt: words.txt SHA-256 is " + got + ", want " + WordListSHA256)
	}
	if !strings.HasSuffix(file, "\n") {
		panic("prompt: words.txt must end with a line feed")
	}
	lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
	if len(lines) != listSize {
		panic(fmt.Sprintf("prompt: words.txt has %d words, want %d", len(lines), listSize))
	}
	var out [listSize]string
	seen := make(map[string]bool, listSize)
	for i, w := range lines {
		if len(w) < 2 || len(w) > maxWord {
			panic(fmt.Sprintf("prompt: word %d %q is not 2-%d letters", i+1, w, maxWord))
		}
		for j := 0; j < len(w); j++ {
			if w[j] < 'a' || w[j] > 'z' {
				panic(fmt.Sprintf("prompt: word %d %q is not lowercase ASCII letters", i+1, w))
			}
		}
		if seen[w] {
			panic(fmt.Sprintf("prompt: word %q appears twice", w))
		}
		seen[w] = true
		out[i] = w
	}
	return &out
}

// mix64 is the SplitMix64 output function (a bijection on uint64).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * mixMul1
	z = (z ^ (z >> 27)) * mixMul2
	return z ^ (z >> 31)
}

// splitmix64 is the generator state.
type splitmix64 struct{ state uint64 }

// newStream returns the generator for (seed, n):
//
//	state0 = mix64( mix64(uint64(seed)) XOR (uint64(n) * 0xD1B54A32D192ED03) )
//
// with all arithmetic modulo 2^64. The inner mix64 scrambles the seed, the
// odd multiplier spreads n over all bits, and the outer mix64 decorrelates
// neighbouring request numbers so their streams do not overlap in practice.
// Both steps are bijections, so for one seed distinct n give distinct states.
func newStream(seed, n int64) splitmix64 {
	return splitmix64{state: mix64(mix64(uint64(seed)) ^ (uint64(n) * requestMul))}
}

// next advances the state and returns the next 64-bit output.
func (s *splitmix64) next() uint64 {
	s.state += golden
	return mix64(s.state)
}

// header is everything between the instruction and the request number.
const header = Instruction + " Request "

// maxLen bounds the length of a text with the given word count, for
// pre-sizing buffers. It returns 0 for word counts too large to bound
// sensibly, letting append grow the buffer instead.
func maxLen(words int) int {
	const fixed = len(header) + 20 + 1 // up to 19 digits, and the colon
	if words > 1<<24 {
		return 0
	}
	return fixed + words*(1+maxWord)
}

func checkArgs(n int64, words int) {
	if n < 0 {
		panic(fmt.Sprintf("prompt: negative request number %d", n))
	}
	if words < 0 {
		panic(fmt.Sprintf("prompt: negative word count %d", words))
	}
}

// AppendText appends the prompt for (seed, n, words) to dst and returns the
// extended slice. It grows dst at most once and allocates nothing per word;
// with enough spare capacity in dst it allocates nothing at all.
//
// n must be a non-negative request number and words a non-negative word
// count; otherwise AppendText panics.
func AppendText(dst []byte, seed int64, n int64, words int) []byte {
	checkArgs(n, words)
	if need := maxLen(words); cap(dst)-len(dst) < need {
		grown := make([]byte, len(dst), len(dst)+need)
		copy(grown, dst)
		dst = grown
	}
	dst = append(dst, header...)
	dst = strconv.AppendInt(dst, n, 10)
	dst = append(dst, ':')
	s := newStream(seed, n)
	for range words {
		dst = append(dst, ' ')
		dst = append(dst, list[s.next()>>(64-indexBits)]...)
	}
	return dst
}

// AppendWords appends words synthetic words drawn from (seed, n), each
// after a space, without the prompt's header: the text of a block of a
// replayed trace's prompt, which makes its own length and must carry
// nothing else (engine/replay.go). The words are AppendText's for the
// same seed and n.
func AppendWords(dst []byte, seed int64, n int64, words int) []byte {
	checkArgs(n, words)
	s := newStream(seed, n)
	for range words {
		dst = append(dst, ' ')
		dst = append(dst, list[s.next()>>(64-indexBits)]...)
	}
	return dst
}

// Text returns the prompt for (seed, n, words); see AppendText.
func Text(seed int64, n int64, words int) string {
	checkArgs(n, words)
	b := AppendText(make([]byte, 0, maxLen(words)), seed, n, words)
	// b is never modified after this point, so sharing its bytes is safe.
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Words returns a copy of the word list, in file order.
func Words() []string {
	return slices.Clone(list[:])
}
