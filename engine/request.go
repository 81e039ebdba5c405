package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/netstamp"
	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stream"
	"github.com/kovara/desktop/internal/clip"
)

// Error classes of failed requests (successes have an empty class).
const (
	ClassTimeout         = "timeout"
	ClassConnection      = "connection"
	ClassErrorEvent      = "error_event"
	ClassMalformedStream = "malformed_stream"
	ClassEndedEarly      = "ended_early"
	ClassEmptyCompletion = "empty_completion"
)

// httpClass is the class of a non-200 answer.
func httpClass(status int) string { return "http_" + strconv.Itoa(status) }

// requestOpts are the request body settings the compat probe settled.
type requestOpts struct {
	model         string
	ignoreEOS     bool
	streamOptions bool
	maxTokens     int
	words         int
	seed          int64
	// The plans beyond the Kovara method: a fixed prompt text instead of
	// the generator's (text != ""), and chat_template_kwargs turning
	// thinking off.
	text       string
	noThinking bool
	// A second turn (the context plan): after the first user message,
	// the assistant's answer to it (answer: the body of a JSON string,
	// as conn.answer kept it from the stream) and a new user message,
	// followUp. Empty followUp: one user message.
	answer   []byte
	followUp string
	// A workload's (workload.go), as message elements (JSON objects,
	// comma-separated): prefix the system message before everything,
	// history a conversation's earlier turns before the question, and
	// messages a prompts file's whole request in place of the question.
	prefix, history, messages []byte
	// anthropic sends the request to the Anthropic Messages API
	// (/v1/messages) in its shape, and reads its stream (a replayed
	// trace's requests recorded on it: replay.go).
	anthropic bool
}

// outcome is one request's measurement. Times are offsets from the run's
// single start; itl values live in the owning slot's buffer.
type outcome struct {
	n           int64
	start, end  time.Duration
	ttft        time.Duration // -1 when no text arrived
	ttfa        time.Duration // first answer (non-reasoning) chunk; -1 if none
	reasoning   bool          // reasoning chunks came before the answer
	class       string
	msg         string
	chunks      int
	hasUsage    bool
	promptTok   int
	complTok    int
	itlFrom     int
	itlTo       int
	interrupted bool // the run was stopped while this request was in flight
	// turn is its turn in its slot's conversation, from 1 (0: none).
	turn int
	// asked is the answer's max_tokens; lengthStop: the server ended it
	// with finish_reason "length" (a limit: max_tokens, or its context).
	asked      int
	lengthStop bool
	// due is when the loop's pacer let it go, an offset from the run's
	// start like start (0 without a pacer: a closed loop's request is
	// due the moment its slot is free).
	due time.Duration

	// sameRead counts the request's gaps that are exactly 0 because both
	// chunks came off the socket in one read and carry its one stamp (the
	// client read late, or the server sent them together).
	sameRead int

	// For the plans beyond the Kovara method: the last text-bearing
	// chunk's time (offset from the run's start, like start and end), the
	// first chunk that carried text or a finish_reason (-1 if none,
	// offset from start like ttft), and llama.cpp's timings counts.
	lastTok    time.Duration
	firstEvent time.Duration
	hasTimings bool
	timingsOut int // timings.predicted_n
	timingsIn  int // timings.prompt_n

	// What the server said about its prompt cache: usage's cached_tokens
	// and llama.cpp's timings.cache_n.
	hasCached    bool
	cachedTok    int
	hasCacheN    bool
	timingsCache int
	// llama.cpp's speculative-decoding counts for this answer.
	hasDraft      bool
	draftN        int
	draftAccepted int
	// llama.cpp's own times and rates for this answer, read only on a
	// conn with details set.
	timings stream.Timings
}

func (o *outcome) ok() bool { return o.class == "" && !o.interrupted }

