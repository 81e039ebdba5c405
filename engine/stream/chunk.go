package stream

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// ErrMalformedChunk is wrapped by every error Decode returns for input that
// is not a JSON object: bad syntax, trailing bytes, another top-level type.
var ErrMalformedChunk = errors.New("stream: malformed chunk")

// ErrBadCount is wrapped by the error Decode returns for a well-formed
// chunk whose token count (usage.*_tokens, timings.*_n) is not a
// non-negative whole number that fits in an int. The engine treats it like
// any other decode error: the stream is malformed.
var ErrBadCount = errors.New("stream: bad token count")

// maxErrorMessage is how many bytes of a server's error message are kept.
const maxErrorMessage = 200

// maxDepth matches encoding/json's nesting limit, so both accept the same
// documents.
const maxDepth = 10000

// Chunk is what the benchmark needs from one chat.completion.chunk. Where a
// key appears twice in one object, the last one counts, as with
// encoding/json.
type Chunk struct {
	// Content: some choice has a non-empty string delta.content, or a
	// non-empty string text (legacy completions).
	Content bool
	// Reasoning: some choice has a non-empty string
	// delta.reasoning_content or delta.reasoning.
	Reasoning bool
	// FinishReason: some choice has a finish_reason that is neither null
	// nor the empty string.
	FinishReason bool
	// FinishLength: some choice's finish_reason is "length": the server
	// stopped the answer at a length limit (max_tokens, or its context).
	FinishLength bool

	// HasUsage: a usage object with a non-null completion_tokens.
	HasUsage         bool
	PromptTokens     int // usage.prompt_tokens, 0 when absent or null
	CompletionTokens int // usage.completion_tokens
	// HasCached: usage.prompt_tokens_details.cached_tokens was a number
	// (llama.cpp, SGLang, vLLM with --enable-prompt-tokens-details): how
	// many prompt tokens the server took from its prompt cache.
	HasCached    bool
	CachedTokens int

	// Error: a top-level "error" whose value is neither null nor false,
	// or a top-level "object": "error" (vLLM's older error shape).
	Error bool
	// ErrorMessage is error.message, the error itself when it is a
	// string, or the top-level message of an "object": "error" body; at
	// most 200 bytes, cut on a UTF-8 boundary.
	ErrorMessage string

	// HasTimings: a llama.cpp top-level "timings" object.
	HasTimings        bool
	TimingsPredictedN int // timings.predicted_n
	TimingsPromptN    int // timings.prompt_n: prompt tokens evaluated
	// HasCacheN: timings.cache_n was a number, the prompt tokens llama.cpp
	// reused from its cache (prompt_n counts only the rest).
	HasCacheN     bool
	TimingsCacheN int
	// HasDraft: timings.draft_n was a number (llama.cpp speculative
	// decoding): tokens drafted for this answer and how many were accepted.
	HasDraft             bool
	TimingsDraftN        int
	TimingsDraftAccepted int
}

// Decode parses one chunk into c, overwriting it. The whole input is
// checked against JSON's grammar; anything but a single well-formed object
// is an error wrapping ErrMalformedChunk, and a token count that is not a
// whole number is an error wrapping ErrBadCount. On error c is zeroed.
// Decode allocates only to build an error or an ErrorMessage.
func Decode(data []byte, c *Chunk) error {
	*c = Chunk{}
	s := scanner{b: data}
	err := s.document(c)
	if err == nil {
		err = s.badCount
	}
	if err != nil {
		*c = Chunk{}
		return err
	}
	return nil
}

// Key names the scanner acts on. Every object key is mapped to one of these
// (or keyOther) once, whatever object it is in.
const (
	keyOther = iota
	keyChoices
	keyDelta
	keyContent
	keyReasoningContent
	keyReasoning
	keyFinishReason
	keyText
	keyUsage
	keyPromptTokens
	keyCompletionTokens
	keyError
	keyMessage
	keyObject
	keyTimings
	keyPredictedN
	keyPromptN
	keyPromptTokensDetails
	keyCachedTokens
	keyCacheN
	keyDraftN
	keyDraftNAccepted
)

