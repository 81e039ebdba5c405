// Package record is the recording proxy (issue #51): an OpenAI-,
// Anthropic-Messages- and Ollama-compatible reverse proxy a person points
// their own clients at instead of their server. It forwards every request
// and every streamed byte unchanged and at once, and writes each
// inference request to a trace (engine/trace) with no text in it: when it
// came, which API, model and lengths, the server's own token counts and
// cache, what the client waited, and the prompt's prefix structure as
// salted block hashes.
package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/trace"
)

// Bounds on what the proxy keeps of one request while it passes: the
// bytes beyond them are forwarded all the same.
const (
	// MaxPromptBytes is how much of a request's body is kept to read its
	// model and hash its prompt: a 200k-token agent prompt with its tool
	// definitions is about 1 MB.
	MaxPromptBytes = 16 << 20
	// maxAnswerBytes is how much of a whole (not streamed) answer is kept
	// to read its usage.
	maxAnswerBytes = 8 << 20
	// maxEventBytes bounds one line of a streamed answer.
	maxEventBytes = 1 << 20
)

// Timeouts of the proxy's own calls to the server. No bound on a whole
// answer: a long one streams for many minutes.
const (
	dialTimeout = 10 * time.Second
	// headerTimeout bounds the wait for the server's first byte of a
	// reply: a 100k-token prompt on a slow CPU can take many minutes to
	// prefill before the server says anything.
	headerTimeout = 30 * time.Minute
)

// Options are what a recording is told.
type Options struct {
	// Upstream is the server's base URL ("http://127.0.0.1:8080").
	Upstream *url.URL
	// Trace receives a line for every inference request.
	Trace *trace.Writer
	// OnRequest, when set, is called after each request's line is
	// written, from the request's goroutine (the app counts them).
	OnRequest func(trace.Request)
}

// Proxy is an http.Handler forwarding to Options.Upstream and writing the
// trace. It owns one transport, used by every request.
type Proxy struct {
	opt   Options
	salt  trace.Salt
	start time.Time // monotonic zero of the trace's timestamps
	rp    *httputil.ReverseProxy
	tr    *http.Transport
	// requests counts the inference requests recorded.
	requests atomic.Int64
	// maxPrompt is MaxPromptBytes (smaller in tests).
	maxPrompt int
}

// New is a proxy for opt; its salt is drawn now and kept only here.
func New(opt Options) (*Proxy, error) {
	if opt.Upstream == nil || opt.Upstream.Host == "" || (opt.Upstream.Scheme != "http" && opt.Upstream.Scheme != "https") {
		return nil, errors.New("the server to record should be an http:// or https:// address, like http://127.0.0.1:8080")
	}
	if opt.Trace == nil {
		return nil, errors.New("record: no trace to write")
	}
	salt, err := trace.NewSalt()
	if err != nil {
		return nil, err
	}
	p := &Proxy{opt: opt, salt: salt, start: time.Now(), maxPrompt: MaxPromptBytes}
	p.tr = &http.Transport{
		Proxy:                 nil, // straight to the server: no environment proxy between
		DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ResponseHeaderTimeout: headerTimeout,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   dialTimeout,
		// Bytes as the server sent them: no gzip asked for on the
		// client's behalf, none undone.
		DisableCompression: true,
	}
	// The server's root: clients send their own paths (/v1/chat/
	// completions, /api/chat), so a base URL given with /v1, as OpenAI
	// clients take it, is the same server.
	up := *opt.Upstream
	up.Path = strings.TrimSuffix(strings.TrimRight(up.Path, "/"), "/v1")
	up.RawPath = ""
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&up) // the server's host in the Host header too
		},
		Transport: retryStale{p.tr},
		// Every write goes to the client at once: a token is never held
		// back for a buffer to fill.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if rec, ok := resp.Request.Context().Value(recKey{}).(*recording); ok {
				rec.status = resp.StatusCode
				rec.kind = bodyKindOf(resp.Header.Get("Content-Type"))
				resp.Body = &tap{rc: resp.Body, rec: rec}
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			rec, _ := r.Context().Value(recKey{}).(*recording)
			if r.Context().Err() != nil {
				if rec != nil {
					rec.fail("the client hung up before the server answered")
				}
				return
			}
			msg := "the proxy could not reach the server at " + up.Redacted() + ": " + err.Error()
			if rec != nil {
				rec.fail("the server could not be reached")
			}
			body, _ := json.Marshal(map[string]map[string]string{"error": {"message": msg, "type": "proxy_error"}})
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			w.Write(body)
		},
		// What went wrong is in the trace, in words; the reverse proxy's
		// own log lines would only repeat it on the terminal.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return p, nil
}

// Requests is how many inference requests were recorded so far.
func (p *Proxy) Requests() int64 { return p.requests.Load() }

// Close lets go of the proxy's idle connections to the server.
func (p *Proxy) Close() { p.tr.CloseIdleConnections() }

type recKey struct{}

// ServeHTTP forwards r; an inference request is recorded on its way.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api := apiOf(r.Method, r.URL.Path)
	if api == "" {
		p.rp.ServeHTTP(w, r)
		return
	}
	rec := &recording{p: p, api: api, path: r.URL.Path, arrived: time.Now(), ctx: r.Context()}
	rec.body = readBody(r, p.maxPrompt)
	ctx := context.WithValue(r.Context(), recKey{}, rec)
	// Deferred: where the answer broke off, the reverse proxy ends the
	// client's connection by panicking with http.ErrAbortHandler, and the
	// request is written all the same.
	defer rec.finish()
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

// apiOf is the API of an inference request, "" for anything else (the
// model list, health, props: forwarded, not recorded).
func apiOf(method, path string) string {
	if method != http.MethodPost {
		return ""
	}
	p := strings.TrimSuffix(path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
		return trace.APIChat
	case strings.HasSuffix(p, "/completions"):
		return trace.APICompletions
	case strings.HasSuffix(p, "/v1/messages"):
		return trace.APIAnthropic
	case p == "/api/chat":
		return trace.APIOllamaChat
	case p == "/api/generate":
		return trace.APIOllamaGen
	}
	return ""
}

// capture is what the proxy kept of a request's body: all of it, or
// its first max bytes (over).
type capture struct {
	buf  []byte
	max  int
	over bool
}

// readBody reads r's body before it goes on, up to max bytes: a chat
// request's body is all there when its head is, so reading it first
// costs nothing, and a body in hand can be sent again — which the
// transport does when the server closed a kept-alive connection just as
// the request took it (llama-server did, between two turns of a chat:
// a 502 for nothing). A longer body goes on as it comes, its first max
// bytes kept.
func readBody(r *http.Request, max int) *capture {
	c := &capture{max: max}
	if r.Body == nil || r.Body == http.NoBody {
		return c
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, int64(max)+1))
	if err != nil || len(buf) > max {
		// Cut short by the client, or longer than kept: what was read
		// goes first, the rest after it.
		c.buf, c.over = buf[:min(len(buf), max)], len(buf) > max
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		return c
	}
	r.Body.Close()
	c.buf = buf
	r.ContentLength = int64(len(buf))
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	return c
}

// kept is the body as kept and whether it was all of it.
func (c *capture) kept() ([]byte, bool) { return c.buf, !c.over }
