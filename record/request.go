package record

import (
	"bytes"
	"encoding/json"

	"github.com/kovara/desktop/engine/trace"
)

// request is what the trace keeps of a request's body: its model and
// settings, and its prompt laid out as the server's template would meet
// it — the tools, the system prompt, then each message in turn — so the
// conversation's earlier turns are a prefix of its later ones. Only the
// prompt's block hashes leave this package.
type request struct {
	ok        bool
	model     string
	stream    bool
	maxTokens int
	prompt    []byte
	// ends are where each part of the prompt ends in it — the tools, the
	// system prompt, each message — for the trace's message ids.
	ends []int
}

// message is a chat message of any of the three APIs.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Images     json.RawMessage `json:"images"` // Ollama's
}

type body struct {
	Model               string `json:"model"`
	Stream              *bool  `json:"stream"`
	MaxTokens           *int   `json:"max_tokens"`
	MaxCompletionTokens *int   `json:"max_completion_tokens"`
	NPredict            *int   `json:"n_predict"`
	Options             struct {
		NumPredict *int `json:"num_predict"`
	} `json:"options"`
	Messages []message       `json:"messages"`
	System   json.RawMessage `json:"system"`
	Tools    json.RawMessage `json:"tools"`
	Prompt   json.RawMessage `json:"prompt"`
}

// parseRequest reads a request's body; ok is false where it is not a
// JSON object.
func parseRequest(api string, b []byte) request {
	var in body
	if len(bytes.TrimSpace(b)) == 0 || json.Unmarshal(b, &in) != nil {
		return request{}
	}
	r := request{ok: true, model: in.Model}
	// Ollama streams unless told not to; the others only when told to.
	r.stream = api == trace.APIOllamaChat || api == trace.APIOllamaGen
	if in.Stream != nil {
		r.stream = *in.Stream
	}
	for _, v := range []*int{in.MaxTokens, in.MaxCompletionTokens, in.NPredict, in.Options.NumPredict} {
		if v != nil && *v > 0 {
			r.maxTokens = *v
			break
		}
	}
	var p bytes.Buffer
	part := func(tag string, raw []byte) {
		if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
			return
		}
		p.WriteString(tag)
		p.WriteByte(0)
		p.Write(textOf(raw))
		p.WriteByte(0)
	}
	end := func() {
		if n := p.Len(); n > 0 && (len(r.ends) == 0 || r.ends[len(r.ends)-1] != n) {
			r.ends = append(r.ends, n)
		}
	}
	part("tools", in.Tools)
	end()
	part("system", in.System)
	end()
	for _, m := range in.Messages {
		part(m.Role, m.Content)
		part("tool_calls", m.ToolCalls)
		part("images", m.Images)
		if m.ToolCallID != "" {
			part("tool_call_id", []byte(m.ToolCallID))
		}
		end()
	}
	part("prompt", in.Prompt)
	end()
	r.prompt = p.Bytes()
	return r
}

// textOf is a JSON value as the text it holds: a string's characters, an
// array of content parts' texts one after another (the parts that are
// not text as their JSON), anything else as its compact JSON.
func textOf(raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return []byte(s)
		}
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) == nil {
			var out []byte
			for _, pt := range parts {
				var t struct {
					Type string  `json:"type"`
					Text *string `json:"text"`
				}
				if json.Unmarshal(pt, &t) == nil && t.Text != nil {
					out = append(out, *t.Text...)
				} else {
					out = append(out, compact(pt)...)
				}
				out = append(out, 0)
			}
			return out
		}
	}
	return compact(raw)
}

func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