func keyID(k []byte) int {
	switch string(k) {
	case "choices":
		return keyChoices
	case "delta":
		return keyDelta
	case "content":
		return keyContent
	case "reasoning_content":
		return keyReasoningContent
	case "reasoning":
		return keyReasoning
	case "finish_reason":
		return keyFinishReason
	case "text":
		return keyText
	case "usage":
		return keyUsage
	case "prompt_tokens":
		return keyPromptTokens
	case "completion_tokens":
		return keyCompletionTokens
	case "error":
		return keyError
	case "message":
		return keyMessage
	case "object":
		return keyObject
	case "timings":
		return keyTimings
	case "predicted_n":
		return keyPredictedN
	case "prompt_n":
		return keyPromptN
	case "prompt_tokens_details":
		return keyPromptTokensDetails
	case "cached_tokens":
		return keyCachedTokens
	case "cache_n":
		return keyCacheN
	case "draft_n":
		return keyDraftN
	case "draft_n_accepted":
		return keyDraftNAccepted
	}
	return keyOther
}

// span is a string's raw bytes between its quotes; ok is false when the
// value was not a string.
type span struct {
	start, end int
	ok         bool
}

// scanner walks one JSON document. Methods that read a value expect i at
// the value's first byte (whitespace already skipped) and leave i just past
// it.
type scanner struct {
	b        []byte
	i        int
	depth    int
	length   bool  // a choice's finish_reason was "length"
	badCount error // first bad token count; syntax errors take precedence
	keyBuf   [24]byte
}

func (s *scanner) syntaxError(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformedChunk, what, s.i)
}

func (s *scanner) unexpected() error {
	if s.i >= len(s.b) {
		return s.syntaxError("unexpected end of input")
	}
	return s.syntaxError(fmt.Sprintf("unexpected %q", s.b[s.i]))
}

// peek returns the byte at i, or 0 at the end of input (0 starts no value).
func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) document(c *Chunk) error {
	s.ws()
	if s.peek() != '{' {
		if err := s.skip(); err != nil {
			return err
		}
		s.ws()
		if s.i != len(s.b) {
			return s.syntaxError("data after the top-level value")
		}
		return fmt.Errorf("%w: top-level value is not an object", ErrMalformedChunk)
	}
	var errMsg, topMsg span
	var errKey, objectIsError bool
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		switch k {
		case keyChoices:
			s.length = false // the last choices member counts, as encoding/json's
			c.Content, c.Reasoning, c.FinishReason, err = s.choices()
			c.FinishLength = s.length
		case keyUsage:
			err = s.usage(c)
		case keyTimings:
			err = s.timings(c)
		case keyError:
			errKey, errMsg, err = s.errorValue()
		case keyObject:
			objectIsError, err = s.stringEquals("error")
		case keyMessage:
			topMsg, err = s.stringSpan()
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	s.ws()
	if s.i != len(s.b) {
		return s.syntaxError("data after the top-level object")
	}
	c.Error = errKey || objectIsError
	switch {
	case errKey && errMsg.ok:
		c.ErrorMessage = s.message(errMsg)
	case !errKey && objectIsError && topMsg.ok:
		c.ErrorMessage = s.message(topMsg)
	}
	return nil
}

// choices reads the top-level choices value. Anything but an array counts
// as no choices.
func (s *scanner) choices() (content, reasoning, finish bool, err error) {
	if s.peek() != '[' {
		return false, false, false, s.skip()
	}
	more, err := s.more(']', true)
	for ; more; more, err = s.more(']', false) {
		if s.peek() == '{' {
			var cc, cr, cf bool
			cc, cr, cf, err = s.choice()
			content, reasoning, finish = content || cc, reasoning || cr, finish || cf
		} else {
			err = s.skip()
		}
		if err != nil {
			return false, false, false, err
		}
	}
	return content, reasoning, finish, err
}

func (s *scanner) choice() (content, reasoning, finish bool, err error) {
	var deltaContent, text bool
	isLength := false // this choice's last finish_reason is "length"
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		switch k {
		case keyDelta:
			if s.peek() == '{' {
				deltaContent, reasoning, err = s.delta()
			} else {
				deltaContent, reasoning, err = false, false, s.skip()
			}
		case keyText:
			text, err = s.nonEmptyString()
		case keyFinishReason:
			isLength = false
			switch s.peek() {
			case 'n':
				finish, err = false, s.skip()
			case '"':
				var start, end int
				var esc bool
				start, end, esc, err = s.str()
				finish = err == nil && end > start
				// Compared in place: the hot path allocates nothing.
				if !esc {
					isLength = finish && string(s.b[start:end]) == "length"
				} else {
					n, ok := unescapeASCII(s.keyBuf[:], s.b[start:end])
					isLength = ok && string(s.keyBuf[:n]) == "length"
				}
			default:
				finish, err = true, s.skip()
			}
		default:
			err = s.skip()
		}
		if err != nil {
			return false, false, false, err
		}
	}
	s.length = s.length || isLength
	return deltaContent || text, reasoning, finish, err
}