// conn is one slot's client: its own transport (one keep-alive connection),
// its own stream reader and buffers, so slots share nothing while running.
type conn struct {
	ep     setup.Endpoint
	base   setup.Base
	client *http.Client
	tr     *http.Transport
	t0     time.Time // the run's start: every time is an offset from it
	clock  func() time.Duration
	rd     *stream.Reader
	chunk  stream.Chunk
	body   []byte
	itl    []float32 // inter-token gaps in ms, appended per chunk
	url    string
	// anthropic: the request in flight is an Anthropic Messages one,
	// its stream read as such (readStream).
	anthropic bool
	live      *liveSlot // nil outside levels and warmup

	// sock is the slot's current connection, set from the transport's dial
	// goroutine.
	sock atomic.Pointer[netstamp.Conn]
	// sockMu and trGen keep a dial of a transport the slot has replaced
	// from taking sock: since Go 1.22 a dial goes on after its request was
	// cancelled, and its late connection is one the slot never uses
	// (sockRecorder). Written rarely, under sockMu; sock is read atomically.
	sockMu sync.Mutex
	trGen  uint64
	// heard is when the server last sent this slot anything (an answer's
	// headers, a stream event), an offset from t0; busy says a request is
	// in flight. The loop's watchdog reads both (watchdog.go).
	heard atomic.Int64
	busy  atomic.Bool

	// gate, when set, is the send gate this request goes through
	// (slotSet.run): a loop's first requests, and any request right after
	// the slot reconnected, which comes in a burst too when the server
	// closes every connection after its answer. loopGate is the loop's
	// gate. Both are only touched by the slot's own goroutine. held is the
	// gate this slot has a place in, given back (from whichever goroutine
	// comes first) once net/http has written the request out or has given
	// up on it.
	gate, loopGate *sendGate
	held           atomic.Pointer[sendGate]
	trace          *httptrace.ClientTrace

	// connectEach: every request opens its own connection as it is sent
	// (slotSet.connectEach says when and why).
	connectEach bool

	// The probe asks for the model name the server answers with.
	rememberModel bool
	seenModel     string

	// answeredOn is the connection the latest answer came on: a request
	// that dies unanswered on it met a server-side close. stats counts
	// how the slot's connections fared; both are the slot's own.
	answeredOn *netstamp.Conn
	stats      connStats
	// chatOn is the connection the latest chat answer came on; closes
	// counts, for the whole run, the connections the server closed right
	// after an answer (shared by every slot; nil outside a run).
	chatOn *netstamp.Conn
	closes *atomic.Int64
	// flight counts the run's requests in flight (nil outside a run).
	flight *flight
	// reached: the endpoint had answered (its check) before this slot's
	// first request, so a failure's advice need not doubt the address.
	reached bool
	// details makes the slot keep what the context plan reads beyond the
	// method's figures: the latest answer's text in answer (JSON-escaped,
	// stream.AppendContent) and the server's timings in the outcome.
	details bool
	answer  []byte
	// pieces are where each chunk's text ends in answer, with details.
	pieces []int
}

// learnedCloses is how many closes right after an answer make the run
// treat the server as one that closes after every answer (llama-server):
// from then on each slot replaces its connection after an answer instead
// of racing the server's close with its next request.
const learnedCloses = 2

// connStats counts what a slot did about connections the server closed.
type connStats struct {
	Reconnects   int // fresh connections opened between requests
	Resent       int // requests sent again after dying unanswered on a reused connection
	ServerClosed int // connections the server closed after an answer
	// Connected counts requests that opened their connection as they
	// were sent (connectEach).
	Connected int
	// Reads of stream data stamped with the kernel's receive time, and
	// with the moment the read returned (where the system gives no
	// receive timestamps).
	KernelStamped, ReadStamped int
}

func (a *connStats) add(b connStats) {
	a.Reconnects += b.Reconnects
	a.Resent += b.Resent
	a.ServerClosed += b.ServerClosed
	a.Connected += b.Connected
	a.KernelStamped += b.KernelStamped
	a.ReadStamped += b.ReadStamped
}

