package engine

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/stream"
)

// The captures in testdata/llamacpp-b9749 are what a real llama.cpp
// llama-server (build b9749, CPU, a tiny random-weight model, -np 8
// --metrics) answered: response headers and the raw bytes of /v1/models,
// /props, /metrics and streamed chat answers (with usage and timings, a
// repeat of the same prompt served from its prompt cache, one without
// stream_options, and one from a server drafting with
// --spec-type draft-simple). The apikey-* captures are what another one,
// started with --api-key (-np 2 -c 16384), answered without the key: its
// model list, and 401 for /props and the chat request (replayed by
// apiKeyLlama). docs/servers.md says how they were made.

const llamaCaptures = "testdata/llamacpp-b9749"

func capture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(llamaCaptures, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// captureHeader reads a captured response head (status line and headers).
func captureHeader(t *testing.T, name string) http.Header {
	t.Helper()
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(capture(t, name))))
	if _, err := r.ReadLine(); err != nil {
		t.Fatal(err)
	}
	h, err := r.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	return http.Header(h)
}

// serveCapture answers with a capture's headers and bytes as the server
// sent them (the length and chunking are the test server's own).
func serveCapture(t *testing.T, w http.ResponseWriter, headers, body string) {
	t.Helper()
	for k, v := range captureHeader(t, headers) {
		if k != "Content-Length" && k != "Transfer-Encoding" {
			w.Header()[k] = v
		}
	}
	w.Write(capture(t, body))
}

// replayLlama serves the captures as llama-server did: the same headers
// and bytes, and the connection closed after every streamed answer. stream
// names the capture every chat request gets.
func replayLlama(t *testing.T, stream *atomic.Value) string {
	t.Helper()
	return replayLlamaServer(t, "", func(w http.ResponseWriter, r *http.Request) {
		serveCapture(t, w, "stream.headers", stream.Load().(string))
	})
}

// replayLlamaServer serves llama-server's captured /v1/models, /props
// (each named with prefix, as "context-" for the context plan's server)
// and /metrics, and chat requests through chat; the connection is closed
// after every chat answer, as llama-server does.
func replayLlamaServer(t *testing.T, prefix string, chat http.HandlerFunc) string {
	t.Helper()
	var conns closeMarks
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			serveCapture(t, w, prefix+"models.headers", prefix+"models.json")
		case "/props":
			serveCapture(t, w, prefix+"props.headers", prefix+"props.json")
		case "/metrics":
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write(capture(t, "metrics.txt"))
		case "/v1/chat/completions":
			chat(w, r)
			conns.mark(r)
		default:
			http.NotFound(w, r)
		}
	}))
	hs.Config.ConnContext = conns.remember
	hs.Config.ConnState = conns.closeIdle
	hs.Start()
	t.Cleanup(hs.Close)
	return hs.URL
}

// closeMarks closes a connection once the response that marked it is
// complete, as llama-server does after a streamed answer.
type closeMarks struct{ marked sync.Map }

type connKey struct{}

func (m *closeMarks) remember(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

func (m *closeMarks) mark(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
		m.marked.Store(c, true)
	}
}

func (m *closeMarks) closeIdle(c net.Conn, st http.ConnState) {
	if _, ok := m.marked.Load(c); ok && st == http.StateIdle {
		m.marked.Delete(c)
		c.Close()
	}
}

