package stream

import (
	"math"
	"strconv"
)

// What the context plan (engine/context.go) reads from a chunk beyond
// Chunk: the answer's text, to send it back as the assistant's turn of a
// follow-up, and llama.cpp's own times and rates for the answer. Both are
// read only by a caller that asks, so Decode's hot path stays as it is:
// AppendContent for every text chunk of the few answers the plan keeps,
// DecodeTimings once per answer, on the chunk whose Chunk.HasTimings is
// set.

// AppendContent appends to dst the body of every non-empty string
// delta.content of data's choices, in order, exactly as it stands between
// the quotes: still JSON-escaped, so the bodies of a stream's chunks put
// together are the body of one valid JSON string holding the whole
// answer. data must be a chunk Decode accepted; anything else appends
// nothing more.
func AppendContent(dst, data []byte) []byte {
	s := scanner{b: data}
	s.ws()
	if s.peek() != '{' {
		return dst
	}
	out := dst
	err := s.members(func(k int) error {
		if k != keyChoices || s.peek() != '[' {
			return s.skip()
		}
		return s.elements(func() error {
			if s.peek() != '{' {
				return s.skip()
			}
			return s.members(func(k int) error {
				if k != keyDelta || s.peek() != '{' {
					return s.skip()
				}
				return s.members(func(k int) error {
					if k != keyContent || s.peek() != '"' {
						return s.skip()
					}
					sp, err := s.stringSpan()
					if err == nil {
						out = append(out, s.b[sp.start:sp.end]...)
					}
					return err
				})
			})
		})
	})
	if err != nil {
		return dst
	}
	return out
}

// members calls each for every member of the object at i, with i at the
// member's value; each must consume the value.
func (s *scanner) members(each func(k int) error) error {
	k, more, err := s.member(true)
	for more && err == nil {
		if err = each(k); err == nil {
			k, more, err = s.member(false)
		}
	}
	return err
}

// elements calls each for every element of the array at i.
func (s *scanner) elements(each func() error) error {
	more, err := s.more(']', true)
	for more && err == nil {
		if err = each(); err == nil {
			more, err = s.more(']', false)
		}
	}
	return err
}

// Timings is what llama.cpp says of one answer in its timings object:
// the prompt tokens it evaluated (prompt_n, the cached ones left out) and
// the time it took over them, and the tokens it generated and the time
// from the first to the last; with its own rates. A field the server
// left out, or sent as anything but a finite number, is 0.
type Timings struct {
	PromptN, PredictedN, CacheN         int
	PromptMs, PredictedMs               float64
	PromptPerSecond, PredictedPerSecond float64
}

// DecodeTimings reads the top-level timings object of a chunk Decode
// accepted; ok is false when there is none.
func DecodeTimings(data []byte) (t Timings, ok bool) {
	s := scanner{b: data}
	s.ws()
	if s.peek() != '{' {
		return t, false
	}
	err := s.members(func(k int) error {
		if k != keyTimings || s.peek() != '{' {
			return s.skip()
		}
		ok, t = true, Timings{}
		name, more, err := s.rawMember(true)
		for more && err == nil {
			var f float64
			if f, err = s.float(); err != nil {
				break
			}
			switch string(name) {
			case "prompt_n":
				t.PromptN = wholeOrZero(f)
			case "predicted_n":
				t.PredictedN = wholeOrZero(f)
			case "cache_n":
				t.CacheN = wholeOrZero(f)
			case "prompt_ms":
				t.PromptMs = f
			case "predicted_ms":
				t.PredictedMs = f
			case "prompt_per_second":
				t.PromptPerSecond = f
			case "predicted_per_second":
				t.PredictedPerSecond = f
			}
			name, more, err = s.rawMember(false)
		}
		return err
	})
	if err != nil {
		return Timings{}, false
	}
	return t, ok
}

func wholeOrZero(f float64) int {
	if f < 0 || f != math.Trunc(f) || f > 1<<53 {
		return 0
	}
	return int(f)
}

// rawMember is member for keys keyID does not name: the key's raw bytes
// (nil when it holds an escape, which no timings name does).
func (s *scanner) rawMember(first bool) (key []byte, ok bool, err error) {
	if ok, err = s.more('}', first); !ok || err != nil {
		return nil, false, err
	}
	if s.peek() != '"' {
		return nil, false, s.syntaxError("expected a string key")
	}
	start, end, esc, err := s.str()
	if err != nil {
		return nil, false, err
	}
	if !esc {
		key = s.b[start:end]
	}
	s.ws()
	if s.peek() != ':' {
		return nil, false, s.syntaxError("expected ':' after key")
	}
	s.i++
	s.ws()
	return key, true, nil
}

// float reads any value as a number: a finite JSON number gives its
// value, anything else (validated and skipped) 0.
func (s *scanner) float() (float64, error) {
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		return 0, s.skip()
	}
	start := s.i
	if _, err := s.number(); err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, nil
	}
	return f, nil
}
