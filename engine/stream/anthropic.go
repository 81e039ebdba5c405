package stream

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// DecodeAnthropic parses one event of an Anthropic Messages stream (as
// llama-server and Ollama serve /v1/messages) into c, as Decode does a
// chat.completion.chunk: a content_block_delta with text is Content (a
// thinking delta Reasoning), a whole answer ("type": "message") its
// usage, message_start says the prompt's tokens in
// its usage, message_delta the answer's and its stop_reason (a finish;
// "max_tokens" a length stop), an error event its message. Anthropic
// counts the prompt's tokens read from and written to its cache apart
// from input_tokens, so PromptTokens is their sum and CachedTokens the
// ones read. HasUsage is set where a usage with a prompt count came;
// a message_delta without one leaves PromptTokens 0 (the caller keeps
// message_start's). done reports message_stop, the stream's end. It
// allocates; the Messages API is replayed, not the method's hot path.
func DecodeAnthropic(data []byte, c *Chunk) (done bool, err error) {
	*c = Chunk{}
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Usage *anthropicUsage `json:"usage"`
		} `json:"message"`
		Usage *anthropicUsage `json:"usage"`
		Delta struct {
			Type       string  `json:"type"`
			Text       string  `json:"text"`
			Thinking   string  `json:"thinking"`
			JSON       string  `json:"partial_json"`
			StopReason *string `json:"stop_reason"`
		} `json:"delta"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return false, fmt.Errorf("%w: %v", ErrMalformedChunk, err)
	}
	switch e.Type {
	case "message": // a whole (not streamed) answer
		usageOf(e.Usage, c)
		c.Content = true
	case "message_start":
		usageOf(e.Message.Usage, c)
	case "content_block_delta":
		c.Content = e.Delta.Text != "" || e.Delta.JSON != ""
		c.Reasoning = e.Delta.Thinking != ""
	case "message_delta":
		usageOf(e.Usage, c)
		if r := e.Delta.StopReason; r != nil && *r != "" {
			c.FinishReason = true
			c.FinishLength = *r == "max_tokens"
		}
	case "message_stop":
		return true, nil
	case "error":
		c.Error = true
		if e.Error != nil {
			c.ErrorMessage = clipUTF8(e.Error.Message, maxErrorMessage)
		}
	}
	return false, nil
}

type anthropicUsage struct {
	Input       *int `json:"input_tokens"`
	Output      *int `json:"output_tokens"`
	CacheRead   *int `json:"cache_read_input_tokens"`
	CacheCreate *int `json:"cache_creation_input_tokens"`
}

func usageOf(u *anthropicUsage, c *Chunk) {
	if u == nil || (u.Input == nil && u.Output == nil) {
		return
	}
	c.HasUsage = true
	if u.Input != nil {
		c.PromptTokens = *u.Input
	}
	if u.CacheRead != nil {
		c.PromptTokens += *u.CacheRead
		c.HasCached, c.CachedTokens = true, *u.CacheRead
	}
	if u.CacheCreate != nil {
		c.PromptTokens += *u.CacheCreate
	}
	if u.Output != nil {
		c.CompletionTokens = *u.Output
	}
}

// clipUTF8 is s cut to at most n bytes on a character's boundary.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// AppendAnthropicText is AppendContent for an Anthropic Messages event:
// the text of a content_block_delta appended JSON-escaped, as the body of
// a JSON string, so a stream's pieces put together are one string's
// body. Any other event appends nothing.
func AppendAnthropicText(dst, data []byte) []byte {
	var e struct {
		Type  string `json:"type"`
		Delta struct {
			Text string `json:"text"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &e) != nil || e.Type != "content_block_delta" || e.Delta.Text == "" {
		return dst
	}
	q, err := json.Marshal(e.Delta.Text)
	if err != nil || len(q) < 2 {
		return dst
	}
	return append(dst, q[1:len(q)-1]...)
}