// TestLlamaCppCaptures decodes what llama-server b9749 sent, chunk by
// chunk, through the app's own reader and decoder.
func TestLlamaCppCaptures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file                     string
		texts                    int
		prompt, completion       int
		cached, cacheN, promptN  int
		hasUsage                 bool
		draftN, draftAccepted    int
		finishWithTimings, total bool
	}{
		{file: "stream.sse", texts: 8, prompt: 22, completion: 8, cached: 0, cacheN: 0, promptN: 22, hasUsage: true},
		{file: "stream-cached.sse", texts: 8, prompt: 22, completion: 8, cached: 21, cacheN: 21, promptN: 1, hasUsage: true},
		{file: "stream-nousage.sse", texts: 4, cacheN: 4, promptN: 17, finishWithTimings: true},
		{file: "spec-stream.sse", texts: 64, prompt: 22, completion: 64, promptN: 22, hasUsage: true, draftN: 47, draftAccepted: 47},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			rd := stream.NewReader(bytes.NewReader(capture(t, tc.file)), func() time.Duration { return 0 }, 0)
			var texts int
			var usage, timings stream.Chunk
			done := false
			for rd.Next() {
				if string(rd.Data()) == "[DONE]" {
					done = true
					break
				}
				var c stream.Chunk
				if err := stream.Decode(rd.Data(), &c); err != nil {
					t.Fatalf("chunk %q: %v", rd.Data(), err)
				}
				if c.Content {
					texts++
				}
				if c.HasUsage {
					usage = c
				}
				if c.HasTimings {
					timings = c
					if c.FinishReason != tc.finishWithTimings {
						t.Errorf("timings with the finish_reason: %v, want %v", c.FinishReason, tc.finishWithTimings)
					}
				}
			}
			if err := rd.Err(); err != nil || !done {
				t.Fatalf("done %v, err %v", done, err)
			}
			if texts != tc.texts {
				t.Errorf("text chunks %d, want %d", texts, tc.texts)
			}
			if usage.HasUsage != tc.hasUsage || usage.PromptTokens != tc.prompt || usage.CompletionTokens != tc.completion ||
				(tc.hasUsage && (!usage.HasCached || usage.CachedTokens != tc.cached)) {
				t.Errorf("usage %+v", usage)
			}
			if !timings.HasTimings || !timings.HasCacheN || timings.TimingsCacheN != tc.cacheN || timings.TimingsPromptN != tc.promptN {
				t.Errorf("timings %+v, want cache_n %d prompt_n %d", timings, tc.cacheN, tc.promptN)
			}
			if timings.HasDraft != (tc.draftN > 0) || timings.TimingsDraftN != tc.draftN || timings.TimingsDraftAccepted != tc.draftAccepted {
				t.Errorf("drafts %+v, want %d of %d", timings, tc.draftAccepted, tc.draftN)
			}
		})
	}
}

// TestLlamaCppReplay: the endpoint check detects llama.cpp b9749 and its
// per-slot context from the captures, and requests on one slot all succeed
// against a server that closes the connection after each answer, reading
// the cache counts it reports.
func TestLlamaCppReplay(t *testing.T) {
	var which atomic.Value
	which.Store("stream.sse")
	url := replayLlama(t, &which)
	r, err := newSession(setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.check(context.Background(), "", false); err != nil {
		t.Fatal(err)
	}
	d := r.detection
	if d.Family != results.FamilyLlamaCpp || d.Version != "b9749-d32676d77" || d.ContextLength != 16384 || d.ParallelSlots != 8 || r.model != "models/tiny.gguf" {
		t.Errorf("detection %+v, model %q", d, r.model)
	}

	cn := r.newConn()
	defer cn.close()
	opts := requestOpts{model: r.model, maxTokens: 8, words: 10, streamOptions: true, ignoreEOS: true}
	for i := range 6 {
		if i == 3 {
			which.Store("stream-cached.sse")
		}
		out := cn.do(context.Background(), opts, int64(i), 10*time.Second)
		if !out.ok() || out.chunks != 8 || out.complTok != 8 || out.promptTok != 22 || !out.hasCached || !out.hasCacheN {
			t.Fatalf("request %d: %+v", i, out)
		}
		if want := map[bool]int{false: 0, true: 21}[i >= 3]; out.cachedTok != want || out.timingsCache != want {
			t.Errorf("request %d: cached %d, cache_n %d, want %d", i, out.cachedTok, out.timingsCache, want)
		}
	}
	if cn.stats.Reconnects < 5 || r.closes.Load() < learnedCloses {
		t.Errorf("stats %+v, closes seen %d", cn.stats, r.closes.Load())
	}
	m, err := ParseServerMetrics(bytes.NewReader(capture(t, "metrics.txt")))
	if err != nil || m.Family != results.FamilyLlamaCpp || m.Running == nil || m.Waiting == nil {
		t.Errorf("metrics: %+v, %v", m, err)
	}
	if strings.Contains(string(capture(t, "metrics.txt")), "kv_cache_usage_ratio") {
		t.Log("b9749's /metrics has a KV-cache gauge after all")
	}
}