func newConn(ep setup.Endpoint, b setup.Base, t0 time.Time) *conn {
	c := &conn{ep: ep, base: b, t0: t0, url: b.API("/v1/chat/completions")}
	c.clock = func() time.Duration { return time.Since(t0) }
	c.tr = newTransport(ep, b, nil, c.sockRecorder(nil))
	c.client = &http.Client{Transport: c.tr, CheckRedirect: sameServer}
	c.rd = stream.NewReader(eofReader{}, c.arrival, 0)
	c.trace = &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { c.releaseSend() }}
	return c
}

// sockRecorder starts a new transport generation, with sc (when not nil)
// as the slot's socket, and returns what that transport's dials record
// their sockets with: a dial of an earlier transport records nothing.
func (c *conn) sockRecorder(sc *netstamp.Conn) func(*netstamp.Conn) {
	c.sockMu.Lock()
	c.trGen++
	gen := c.trGen
	if sc != nil {
		c.sock.Store(sc)
	}
	c.sockMu.Unlock()
	return func(sc *netstamp.Conn) {
		c.sockMu.Lock()
		defer c.sockMu.Unlock()
		if c.trGen == gen {
			c.sock.Store(sc)
		}
	}
}

// sendGate lets a limited number of slots build and write a request at a
// time.
type sendGate struct{ places chan struct{} }

func newSendGate(n int) *sendGate { return &sendGate{places: make(chan struct{}, max(n, 1))} }

// enterSend waits for a place in the slot's send gate, if it has one.
func (c *conn) enterSend(ctx context.Context) {
	g := c.gate
	if g == nil || c.held.Load() == g {
		return
	}
	select {
	case g.places <- struct{}{}:
		c.held.Store(g)
	case <-ctx.Done():
	}
}

// releaseSend gives back the slot's place in the send gate, once.
func (c *conn) releaseSend() {
	if g := c.held.Swap(nil); g != nil {
		<-g.places
	}
}

// settleStart moves the request's start from the moment we handed it to
// net/http to the moment its last write call began (see netstamp.Wrap for
// why not the kernel's transmit stamp): under a burst the transport's write
// goroutine can run milliseconds later, and that wait is the client's, not
// the server's. httptrace's WroteRequest cannot say when: it fires before
// the transport flushes its buffer, so a small request has not been
// written yet. The connection's own record can, once the write has begun;
// it is read after the response began and again after the stream ended,
// and anything already measured from the old start is moved with it. A
// stamp from before the start belongs to an earlier request on the
// connection.
func (c *conn) settleStart(out *outcome) {
	s := c.sock.Load()
	if s == nil {
		return
	}
	w := s.LastWrite()
	if w.IsZero() {
		return
	}
	at := w.Sub(c.t0)
	if at <= out.start {
		return
	}
	d := at - out.start
	out.start = at
	if out.ttft >= 0 {
		out.ttft = max(out.ttft-d, 0)
	}
	if out.ttfa >= 0 {
		out.ttfa = max(out.ttfa-d, 0)
	}
	if out.firstEvent >= 0 {
		out.firstEvent = max(out.firstEvent-d, 0)
	}
}

// arrival is the stream reader's clock: when the bytes of the latest read
// reached this machine (the kernel's receive time where the OS gives it),
// not when our goroutine got round to reading them.
func (c *conn) arrival() time.Duration {
	if s := c.sock.Load(); s != nil {
		if at := s.LastRead(); !at.IsZero() {
			if s.KernelStamps() {
				c.stats.KernelStamped++
			} else {
				c.stats.ReadStamped++
			}
			return at.Sub(c.t0)
		}
	}
	c.stats.ReadStamped++
	return c.clock()
}

