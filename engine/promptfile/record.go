package promptfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// rawRecord is one record's fields as written, judged one by one so that
// each mistake gets its own plain sentence.
type rawRecord struct {
	Messages      json.RawMessage `json:"messages"`
	Prompt        json.RawMessage `json:"prompt"`
	Conversations json.RawMessage `json:"conversations"`
	MaxTokens     json.RawMessage `json:"max_tokens"`
}

type rawMessage struct {
	Role    json.RawMessage `json:"role"`
	Content json.RawMessage `json:"content"`
}

type rawTurn struct {
	From  json.RawMessage `json:"from"`
	Value json.RawMessage `json:"value"`
}

// fastRecord decodes a well-formed record in one pass; any doubt (a field
// of the wrong type, null, missing) goes to the careful path, which alone
// words the refusals. Pointers tell null and missing from empty.
type fastRecord struct {
	Messages []struct {
		Role    *string `json:"role"`
		Content *string `json:"content"`
	} `json:"messages"`
	Prompt        *string `json:"prompt"`
	Conversations []struct {
		From  *string `json:"from"`
		Value *string `json:"value"`
	} `json:"conversations"`
	MaxTokens json.RawMessage `json:"max_tokens"`
}

// parseRecord decodes one record (a line, or an entry of the array when
// entry) into a Prompt, or says in plain words why it cannot.
func parseRecord(data []byte, entry bool) (Prompt, string) {
	if p, ok := parseFast(data); ok {
		return p, ""
	}
	return parseCareful(data, entry)
}

// parseFast is parseCareful's answer for a good record, at a third of the
// cost (one decode instead of one a field); ok false for anything else.
func parseFast(data []byte) (p Prompt, ok bool) {
	var r fastRecord
	if json.Unmarshal(data, &r) != nil {
		return Prompt{}, false
	}
	switch {
	case r.Prompt != nil && r.Messages == nil && r.Conversations == nil:
		if *r.Prompt == "" {
			return Prompt{}, false
		}
		p.Messages = []Message{{Role: "user", Content: *r.Prompt}}
	case r.Messages != nil && r.Prompt == nil && r.Conversations == nil:
		if len(r.Messages) == 0 {
			return Prompt{}, false
		}
		p.Messages = make([]Message, len(r.Messages))
		for i, m := range r.Messages {
			if m.Role == nil || m.Content == nil {
				return Prompt{}, false
			}
			switch *m.Role {
			case "system", "user", "assistant":
			default:
				return Prompt{}, false
			}
			p.Messages[i] = Message{Role: *m.Role, Content: *m.Content}
		}
		if last := p.Messages[len(p.Messages)-1]; last.Role != "user" || last.Content == "" {
			return Prompt{}, false
		}
	case r.Conversations != nil && r.Prompt == nil && r.Messages == nil:
		for i, t := range r.Conversations {
			if t.From == nil {
				return Prompt{}, false
			}
			human := *t.From == "human" || *t.From == "user"
			if !human && !(i == 0 && *t.From == "system") {
				continue
			}
			if t.Value == nil {
				return Prompt{}, false
			}
			if !human {
				if *t.Value != "" {
					p.Messages = append(p.Messages, Message{Role: "system", Content: *t.Value})
				}
				continue
			}
			if *t.Value == "" {
				return Prompt{}, false
			}
			p.Messages = append(p.Messages, Message{Role: "user", Content: *t.Value})
			break
		}
		if len(p.Messages) == 0 || p.Messages[len(p.Messages)-1].Role != "user" {
			return Prompt{}, false
		}
	default:
		return Prompt{}, false
	}
	if len(r.MaxTokens) > 0 && string(r.MaxTokens) != "null" {
		n, err := strconv.ParseInt(string(r.MaxTokens), 10, 64)
		if err != nil || n < 1 || n > math.MaxInt32 {
			return Prompt{}, false
		}
		p.MaxTokens = int(n)
	}
	return p, true
}

// parseCareful judges a record field by field, so that each mistake gets
// its own sentence.
func parseCareful(data []byte, entry bool) (Prompt, string) {
	var r rawRecord
	if err := json.Unmarshal(data, &r); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Prompt{}, "not valid JSON (" + se.Error() + ")"
		}
		return Prompt{}, notObject(entry)
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return Prompt{}, notObject(entry)
	}
	var p Prompt
	var why string
	switch given(r.Messages) + given(r.Prompt) + given(r.Conversations) {
	case 0:
		if entry {
			return Prompt{}, `has no "conversations" (nor "messages" or "prompt")`
		}
		return Prompt{}, `has neither "messages" nor "prompt"`
	case 1:
	default:
		return Prompt{}, `has more than one of "messages", "prompt" and "conversations"; give one`
	}
	switch {
	case given(r.Prompt) == 1:
		var text string
		if !isString(r.Prompt) || json.Unmarshal(r.Prompt, &text) != nil {
			return Prompt{}, `"prompt" must be text in quotes`
		}
		if text == "" {
			return Prompt{}, `"prompt" is empty`
		}
		p.Messages = []Message{{Role: "user", Content: text}}
	case given(r.Messages) == 1:
		p.Messages, why = parseMessages(r.Messages)
	default:
		p.Messages, why = parseConversation(r.Conversations)
	}
	if why != "" {
		return Prompt{}, why
	}
	if given(r.MaxTokens) == 1 {
		n, err := strconv.ParseInt(string(r.MaxTokens), 10, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange) && r.MaxTokens[0] != '-':
			return Prompt{}, `"max_tokens" is far too large`
		case err != nil || n < 1:
			return Prompt{}, `"max_tokens" must be a whole number above 0, not ` + short(r.MaxTokens)
		case n > math.MaxInt32:
			return Prompt{}, `"max_tokens" is far too large`
		}
		p.MaxTokens = int(n)
	}
	return p, ""
}

