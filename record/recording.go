package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/stream"
	"github.com/kovara/desktop/engine/trace"
)

// recording is one inference request on its way through: what the tap
// reads of its answer, written as a trace line once, when it ends.
type recording struct {
	p       *Proxy
	api     string
	path    string
	arrived time.Time
	body    *capture
	ctx     context.Context // the client's request

	// Set by ModifyResponse before the answer's first byte passes.
	status int
	kind   bodyKind
	tapped atomic.Bool

	// What the answer said; written only by the tap's goroutine (the one
	// copying the answer), read by finish after the copy ended.
	firstToken time.Duration // 0: none yet
	chunks     int           // streamed pieces that carried a token
	usage      answerUsage
	whole      bytes.Buffer // a whole answer's body, up to maxAnswerBytes
	line       []byte       // a streamed answer's unfinished line
	lineOver   bool         // that line outgrew maxEventBytes: dropped
	event      string       // the SSE event type of the lines that follow
	ended      time.Duration
	eof        bool // the server's answer came to its end
	// finished: the stream said its end ([DONE], Anthropic's
	// message_stop, Ollama's done): a client that closes at that mark
	// has its whole answer, though the server's body has not ended yet.
	finished bool
	broke    string // the answer broke off: why

	mu   sync.Mutex
	err  string
	once sync.Once
}

// answerUsage is the token counts the server said.
type answerUsage struct {
	has            bool
	input, output  int
	cached         int
	hasCached      bool
	fromTimingsOut bool
}

func (rec *recording) fail(why string) {
	rec.mu.Lock()
	if rec.err == "" {
		rec.err = why
	}
	rec.mu.Unlock()
}

// bodyKind is how an answer is framed.
type bodyKind int

const (
	bodyWhole  bodyKind = iota // one JSON document
	bodySSE                    // text/event-stream
	bodyNDJSON                 // Ollama's stream: one JSON object a line
)

func bodyKindOf(contentType string) bodyKind {
	ct := strings.ToLower(contentType)
	switch {
	case strings.Contains(ct, "text/event-stream"):
		return bodySSE
	case strings.Contains(ct, "ndjson"):
		return bodyNDJSON
	}
	return bodyWhole
}

// tap is an answer passed on to the client. It reads what came at the
// next Read, while the client already has it, so the server's bytes are
// never held for the proxy's own reading.
type tap struct {
	rc      io.ReadCloser
	rec     *recording
	pending []byte
	at      time.Duration
	closed  bool
}

func (t *tap) Read(b []byte) (int, error) {
	t.rec.tapped.Store(true)
	t.digest()
	n, err := t.rc.Read(b)
	if n > 0 {
		t.at = time.Since(t.rec.arrived)
		t.pending = append(t.pending[:0], b[:n]...)
	}
	switch {
	case errors.Is(err, io.EOF):
		t.rec.eof = true
	case err != nil && t.rec.ctx.Err() != nil:
		// The client left: its request's context, which the proxy's
		// request to the server carries, ended the read.
	case err != nil:
		t.rec.broke = "the server's answer broke off: " + err.Error()
	}
	return n, err
}

// digest reads the bytes passed on at the last Read.
func (t *tap) digest() {
	if len(t.pending) == 0 {
		return
	}
	t.rec.take(t.pending, t.at)
	t.pending = t.pending[:0]
}

func (t *tap) Close() error {
	if !t.closed {
		t.closed = true
		t.digest()
		t.rec.ended = time.Since(t.rec.arrived)
		t.rec.endLine()
	}
	return t.rc.Close()
}

// take reads b, bytes of the answer that arrived at.
func (rec *recording) take(b []byte, at time.Duration) {
	if rec.kind == bodyWhole {
		if room := maxAnswerBytes - rec.whole.Len(); room > 0 {
			rec.whole.Write(b[:min(len(b), room)])
		}
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			rec.addLine(b)
			return
		}
		rec.addLine(b[:i])
		rec.lineDone(at)
		b = b[i+1:]
	}
}

func (rec *recording) addLine(b []byte) {
	if rec.lineOver || len(rec.line)+len(b) > maxEventBytes {
		rec.lineOver, rec.line = true, rec.line[:0]
		return
	}
	rec.line = append(rec.line, b...)
}