// preopen opens the slot's connection before the level, so connection
// setup is not inside the first measured request. Dialing is not enough:
// connect() returns before the server has accepted and set up its side, so
// one GET /v1/models (known to work from the endpoint check) goes over the
// new connection and leaves it idle, fully open, in the slot's transport.
func (c *conn) preopen(ctx context.Context) error {
	sc, nc, err := dialStamped(ctx, c.ep, c.base)
	if err != nil {
		return err
	}
	c.tr.CloseIdleConnections()
	c.tr = newTransport(c.ep, c.base, nc, c.sockRecorder(sc))
	c.client.Transport = c.tr
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.API("/v1/models"), nil)
	if err != nil {
		return err
	}
	authorize(c.ep, req)
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxModelsBody)); err != nil {
		return err
	}
	c.answeredOn = sc
	return nil
}

func (c *conn) close() { c.tr.CloseIdleConnections() }

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// buildBody writes the chat request JSON. The prompt is plain ASCII words,
// so it needs no escaping beyond what strconv.AppendQuote's JSON-safe subset
// gives; it is built by hand to keep the per-request cost flat.
func (c *conn) buildBody(o requestOpts, n int64) []byte {
	b := c.body[:0]
	b = append(b, `{"model":`...)
	b = appendJSONString(b, o.model)
	if o.anthropic {
		// The Messages API: max_tokens required, no stream_options,
		// ignore_eos or template options.
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(o.maxTokens), 10)
		b = append(b, `,"temperature":0,"stream":true,"messages":[`...)
		b = append(b, o.messages...)
		b = append(b, `]}`...)
		c.body = b
		return b
	}
	b = append(b, `,"messages":[`...)
	for _, m := range [][]byte{o.prefix, o.history} {
		if len(m) > 0 {
			b = append(b, m...)
			b = append(b, ',')
		}
	}
	switch {
	case len(o.messages) > 0:
		b = append(b, o.messages...)
	case o.text != "":
		b = append(b, `{"role":"user","content":`...)
		b = appendJSONString(b, o.text)
		b = append(b, '}')
	default:
		b = append(b, `{"role":"user","content":"`...)
		b = prompt.AppendText(b, o.seed, n, o.words)
		b = append(b, `"}`...)
	}
	if o.followUp != "" {
		b = append(b, `,{"role":"assistant","content":"`...)
		b = append(b, o.answer...)
		b = append(b, `"},{"role":"user","content":`...)
		b = appendJSONString(b, o.followUp)
		b = append(b, '}')
	}
	b = append(b, `],"max_tokens":`...)
	b = strconv.AppendInt(b, int64(o.maxTokens), 10)
	b = append(b, `,"temperature":0,"stream":true`...)
	if o.streamOptions {
		b = append(b, `,"stream_options":{"include_usage":true}`...)
	}
	if o.ignoreEOS {
		b = append(b, `,"ignore_eos":true`...)
	}
	if o.noThinking {
		b = append(b, `,"chat_template_kwargs":{"enable_thinking":false}`...)
	}
	b = append(b, '}')
	c.body = b
	return b
}

// appendJSONString quotes s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xf])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

// do sends request n and reads its stream to the end. It never returns an
// error: failures are classified into the outcome. runCtx is the run's
// context (cancelled on Stop); timeout bounds the whole request.
//
// Servers close kept-alive connections when they like: llama.cpp's
// llama-server after every streamed answer, others after an idle timeout
// or a number of requests (docs/servers.md). So a connection the server
// has closed is replaced before the request, outside its measured time,
// and a request that died on a reused connection before any byte of an
// answer came back is sent once more on a fresh connection, as browsers
// and curl do. Neither is a failed request, and the second send is the
// only one recorded.
func (c *conn) do(runCtx context.Context, o requestOpts, n int64, timeout time.Duration) outcome {
	c.flight.begin()
	c.ready(runCtx)
	out, unanswered := c.attempt(runCtx, o, n, timeout)
	if unanswered {
		c.stats.Resent++
		c.serverClosed()
		c.reopen(runCtx)
		out, _ = c.attempt(runCtx, o, n, timeout)
	}
	c.flight.end(out.interrupted || out.class == ClassTimeout)
	return out
}