func notObject(entry bool) string {
	if entry {
		return "not a JSON object; each entry of the list must be one {…} object"
	}
	return "not a JSON object; each line must be one {…} object"
}

// given is 1 when a field is present and not null.
func given(raw json.RawMessage) int {
	if len(raw) == 0 || string(raw) == "null" {
		return 0
	}
	return 1
}

func isString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// short quotes a field's raw value for a message, cut to a few words.
func short(raw json.RawMessage) string {
	const max = 40
	if len(raw) <= max {
		return string(raw)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return string(raw[:cut]) + "…"
}

func parseMessages(raw json.RawMessage) ([]Message, string) {
	const shape = `"messages" must be a list of {"role": …, "content": …} objects`
	var ms []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &ms) != nil {
		return nil, shape
	}
	if len(ms) == 0 {
		return nil, `"messages" is empty`
	}
	out := make([]Message, 0, len(ms))
	for i, m := range ms {
		var rm rawMessage
		if len(m) == 0 || m[0] != '{' || json.Unmarshal(m, &rm) != nil {
			return nil, shape
		}
		var role, content string
		switch {
		case given(rm.Role) == 0:
			return nil, fmt.Sprintf(`message %d has no "role"`, i+1)
		case !isString(rm.Role) || json.Unmarshal(rm.Role, &role) != nil:
			return nil, fmt.Sprintf(`message %d: "role" must be text in quotes`, i+1)
		case role != "system" && role != "user" && role != "assistant":
			return nil, fmt.Sprintf(`message %d has role %s; only "system", "user" and "assistant" are read`, i+1, short(rm.Role))
		case given(rm.Content) == 0:
			return nil, fmt.Sprintf(`message %d has no "content"`, i+1)
		case rm.Content[0] == '[':
			return nil, fmt.Sprintf(`message %d has its content as a list of parts; only plain text content is read`, i+1)
		case !isString(rm.Content) || json.Unmarshal(rm.Content, &content) != nil:
			return nil, fmt.Sprintf(`message %d: "content" must be text in quotes`, i+1)
		}
		out = append(out, Message{Role: role, Content: content})
	}
	last := out[len(out)-1]
	if last.Role != "user" {
		return nil, `"messages" must end with a user message`
	}
	if last.Content == "" {
		return nil, "the last user message is empty"
	}
	return out, ""
}

// parseConversation takes a ShareGPT conversation's leading system turn,
// if any, and its first human turn.
func parseConversation(raw json.RawMessage) ([]Message, string) {
	const shape = `"conversations" must be a list of {"from": …, "value": …} objects`
	var turns []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &turns) != nil {
		return nil, shape
	}
	var out []Message
	for i, t := range turns {
		var rt rawTurn
		if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &rt) != nil {
			return nil, shape
		}
		var from, value string
		if !isString(rt.From) || json.Unmarshal(rt.From, &from) != nil {
			return nil, fmt.Sprintf(`turn %d: "from" must be text in quotes`, i+1)
		}
		human := from == "human" || from == "user"
		if !human && !(i == 0 && from == "system") {
			continue
		}
		if !isString(rt.Value) || json.Unmarshal(rt.Value, &value) != nil {
			return nil, fmt.Sprintf(`turn %d: "value" must be text in quotes`, i+1)
		}
		if !human {
			if value != "" {
				out = append(out, Message{Role: "system", Content: value})
			}
			continue
		}
		if value == "" {
			return nil, `the first "human" turn is empty`
		}
		return append(out, Message{Role: "user", Content: value}), ""
	}
	return nil, `no "human" turn`
}

// AppendMessagesJSON appends p's messages as the elements of a JSON array,
// {"role":…,"content":…} objects separated by commas, without the
// brackets, for a request body built by hand.
func (p Prompt) AppendMessagesJSON(b []byte) []byte {
	for i, m := range p.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = appendString(b, m.Role)
		b = append(b, `,"content":`...)
		b = appendString(b, m.Content)
		b = append(b, '}')
	}
	return b
}

// appendString quotes s as a JSON string. Text that is not UTF-8 becomes
// U+FFFD, as encoding/json writes it, so the body stays valid JSON.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