func (s *scanner) delta() (content, reasoning bool, err error) {
	var rc, r bool
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		switch k {
		case keyContent:
			content, err = s.nonEmptyString()
		case keyReasoningContent:
			rc, err = s.nonEmptyString()
		case keyReasoning:
			r, err = s.nonEmptyString()
		default:
			err = s.skip()
		}
		if err != nil {
			return false, false, err
		}
	}
	return content, rc || r, err
}

// usage reads a usage object into c's usage fields (a later usage key
// replaces an earlier one, as with encoding/json).
func (s *scanner) usage(c *Chunk) error {
	c.HasUsage, c.PromptTokens, c.CompletionTokens, c.HasCached, c.CachedTokens = false, 0, 0, false, 0
	if s.peek() != '{' {
		return s.skip()
	}
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		switch k {
		case keyPromptTokens:
			c.PromptTokens, _, err = s.count("usage.prompt_tokens")
		case keyCompletionTokens:
			c.CompletionTokens, c.HasUsage, err = s.count("usage.completion_tokens")
		case keyPromptTokensDetails:
			c.HasCached, c.CachedTokens, err = s.promptDetails()
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
	return err
}

// promptDetails reads usage.prompt_tokens_details for its cached_tokens.
func (s *scanner) promptDetails() (has bool, cached int, err error) {
	if s.peek() != '{' {
		return false, 0, s.skip()
	}
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		if k == keyCachedTokens {
			cached, has, err = s.count("usage.prompt_tokens_details.cached_tokens")
		} else {
			err = s.skip()
		}
		if err != nil {
			return false, 0, err
		}
	}
	return has, cached, err
}