// ready replaces the slot's connection when the server has closed it
// since its last answer, or will: once the run has seen the server close
// connections right after answers, the slot does not race that close with
// its next request but opens a fresh connection first.
func (c *conn) ready(ctx context.Context) {
	if c.connectEach {
		// Whatever the slot holds the server may close or is about to;
		// the request dials its own.
		c.tr.CloseIdleConnections()
		c.stats.Connected++
		return
	}
	s := c.sock.Load()
	switch {
	case s == nil:
		return
	case s.Gone():
		if s == c.answeredOn {
			c.serverClosed()
		}
	case s != c.chatOn || c.closes == nil || c.closes.Load() < learnedCloses:
		return
	}
	// Reconnecting is a burst of its own when every slot's answer ends
	// together (the server closes them all): the slot takes its place in
	// the loop's send gate for the reconnect and the request it sends,
	// leaving a CPU free to read the streams already flowing.
	c.gate = c.loopGate
	c.enterSend(ctx)
	c.reopen(ctx)
}

// serverClosed counts a connection the server closed after an answer.
func (c *conn) serverClosed() {
	c.stats.ServerClosed++
	if c.closes != nil {
		c.closes.Add(1)
	}
}

// reopen replaces the slot's connection with a fresh one, opened and
// warmed as before a level (see preopen). When that fails the request
// that follows connects by itself, and fails in words if the server is
// gone.
func (c *conn) reopen(ctx context.Context) {
	if c.connectEach {
		c.tr.CloseIdleConnections()
		return
	}
	c.stats.Reconnects++
	octx, cancel := context.WithTimeout(ctx, checkTimeout(c.ep))
	defer cancel()
	if c.preopen(octx) != nil {
		c.tr.CloseIdleConnections()
	}
}

// attempt sends the request once. unanswered reports a connection
// failure on a connection that had already carried an answer, before any
// byte of this answer arrived: the server closed it as the request left.
func (c *conn) attempt(runCtx context.Context, o requestOpts, n int64, timeout time.Duration) (out outcome, unanswered bool) {
	out = outcome{n: n, ttft: -1, ttfa: -1, firstEvent: -1, itlFrom: len(c.itl), asked: o.maxTokens}
	c.answer, c.pieces = c.answer[:0], c.pieces[:0]
	ctx, cancel := context.WithTimeout(runCtx, timeout)
	defer cancel()
	rctx := ctx
	if c.gate != nil {
		c.enterSend(ctx)
		defer c.releaseSend()
		rctx = httptrace.WithClientTrace(ctx, c.trace)
	}
	body := c.buildBody(o, n)
	url := c.url
	if o.anthropic {
		url = c.base.API("/v1/messages")
	}
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		out.class, out.msg = ClassConnection, err.Error()
		return out, false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if o.anthropic {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	c.anthropic = o.anthropic
	authorize(c.ep, req)

	used := c.sock.Load()
	var readBefore time.Time
	if used != nil {
		readBefore = used.LastRead()
	}
	out.start = c.clock()
	resp, err := c.client.Do(req)
	c.releaseSend()
	c.settleStart(&out)
	defer c.settleStart(&out) // out is the named result: this runs on every return
	if err != nil {
		out.end = c.clock()
		c.classifyErr(&out, runCtx, ctx, err, c.answeredBefore(used))
		out.itlTo = len(c.itl)
		unanswered = out.class == ClassConnection && used != nil && used == c.answeredOn &&
			c.sock.Load() == used && used.LastRead().Equal(readBefore)
		return out, unanswered
	}
	if now := c.sock.Load(); used != nil && now != used && !c.connectEach {
		// The connection died between ready's look and the send, and
		// net/http opened a new one inside this request: its start is
		// still its first write on the new connection (settleStart).
		// With connectEach every request opens one by design.
		c.serverClosed()
		c.stats.Reconnects++
	}
	c.answeredOn = c.sock.Load()
	c.heard.Store(int64(c.clock()))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _, _ := readBounded(resp.Body, 4096)
		out.end = c.clock()
		out.class = httpClass(resp.StatusCode)
		out.msg = serverMessage(msg, c.ep.APIKey)
		if note := redirectNote(resp, c.ep.APIKey); note != "" {
			out.msg = note
		}
		out.itlTo = len(c.itl)
		return out, false
	}
	c.readStream(&out, resp.Body)
	if out.class == ClassConnection || out.class == ClassEndedEarly {
		// A read that failed because our own deadline or Stop hit is not
		// the server's fault: say what really happened.
		if runCtx.Err() != nil {
			out.interrupted = true
		} else if ctx.Err() != nil {
			out.class, out.msg = ClassTimeout, fmt.Sprintf("the request took longer than %s", timeout)
		}
	}
	if out.class == ClassEndedEarly && out.chunks == 0 {
		notSSE(&out, resp.Header.Get("Content-Type"))
	}
	if out.class == "" {
		// Drain what follows [DONE] so the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		c.chatOn = c.answeredOn
	}
	out.itlTo = len(c.itl)
	return out, false
}

