package stream

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// FastJSONDecoder decodes a chunk with github.com/valyala/fastjson and a
// reused parser, filling the same Chunk under the same rules as Decode. It
// exists to measure the library against the scanner (docs/performance.md).
// It is not safe for concurrent use.
type FastJSONDecoder struct {
	// Strict validates the grammar first (fastjson.Validate): fastjson's
	// parser alone accepts NaN, 01, 1., raw control characters and bad
	// escapes, which Decode rejects.
	Strict bool

	p   fastjson.Parser
	bad error
	buf []byte
}

// Decode parses one chunk into c, as Decode does.
func (d *FastJSONDecoder) Decode(data []byte, c *Chunk) error {
	*c = Chunk{}
	d.bad = nil
	if d.Strict {
		if err := fastjson.ValidateBytes(data); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformedChunk, err)
		}
	}
	v, err := d.p.ParseBytes(data)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedChunk, err)
	}
	if v.Type() != fastjson.TypeObject {
		return fmt.Errorf("%w: top-level value is not an object", ErrMalformedChunk)
	}
	var topMsg *fastjson.Value
	var errMsg string
	var errKey, objectIsError bool
	v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "choices":
			c.Content, c.Reasoning, c.FinishReason = d.choices(v)
		case "usage":
			d.usage(v, c)
		case "timings":
			d.timings(v, c)
		case "error":
			errKey, errMsg = d.errorValue(v)
		case "object":
			objectIsError = v.Type() == fastjson.TypeString && string(v.GetStringBytes()) == "error"
		case "message":
			topMsg = v
		}
	})
	if d.bad != nil {
		*c = Chunk{}
		return d.bad
	}
	c.Error = errKey || objectIsError
	switch {
	case errKey:
		c.ErrorMessage = errMsg
	case objectIsError && topMsg != nil:
		c.ErrorMessage, _ = d.message(topMsg)
	}
	return nil
}

func (d *FastJSONDecoder) choices(v *fastjson.Value) (content, reasoning, finish bool) {
	if v.Type() != fastjson.TypeArray {
		return false, false, false
	}
	for _, el := range v.GetArray() {
		if el.Type() != fastjson.TypeObject {
			continue
		}
		cc, cr, cf := d.choice(el)
		content, reasoning, finish = content || cc, reasoning || cr, finish || cf
	}
	return content, reasoning, finish
}

func (d *FastJSONDecoder) choice(v *fastjson.Value) (content, reasoning, finish bool) {
	var deltaContent, text bool
	v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "delta":
			deltaContent, reasoning = false, false
			if v.Type() == fastjson.TypeObject {
				deltaContent, reasoning = d.delta(v)
			}
		case "text":
			text = nonEmptyValue(v)
		case "finish_reason":
			switch v.Type() {
			case fastjson.TypeNull:
				finish = false
			case fastjson.TypeString:
				finish = nonEmptyValue(v)
			default:
				finish = true
			}
		}
	})
	return deltaContent || text, reasoning, finish
}

func (d *FastJSONDecoder) delta(v *fastjson.Value) (content, reasoning bool) {
	var rc, r bool
	v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "content":
			content = nonEmptyValue(v)
		case "reasoning_content":
			rc = nonEmptyValue(v)
		case "reasoning":
			r = nonEmptyValue(v)
		}
	})
	return content, rc || r
}

func (d *FastJSONDecoder) usage(v *fastjson.Value, c *Chunk) {
	c.HasUsage, c.PromptTokens, c.CompletionTokens, c.HasCached, c.CachedTokens = false, 0, 0, false, 0
	if v.Type() != fastjson.TypeObject {
		return
	}
	v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "prompt_tokens":
			c.PromptTokens, _ = d.count(v, "usage.prompt_tokens")
		case "completion_tokens":
			c.CompletionTokens, c.HasUsage = d.count(v, "usage.completion_tokens")
		case "prompt_tokens_details":
			c.HasCached, c.CachedTokens = false, 0
			if v.Type() == fastjson.TypeObject {
				v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
					if string(key) == "cached_tokens" {
						c.CachedTokens, c.HasCached = d.count(v, "usage.prompt_tokens_details.cached_tokens")
					}
				})
			}
		}
	})
}

func (d *FastJSONDecoder) timings(v *fastjson.Value, c *Chunk) {
	c.HasTimings, c.TimingsPredictedN, c.TimingsPromptN = false, 0, 0
	c.HasCacheN, c.TimingsCacheN = false, 0
	c.HasDraft, c.TimingsDraftN, c.TimingsDraftAccepted = false, 0, 0
	if v.Type() != fastjson.TypeObject {
		return
	}
	c.HasTimings = true
	v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "predicted_n":
			c.TimingsPredictedN, _ = d.count(v, "timings.predicted_n")
		case "prompt_n":
			c.TimingsPromptN, _ = d.count(v, "timings.prompt_n")
		case "cache_n":
			c.TimingsCacheN, c.HasCacheN = d.count(v, "timings.cache_n")
		case "draft_n":
			c.TimingsDraftN, c.HasDraft = d.count(v, "timings.draft_n")
		case "draft_n_accepted":
			c.TimingsDraftAccepted, _ = d.count(v, "timings.draft_n_accepted")
		}
	})
}

// errorValue reads a top-level "error": whether it marks an error, and its
// message.
func (d *FastJSONDecoder) errorValue(v *fastjson.Value) (bool, string) {
	if m, ok := d.message(v); ok {
		return true, m
	}
	switch v.Type() {
	case fastjson.TypeNull, fastjson.TypeFalse:
		return false, ""
	case fastjson.TypeObject:
	default:
		return true, ""
	}
	var msg *fastjson.Value
	v.GetObject().Visit(func(key []byte, v *fastjson.Value) {
		if string(key) == "message" {
			msg = v
		}
	})
	if msg == nil {
		return true, ""
	}
	m, _ := d.message(msg)
	return true, m
}

// message decodes a string value for ErrorMessage the way encoding/json
// does (fastjson unescapes lone surrogates and invalid UTF-8 differently);
// ok is false when v is not a string. It reads v's raw form, which is only
// there until v's type is first asked for (Type unescapes in place).
func (d *FastJSONDecoder) message(v *fastjson.Value) (string, bool) {
	d.buf = v.MarshalTo(d.buf[:0])
	if d.buf[0] != '"' {
		return "", false
	}
	var m string
	if err := json.Unmarshal(d.buf, &m); err != nil {
		return "", false
	}
	if len(m) > maxErrorMessage {
		n := maxErrorMessage
		for n > 0 && !utf8.RuneStart(m[n]) {
			n--
		}
		m = m[:n]
	}
	return m, true
}

func (d *FastJSONDecoder) count(v *fastjson.Value, field string) (int, bool) {
	switch v.Type() {
	case fastjson.TypeNull:
		return 0, false
	case fastjson.TypeNumber:
		if n, err := v.Int(); err == nil {
			if n >= 0 {
				return n, true
			}
		} else if f, err := v.Float64(); err == nil && f >= 0 && f == math.Trunc(f) && f <= 1<<53 {
			return int(f), true
		}
	}
	if d.bad == nil {
		raw := v.MarshalTo(d.buf[:0])
		if len(raw) > 40 {
			raw = raw[:40]
		}
		d.bad = fmt.Errorf("%w: %s is %s", ErrBadCount, field, raw)
	}
	return 0, false
}

// nonEmptyValue: a string with at least one character.
func nonEmptyValue(v *fastjson.Value) bool {
	return v.Type() == fastjson.TypeString && len(v.GetStringBytes()) > 0
}