// timings reads llama.cpp's timings object into c's timings fields.
func (s *scanner) timings(c *Chunk) error {
	c.HasTimings, c.TimingsPredictedN, c.TimingsPromptN = false, 0, 0
	c.HasCacheN, c.TimingsCacheN = false, 0
	c.HasDraft, c.TimingsDraftN, c.TimingsDraftAccepted = false, 0, 0
	if s.peek() != '{' {
		return s.skip()
	}
	c.HasTimings = true
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		switch k {
		case keyPredictedN:
			c.TimingsPredictedN, _, err = s.count("timings.predicted_n")
		case keyPromptN:
			c.TimingsPromptN, _, err = s.count("timings.prompt_n")
		case keyCacheN:
			c.TimingsCacheN, c.HasCacheN, err = s.count("timings.cache_n")
		case keyDraftN:
			c.TimingsDraftN, c.HasDraft, err = s.count("timings.draft_n")
		case keyDraftNAccepted:
			c.TimingsDraftAccepted, _, err = s.count("timings.draft_n_accepted")
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
	return err
}

// errorValue reads the value of a top-level "error" key.
func (s *scanner) errorValue() (isError bool, msg span, err error) {
	switch s.peek() {
	case 'n', 'f':
		return false, span{}, s.skip()
	case '"':
		msg, err = s.stringSpan()
		return true, msg, err
	case '{':
	default:
		return true, span{}, s.skip()
	}
	k, more, err := s.member(true)
	for ; more; k, more, err = s.member(false) {
		if k == keyMessage {
			msg, err = s.stringSpan()
		} else {
			err = s.skip()
		}
		if err != nil {
			return false, span{}, err
		}
	}
	return true, msg, err
}

// message decodes a string span for ErrorMessage. This is the rare path, so
// it leans on encoding/json for the unescaping.
func (s *scanner) message(sp span) string {
	var m string
	if err := json.Unmarshal(s.b[sp.start-1:sp.end+1], &m); err != nil {
		return "" // cannot happen: the span was validated
	}
	if len(m) > maxErrorMessage {
		n := maxErrorMessage
		for n > 0 && !utf8.RuneStart(m[n]) {
			n--
		}
		m = m[:n]
	}
	return m
}

// count reads a token count: null gives (0, false); a non-negative whole
// number gives (n, true); anything else records ErrBadCount and gives
// (0, false) so that scanning (and syntax checking) goes on.
func (s *scanner) count(field string) (int, bool, error) {
	c := s.peek()
	if c == 'n' {
		return 0, false, s.skip()
	}
	start := s.i
	if c != '-' && (c < '0' || c > '9') {
		if err := s.skip(); err != nil {
			return 0, false, err
		}
		s.noteBadCount(field, start)
		return 0, false, nil
	}
	plain, err := s.number()
	if err != nil {
		return 0, false, err
	}
	raw := s.b[start:s.i]
	if plain {
		n := 0
		for _, d := range raw {
			v := int(d - '0')
			if n > (math.MaxInt-v)/10 {
				s.noteBadCount(field, start)
				return 0, false, nil
			}
			n = n*10 + v
		}
		return n, true, nil
	}
	// 12.0, 1.2e1, -0: rare, so a string conversion is acceptable here.
	f, perr := strconv.ParseFloat(string(raw), 64)
	if perr != nil || f < 0 || f != math.Trunc(f) || f > 1<<53 {
		s.noteBadCount(field, start)
		return 0, false, nil
	}
	return int(f), true, nil
}

func (s *scanner) noteBadCount(field string, start int) {
	if s.badCount == nil {
		raw := s.b[start:s.i]
		if len(raw) > 40 {
			raw = raw[:40]
		}
		s.badCount = fmt.Errorf("%w: %s is %s", ErrBadCount, field, raw)
	}
}

// nonEmptyString reports whether the value is a string with at least one
// character. Any escape decodes to at least one character, so the raw
// length decides.
func (s *scanner) nonEmptyString() (bool, error) {
	sp, err := s.stringSpan()
	return sp.ok && sp.end > sp.start, err
}

// stringSpan returns the raw span of a string value; for any other value
// it validates it and returns a span with ok false.
func (s *scanner) stringSpan() (span, error) {
	if s.peek() != '"' {
		return span{}, s.skip()
	}
	start, end, _, err := s.str()
	return span{start: start, end: end, ok: err == nil}, err
}

// stringEquals reports whether the value is a string equal to want once
// unescaped. want must be ASCII and at most len(keyBuf) bytes.
func (s *scanner) stringEquals(want string) (bool, error) {
	if s.peek() != '"' {
		return false, s.skip()
	}
	start, end, esc, err := s.str()
	if err != nil {
		return false, err
	}
	if !esc {
		return string(s.b[start:end]) == want, nil
	}
	n, ok := unescapeASCII(s.keyBuf[:], s.b[start:end])
	return ok && string(s.keyBuf[:n]) == want, nil
}

// key reads an object key and the colon after it and returns its keyID,
// leaving i at the start of the member's value.
func (s *scanner) key() (int, error) {
	if s.peek() != '"' {
		return 0, s.syntaxError("expected a string key")
	}
	start, end, esc, err := s.str()
	if err != nil {
		return 0, err
	}
	id := keyOther
	if !esc {
		id = keyID(s.b[start:end])
	} else if n, ok := unescapeASCII(s.keyBuf[:], s.b[start:end]); ok {
		id = keyID(s.keyBuf[:n])
	}
	s.ws()
	if s.peek() != ':' {
		return 0, s.syntaxError("expected ':' after key")
	}
	s.i++
	s.ws()
	return id, nil
}

// unescapeASCII decodes a validated string body into dst. It gives up
// (false) when the result would not fit or would not be ASCII, since no
// key or value the scanner compares against is either.
func unescapeASCII(dst, raw []byte) (int, bool) {
	n := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' {
			i++
			switch raw[i] {
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				v := 0
				for _, h := range raw[i+1 : i+5] {
					v = v<<4 | int(hexValue[h])
				}
				if v >= utf8.RuneSelf {
					return 0, false
				}
				c = byte(v)
				i += 4
			default: // '"', '\\', '/'
				c = raw[i]
			}
		} else if c >= utf8.RuneSelf {
			return 0, false
		}
		if n == len(dst) {
			return 0, false
		}
		dst[n] = c
		n++
	}
	return n, true
}