func (c *conn) classifyErr(out *outcome, runCtx, ctx context.Context, err error, before answered) {
	switch {
	case runCtx.Err() != nil:
		out.interrupted = true
	case ctx.Err() != nil:
		out.class, out.msg = ClassTimeout, "no answer within the timeout"
	default:
		out.class = ClassConnection
		out.msg = scrub(connectErrorAfter(c.ep, c.base, err, before).Error(), c.ep.APIKey)
	}
}

// answeredBefore says what had answered before a request that failed
// without an answer: the connection it went on (used, the slot's
// connection when it was sent, still the slot's and the one the latest
// answer came on), the endpoint on some other connection, or nothing yet.
func (c *conn) answeredBefore(used *netstamp.Conn) answered {
	switch {
	case used != nil && used == c.answeredOn && c.sock.Load() == used:
		return answeredConn
	case c.reached || c.answeredOn != nil:
		return answeredEndpoint
	}
	return answeredNothing
}

// readStream reads SSE events until [DONE], EOF or a failure, stamping each
// text-bearing chunk with the time its line came off the socket.
func (c *conn) readStream(out *outcome, body io.Reader) {
	c.rd.Reset(body)
	var last time.Duration
	done, finished := false, false
	for c.rd.Next() {
		data := c.rd.Data()
		at := c.rd.At()
		out.end = at
		c.heard.Store(int64(at))
		if len(data) == 6 && string(data) == "[DONE]" {
			done = true
			break
		}
		if et := c.rd.EventType(); len(et) > 0 && string(et) == "error" {
			out.class, out.msg = ClassErrorEvent, "error event: "+clip.Text(scrub(string(data), c.ep.APIKey), 200)
			return
		}
		if c.anthropic {
			stop, err := stream.DecodeAnthropic(data, &c.chunk)
			if err != nil {
				out.class, out.msg = ClassMalformedStream, "a stream event is not valid JSON: "+err.Error()
				return
			}
			if stop {
				done = true
				break
			}
			if ch := &c.chunk; ch.HasUsage && ch.PromptTokens == 0 && out.promptTok > 0 {
				// message_delta said only the answer's count: the prompt's
				// came with message_start.
				ch.PromptTokens, ch.HasCached, ch.CachedTokens = out.promptTok, out.hasCached, out.cachedTok
			}
		} else if err := stream.Decode(data, &c.chunk); err != nil {
			out.class, out.msg = ClassMalformedStream, "a stream chunk is not valid JSON: "+err.Error()
			return
		}
		ch := &c.chunk
		if c.rememberModel && c.seenModel == "" {
			c.seenModel = chunkModel(data)
		}
		if ch.Error {
			out.class, out.msg = ClassErrorEvent, "error event: "+scrub(ch.ErrorMessage, c.ep.APIKey)
			return
		}
		if ch.Content || ch.Reasoning {
			if out.chunks == 0 {
				out.ttft = at - out.start
				out.reasoning = !ch.Content
			} else {
				c.itl = append(c.itl, float32(float64(at-last)/float64(time.Millisecond)))
				if at == last {
					out.sameRead++
				}
			}
			if ch.Content && out.ttfa < 0 {
				out.ttfa = at - out.start
			}
			last = at
			out.lastTok = at
			out.chunks++
			if c.details && ch.Content {
				if c.anthropic {
					c.answer = stream.AppendAnthropicText(c.answer, data)
				} else {
					c.answer = stream.AppendContent(c.answer, data)
				}
				c.pieces = append(c.pieces, len(c.answer))
			}
			if c.live != nil {
				c.live.tokens.Add(1)
			}
		}
		if (ch.Content || ch.Reasoning || ch.FinishReason) && out.firstEvent < 0 {
			out.firstEvent = at - out.start
		}
		if ch.FinishReason {
			finished = true
			out.lengthStop = out.lengthStop || ch.FinishLength
		}
		if ch.HasTimings {
			out.hasTimings = true
			out.timingsOut, out.timingsIn = ch.TimingsPredictedN, ch.TimingsPromptN
			out.hasCacheN, out.timingsCache = ch.HasCacheN, ch.TimingsCacheN
			out.hasDraft, out.draftN, out.draftAccepted = ch.HasDraft, ch.TimingsDraftN, ch.TimingsDraftAccepted
			if c.details {
				out.timings, _ = stream.DecodeTimings(data)
			}
		}
		if ch.HasUsage {
			out.hasUsage = true
			out.promptTok = ch.PromptTokens
			out.complTok = ch.CompletionTokens
			out.hasCached, out.cachedTok = ch.HasCached, ch.CachedTokens
		}
	}
	if !done {
		if err := c.rd.Err(); err != nil {
			out.end = c.clock()
			if errors.Is(err, stream.ErrLineTooLong) {
				out.class, out.msg = ClassMalformedStream, "a stream line was longer than the 16 MiB limit"
			} else {
				out.class, out.msg = ClassConnection, "the connection broke mid-stream: "+rootCause(err)
			}
			return
		}
		if !finished {
			out.class, out.msg = ClassEndedEarly, "the stream ended without [DONE] or a finish_reason"
			return
		}
	}
	if out.chunks == 0 {
		out.class, out.msg = ClassEmptyCompletion, "the stream finished without any text"
	}
}

// notSSE reclassifies a 200 answer that ended without one text chunk and
// was not an event stream at all (a server that ignores stream: true and
// answers with one JSON body, or a web page): that is a malformed stream,
// not one that ended early.
func notSSE(out *outcome, contentType string) {
	mt := strings.ToLower(strings.TrimSpace(contentType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	if mt == "" || mt == "text/event-stream" {
		return
	}
	out.class = ClassMalformedStream
	out.msg = fmt.Sprintf("the server answered with %s, not an event stream (text/event-stream): does it support stream: true?", clip.Text(mt, 80))
}

// chunkModel reads the "model" field of a chunk; used by the probe only.
func chunkModel(data []byte) string {
	var m struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(data, &m) != nil {
		return ""
	}
	return clip.Text(m.Model, 200)
}

// cutShort: the server ended the answer at a length limit before the
// max_tokens it was asked: its context (or a slot's share of it) was
// full, so the answer is short for the server's sake, not the model's.
func (o *outcome) cutShort() bool {
	if !o.lengthStop || o.asked <= 0 {
		return false
	}
	got := o.chunks
	if o.hasUsage {
		got = o.complTok
	}
	return got < o.asked
}
