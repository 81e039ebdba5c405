package stream

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Ollama 0.24's Anthropic Messages stream, as captured for the recording
// proxy (record/testdata/SOURCES.md): twelve text deltas, the prompt's
// 27 tokens in message_delta (message_start's 12 was an early guess),
// max_tokens as the stop, message_stop the end.
func TestDecodeAnthropicCaptured(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "record", "testdata", "ollama_messages_stream.body"))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(bytes.NewReader(raw), nil, 0)
	var c Chunk
	texts, prompt, answer, done, lengthStop := 0, 0, 0, false, false
	var body []byte
	for r.Next() {
		body = AppendAnthropicText(body, r.Data())
		d, err := DecodeAnthropic(r.Data(), &c)
		if err != nil {
			t.Fatalf("%q: %v", r.Data(), err)
		}
		if c.Content {
			texts++
		}
		if c.HasUsage {
			if c.PromptTokens > 0 {
				prompt = c.PromptTokens
			}
			answer = c.CompletionTokens
		}
		lengthStop = lengthStop || c.FinishLength
		done = done || d
	}
	if texts != 12 || prompt != 27 || answer != 12 || !done || !lengthStop {
		t.Errorf("%d texts, %d prompt and %d answer tokens, done %v, length stop %v; want 12, 27, 12, true, true", texts, prompt, answer, done, lengthStop)
	}
	// The pieces put together are one JSON string's body: the answer of
	// the whole (not streamed) capture, word for word.
	whole, err := os.ReadFile(filepath.Join("..", "..", "record", "testdata", "ollama_messages_whole.body"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(whole, append(append([]byte(`"text":"`), body...), '"')) {
		t.Errorf("the streamed text %q is not the whole answer's (%s)", body, whole)
	}
	for _, bad := range []string{`{`, `[1]`, `"x"`} {
		if _, err := DecodeAnthropic([]byte(bad), &c); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
	if _, err := DecodeAnthropic([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), &c); err != nil || !c.Error || c.ErrorMessage != "Overloaded" {
		t.Errorf("an error event: %+v %v", c, err)
	}
	if _, err := DecodeAnthropic([]byte(`{"type":"message_start","message":{"usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}`), &c); err != nil || c.PromptTokens != 105 || c.CachedTokens != 100 {
		t.Errorf("cache read: %+v %v", c, err)
	}
}