// more steps through an object or array whose closing byte is close ('}'
// or ']'): from its opening byte when first, else from just past a member's
// value. It reports whether a member follows, leaving i at it, or moves past
// close and reports false.
func (s *scanner) more(close byte, first bool) (bool, error) {
	if first {
		s.depth++
		if s.depth > maxDepth {
			return false, s.syntaxError("nesting too deep")
		}
		s.i++
		s.ws()
		if s.peek() != close {
			return true, nil
		}
	} else {
		s.ws()
		if s.peek() == ',' {
			s.i++
			s.ws()
			return true, nil
		}
		if s.peek() != close {
			return false, s.syntaxError("expected ',' or '" + string(close) + "'")
		}
	}
	s.i++
	s.depth--
	return false, nil
}

// member is more for an object, and reads the following member's key: it
// returns the key's keyID with i at the member's value.
func (s *scanner) member(first bool) (k int, ok bool, err error) {
	if ok, err = s.more('}', first); ok {
		k, err = s.key()
	}
	return k, ok && err == nil, err
}

// skip validates one value of any kind without looking inside it.
func (s *scanner) skip() error {
	switch c := s.peek(); {
	case c == '{':
		_, more, err := s.member(true)
		for ; more; _, more, err = s.member(false) {
			if err = s.skip(); err != nil {
				return err
			}
		}
		return err
	case c == '[':
		more, err := s.more(']', true)
		for ; more; more, err = s.more(']', false) {
			if err = s.skip(); err != nil {
				return err
			}
		}
		return err
	case c == '"':
		_, _, _, err := s.str()
		return err
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := s.number()
		return err
	}
	return s.unexpected()
}

func (s *scanner) literal(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.syntaxError("invalid literal")
	}
	s.i += len(word)
	return nil
}

// number validates a JSON number. plain reports a bare run of digits (no
// sign, fraction or exponent).
func (s *scanner) number() (plain bool, err error) {
	b, i := s.b, s.i
	plain = true
	if i < len(b) && b[i] == '-' {
		plain = false
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		s.i = i
		return false, s.syntaxError("invalid number")
	}
	if i < len(b) && b[i] == '.' {
		plain = false
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			return false, s.syntaxError("invalid number")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		plain = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			return false, s.syntaxError("invalid number")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	s.i = i
	return plain, nil
}

// str validates a string starting at i (the opening quote) and returns the
// bounds of its body and whether it holds escapes.
func (s *scanner) str() (start, end int, escaped bool, err error) {
	b := s.b
	i := s.i + 1
	start = i
	for {
		for i < len(b) && plainStringByte[b[i]] {
			i++
		}
		if i >= len(b) {
			s.i = i
			return 0, 0, false, s.syntaxError("unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return start, i, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				s.i = i + 1
				return 0, 0, false, s.syntaxError("unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					s.i = len(b)
					return 0, 0, false, s.syntaxError("short \\u escape")
				}
				for _, h := range b[i+2 : i+6] {
					if hexValue[h] == 0xFF {
						s.i = i
						return 0, 0, false, s.syntaxError("invalid \\u escape")
					}
				}
				i += 6
			default:
				s.i = i
				return 0, 0, false, s.syntaxError("invalid escape")
			}
		default: // a control character
			s.i = i
			return 0, 0, false, s.syntaxError("control character in string")
		}
	}
}

// plainStringByte marks bytes that may appear unescaped in a JSON string
// and need no attention: not '"', not '\\', not below 0x20.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hexValue maps a hex digit to its value and every other byte to 0xFF.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()