// endLine reads a last line the stream left without its newline.
func (rec *recording) endLine() {
	if len(rec.line) > 0 && rec.kind != bodyWhole {
		rec.lineDone(rec.ended)
	}
}

// lineDone reads one whole line of a streamed answer.
func (rec *recording) lineDone(at time.Duration) {
	line := bytes.TrimRight(rec.line, "\r")
	over := rec.lineOver
	rec.line, rec.lineOver = rec.line[:0], false
	if over || len(line) == 0 {
		if len(line) == 0 {
			rec.event = "" // an SSE event ends at a blank line
		}
		return
	}
	if rec.kind == bodySSE {
		switch {
		case bytes.HasPrefix(line, []byte("event:")):
			rec.event = strings.TrimSpace(string(line[len("event:"):]))
			return
		case bytes.HasPrefix(line, []byte("data:")):
			line = bytes.TrimSpace(line[len("data:"):])
		default:
			return
		}
		if bytes.Equal(line, []byte("[DONE]")) {
			rec.finished = true
			return
		}
		if rec.event == "message_stop" {
			rec.finished = true
		}
	}
	token := false
	switch rec.api {
	case trace.APIAnthropic:
		token = rec.anthropicEvent(line)
	case trace.APIOllamaChat, trace.APIOllamaGen:
		token = rec.ollamaLine(line)
	default:
		token = rec.openAIChunk(line)
	}
	if token {
		rec.chunks++
		if rec.firstToken == 0 {
			rec.firstToken = max(at, time.Nanosecond)
		}
	}
}

// openAIChunk reads a chat.completion.chunk (or a legacy completion's):
// whether it carried a token, and the usage or llama.cpp's timings.
func (rec *recording) openAIChunk(b []byte) bool {
	var c stream.Chunk
	if stream.Decode(b, &c) != nil {
		return false
	}
	rec.openAIUsage(&c)
	return c.Content || c.Reasoning
}

func (rec *recording) openAIUsage(c *stream.Chunk) {
	switch {
	case c.HasUsage:
		rec.usage.has, rec.usage.input, rec.usage.output = true, c.PromptTokens, c.CompletionTokens
		if c.HasCached {
			rec.usage.hasCached, rec.usage.cached = true, c.CachedTokens
		}
	case c.HasTimings && !rec.usage.has:
		// llama.cpp's timings: prompt_n counts the prompt tokens it
		// evaluated, cache_n the ones it took from its cache.
		rec.usage.has, rec.usage.fromTimingsOut = true, true
		rec.usage.input, rec.usage.output = c.TimingsPromptN+c.TimingsCacheN, c.TimingsPredictedN
	}
	switch {
	case c.HasCacheN && !rec.usage.hasCached:
		rec.usage.hasCached, rec.usage.cached = true, c.TimingsCacheN
	case c.HasTimings && c.HasUsage && !rec.usage.hasCached && c.TimingsPromptN <= c.PromptTokens:
		// llama.cpp without cache_n (b4748): prompt_n counts only the
		// prompt tokens it evaluated, so the rest of the prompt's
		// tokens came from its cache (a second turn: 60 tokens, 18
		// evaluated).
		rec.usage.hasCached, rec.usage.cached = true, c.PromptTokens-c.TimingsPromptN
	}
}

// anthropicEvent reads one event of a Messages stream (or a whole
// Messages answer) as the engine's replay reads it
// (stream.DecodeAnthropic): whether it carried a token, and the usage —
// the prompt's count where the event says one (Ollama 0.24 says an early
// guess in message_start, 12 against 27, and the true count in
// message_delta: the later one wins), the answer's as it grows.
func (rec *recording) anthropicEvent(b []byte) bool {
	var c stream.Chunk
	if _, err := stream.DecodeAnthropic(b, &c); err != nil {
		return false
	}
	if c.HasUsage {
		rec.usage.has = true
		if c.PromptTokens > 0 {
			rec.usage.input = c.PromptTokens
			if c.HasCached {
				rec.usage.hasCached, rec.usage.cached = true, c.CachedTokens
			}
		}
		rec.usage.output = max(rec.usage.output, c.CompletionTokens)
	}
	return c.Content || c.Reasoning
}

