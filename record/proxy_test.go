package record

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kovara/desktop/engine/trace"
)

// capture is one answer a real server gave (testdata/SOURCES.md).
type captured struct {
	name, path string
	request    []byte
	ctype      string
	body       []byte
}

func loadCapture(t *testing.T, name, path string) captured {
	t.Helper()
	read := func(ext string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name+ext))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return captured{name: name, path: path, request: read(".request.json"), ctype: strings.TrimSpace(string(read(".ctype"))), body: read(".body")}
}

// replay is a server that answers every request with c's bytes, a line
// at a time as a streaming server sends them, and keeps what it was sent.
func replay(t *testing.T, c captured) (*httptest.Server, *[][]byte) {
	t.Helper()
	var mu sync.Mutex
	var got [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Header().Set("Content-Type", c.ctype)
		sc := bufio.NewScanner(bytes.NewReader(c.body))
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			if i := bytes.IndexByte(data, '\n'); i >= 0 {
				return i + 1, data[:i+1], nil
			}
			if atEOF && len(data) > 0 {
				return len(data), data, nil
			}
			return 0, nil, nil
		})
		for sc.Scan() {
			w.Write(sc.Bytes())
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// proxyTo is a recording proxy in front of upstream, its trace in a file.
func proxyTo(t testing.TB, upstream string) (*httptest.Server, *Proxy, string) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Upstream: u, Trace: w})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Close(); w.Close() })
	return srv, p, path
}

func readTrace(t *testing.T, path string) []trace.Request {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs, cut, err := trace.Read(f, 0)
	if err != nil || cut != 0 {
		t.Fatalf("the trace: %v (%d cut)", err, cut)
	}
	return reqs
}

// Every API the proxy knows, each answer a real server's: the client
// gets the server's bytes unchanged, the server the client's, and the
// trace says the request as the server counted it.
func TestForwardsAndRecordsEveryAPI(t *testing.T) {
	for _, c := range []struct {
		name, path, api     string
		stream              bool
		input, output, maxT int
	}{
		{"llama_chat_stream", "/v1/chat/completions", trace.APIChat, true, 27, 12, 12},
		{"llama_chat_whole", "/v1/chat/completions", trace.APIChat, false, 27, 12, 12},
		// A second turn: llama.cpp evaluated 25 of its 52 prompt tokens,
		// the first 27 (the first turn's) came from its cache.
		{"llama_chat_stream_turn2", "/v1/chat/completions", trace.APIChat, true, 52, 12, 12},
		{"llama_completions_stream", "/v1/completions", trace.APICompletions, true, 5, 12, 12},
		{"ollama_chat_stream", "/api/chat", trace.APIOllamaChat, true, 27, 12, 12},
		{"ollama_chat_whole", "/api/chat", trace.APIOllamaChat, false, 27, 12, 12},
		{"ollama_generate_stream", "/api/generate", trace.APIOllamaGen, true, 14, 12, 12},
		{"ollama_messages_stream", "/v1/messages", trace.APIAnthropic, true, 27, 12, 12},
		{"ollama_messages_whole", "/v1/messages", trace.APIAnthropic, false, 27, 12, 12},
		{"ollama_openai_chat_stream", "/v1/chat/completions", trace.APIChat, true, 27, 12, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cp := loadCapture(t, c.name, c.path)
			up, sent := replay(t, cp)
			px, _, path := proxyTo(t, up.URL)
			resp, err := http.Post(px.URL+c.path, "application/json", bytes.NewReader(cp.request))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, cp.body) {
				t.Errorf("the client got %d bytes, not the server's %d", len(got), len(cp.body))
			}
			if ct := resp.Header.Get("Content-Type"); ct != cp.ctype {
				t.Errorf("Content-Type %q, want %q", ct, cp.ctype)
			}
			if len(*sent) != 1 || !bytes.Equal((*sent)[0], cp.request) {
				t.Errorf("the server got %q, want the client's request", *sent)
			}
			px.Close() // the handler has returned: its line is written
			reqs := readTrace(t, path)
			if len(reqs) != 1 {
				t.Fatalf("%d lines, want 1", len(reqs))
			}
			q := reqs[0]
			if q.API != c.api || q.Path != c.path || q.Stream != c.stream || q.MaxTokens != c.maxT {
				t.Errorf("api %q path %q stream %v max %d; want %q %q %v %d", q.API, q.Path, q.Stream, q.MaxTokens, c.api, c.path, c.stream, c.maxT)
			}
			if q.InputLength != c.input || q.OutputLength != c.output || q.Usage != trace.UsageServer {
				t.Errorf("tokens %d in, %d out (%s); want %d, %d from the server", q.InputLength, q.OutputLength, q.Usage, c.input, c.output)
			}
			if q.Error != "" || q.Status != 200 {
				t.Errorf("status %d, error %q", q.Status, q.Error)
			}
			if c.stream != (q.TTFTMs != nil) {
				t.Errorf("time to first token %v for a stream %v", q.TTFTMs, c.stream)
			}
			if len(q.HashIDs) == 0 || q.PromptBytes == 0 || q.BlockBytes != trace.BlockBytes {
				t.Errorf("prompt %d bytes, %d blocks of %d", q.PromptBytes, len(q.HashIDs), q.BlockBytes)
			}
			if c.name == "llama_chat_stream_turn2" && (q.CachedTokens == nil || *q.CachedTokens != 27) {
				t.Errorf("cached %v, want the first turn's 27 tokens", q.CachedTokens)
			}
			if q.Model == "" && strings.HasPrefix(c.name, "ollama") {
				t.Error("no model")
			}
		})
	}
}