// ollamaLine reads one object of Ollama's stream: a token where its
// message (or response) has text, the counts on the last one.
func (rec *recording) ollamaLine(b []byte) bool {
	var o struct {
		Message struct {
			Content  string `json:"content"`
			Thinking string `json:"thinking"`
		} `json:"message"`
		Response        string `json:"response"`
		Done            bool   `json:"done"`
		PromptEvalCount *int   `json:"prompt_eval_count"`
		EvalCount       *int   `json:"eval_count"`
	}
	if json.Unmarshal(b, &o) != nil {
		return false
	}
	rec.finished = rec.finished || o.Done
	if o.Done && o.EvalCount != nil {
		rec.usage.has, rec.usage.output = true, *o.EvalCount
		if o.PromptEvalCount != nil {
			rec.usage.input = *o.PromptEvalCount
		}
	}
	return o.Message.Content != "" || o.Message.Thinking != "" || o.Response != ""
}

// wholeAnswer reads a whole (not streamed) answer's usage.
func (rec *recording) wholeAnswer() {
	b := rec.whole.Bytes()
	if len(b) == 0 {
		return
	}
	switch rec.api {
	case trace.APIAnthropic:
		rec.anthropicEvent(b)
	case trace.APIOllamaChat, trace.APIOllamaGen:
		rec.ollamaLine(b)
	default:
		var c stream.Chunk
		if stream.Decode(b, &c) == nil {
			rec.openAIUsage(&c)
		}
	}
}

// finish writes the request's line, once.
func (rec *recording) finish() {
	rec.once.Do(func() {
		q := rec.line2()
		if err := rec.p.opt.Trace.Add(q); err == nil {
			rec.p.requests.Add(1)
		}
		if f := rec.p.opt.OnRequest; f != nil {
			f(q)
		}
	})
}

// line2 is the trace line of the request as it went.
func (rec *recording) line2() trace.Request {
	body, whole := rec.body.kept()
	req := parseRequest(rec.api, body)
	q := trace.Request{
		Timestamp: rec.arrived.Sub(rec.p.start).Milliseconds(),
		Time:      rec.arrived.Format(time.RFC3339Nano),
		API:       rec.api, Path: rec.path, Model: req.model, Stream: req.stream, MaxTokens: req.maxTokens,
		Status: rec.status,
		// An empty list, not null, where the prompt could not be read:
		// Mooncake's readers take a list.
		HashIDs: []int64{},
	}
	if req.ok {
		q.HashIDs = trace.Blocks(rec.p.salt, req.prompt, trace.BlockBytes)
		q.MessageIDs = trace.Prefixes(rec.p.salt, req.prompt, req.ends)
		q.PromptBytes, q.BlockBytes = len(req.prompt), trace.BlockBytes
	}
	if rec.tapped.Load() {
		if rec.kind == bodyWhole {
			rec.wholeAnswer()
		}
		q.DurationMs = ms(rec.ended)
		if rec.firstToken > 0 {
			v := ms(rec.firstToken)
			q.TTFTMs = &v
		}
	} else {
		q.DurationMs = ms(time.Since(rec.arrived))
	}
	switch u := rec.usage; {
	case u.has:
		q.InputLength, q.OutputLength, q.Usage = u.input, u.output, trace.UsageServer
	case rec.chunks > 0:
		// No usage: each streamed piece is a token, near enough (the
		// servers send one a chunk); the prompt is not known.
		q.OutputLength, q.Usage = rec.chunks, trace.UsageCounted
	}
	if rec.usage.hasCached {
		c := rec.usage.cached
		q.CachedTokens = &c
	}
	rec.mu.Lock()
	q.Error = rec.err
	rec.mu.Unlock()
	switch {
	case q.Error != "":
	case rec.broke != "":
		q.Error = rec.broke
	case rec.tapped.Load() && !rec.eof && !rec.finished:
		q.Error = fmt.Sprintf("the client hung up %.1f s into the answer", rec.ended.Seconds())
	case !whole:
		q.Error = fmt.Sprintf("the prompt was longer than the %s the proxy reads: its blocks are of that much of it", sizeWords(rec.body.max))
	case !req.ok && len(body) > 0:
		q.Error = "the request was not JSON the proxy could read: forwarded as it was, its prompt not hashed"
	case rec.status >= 400:
		q.Error = fmt.Sprintf("the server answered %d", rec.status)
	}
	return q
}

// sizeWords is a size in bytes as a person reads it.
func sizeWords(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
