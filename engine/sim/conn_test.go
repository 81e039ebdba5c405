package sim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// rawExchange sends one HTTP/1.1 request over c and returns the response
// head and body as read from the wire.
func rawExchange(t *testing.T, c net.Conn, br *bufio.Reader, method, path string, body []byte) (*http.Response, string) {
	t.Helper()
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		method, path, len(body), body)
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// closedWithin reports whether the server closes c within d: a read ends
// with EOF (or a reset) rather than the deadline.
func closedWithin(c net.Conn, br *bufio.Reader, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := br.ReadByte()
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestCloseAfterStream: the llamacpp personality answers a stream with
// llama-server's Keep-Alive header and no Connection: close, then closes
// the connection once the answer is complete (seen on llama-server b9749:
// curl finds the connection dead before its next request). Other answers
// keep the connection, and other personalities keep it after streams.
func TestCloseAfterStream(t *testing.T) {
	t.Parallel()
	off := false
	cases := []struct {
		name       string
		cfg        Config
		wantHeader string
		wantClose  bool
	}{
		{"llamacpp", Config{Personality: LlamaCpp}, "timeout=5, max=100", true},
		{"llamacpp kept open", Config{Personality: LlamaCpp, CloseAfterStream: &off}, "timeout=5, max=100", false},
		{"vllm", Config{}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.cfg.TokenInterval, tc.cfg.PrefillRate = time.Millisecond, 1e6
			_, url := startSim(t, tc.cfg)
			c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			// A non-streamed answer never closes the connection.
			if resp, _ := rawExchange(t, c, br, "GET", "/v1/models", nil); resp.StatusCode != 200 {
				t.Fatalf("GET /v1/models: %s", resp.Status)
			}
			if closedWithin(c, br, 50*time.Millisecond) {
				t.Fatal("the connection closed after GET /v1/models")
			}
			resp, body := rawExchange(t, c, br, "POST", "/v1/chat/completions", chatBody("kovara-sim-8b", 1, 20, streamOpts(4, true)))
			if got := resp.Header.Get("Keep-Alive"); got != tc.wantHeader {
				t.Errorf("Keep-Alive = %q, want %q", got, tc.wantHeader)
			}
			if resp.Close {
				t.Error("the answer says Connection: close; llama-server does not warn the client")
			}
			if !strings.HasSuffix(body, "data: [DONE]\n\n") {
				t.Errorf("the stream did not end with [DONE]: %q", body[max(0, len(body)-80):])
			}
			if got := closedWithin(c, br, 2*time.Second); got != tc.wantClose {
				t.Errorf("closed after the streamed answer: %v, want %v", got, tc.wantClose)
			}
		})
	}
}

// TestKeepAliveIdle: a kept-alive connection that waits longer than
// KeepAliveIdle for its next request is closed by the server.
func TestKeepAliveIdle(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{KeepAliveIdle: 100 * time.Millisecond})
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	rawExchange(t, c, br, "GET", "/v1/models", nil)
	if !closedWithin(c, br, 5*time.Second) {
		t.Error("an idle connection stayed open past KeepAliveIdle")
	}
}

// TestPromptCache: a prompt whose leading words an earlier request sent is
// partly served from cache, and the llamacpp personality says so as
// llama-server does (usage.prompt_tokens_details.cached_tokens, timings'
// cache_n with prompt_n the rest); vLLM's counters move by the same.
func TestPromptCache(t *testing.T) {
	t.Parallel()
	t.Run("llamacpp", func(t *testing.T) {
		t.Parallel()
		_, url := startSim(t, Config{Personality: LlamaCpp, TokenInterval: time.Millisecond, PrefillRate: 1e6})
		send := func(n int64, words int) summary {
			return summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", n, words, streamOpts(2, true))).lines)
		}
		cold := send(1, 100)
		warm := send(1, 100)
		longer := send(1, 140) // the same words and 40 more
		other := send(2, 100)
		const prompt = 100 + 11
		cases := []struct {
			name         string
			s            summary
			prompt, hits int
		}{
			{"first", cold, prompt, 0},
			{"repeat", warm, prompt, 96 + 11}, // six whole blocks of 16 words, and the template
			{"longer", longer, 151, 96 + 11},  // its first 96 words were seen
			// Another number: no block in common, but llama.cpp's slot
			// cache matches to the token, so the start both share
			// ("Request") and the template are served from cache.
			{"other request", other, prompt, 1 + 11},
		}
		for _, tc := range cases {
			u := tc.s.usage
			if u == nil || u.Details == nil {
				t.Fatalf("%s: no usage.prompt_tokens_details", tc.name)
			}
			if u.PromptTokens != tc.prompt || u.Details.CachedTokens != tc.hits {
				t.Errorf("%s: prompt %d cached %d, want %d and %d", tc.name, u.PromptTokens, u.Details.CachedTokens, tc.prompt, tc.hits)
			}
			if got, want := tc.s.timings["cache_n"], float64(tc.hits); got != want {
				t.Errorf("%s: timings.cache_n %v, want %v", tc.name, got, want)
			}
			if got, want := tc.s.timings["prompt_n"], float64(tc.prompt-tc.hits); got != want {
				t.Errorf("%s: timings.prompt_n %v, want %v (the tokens evaluated)", tc.name, got, want)
			}
		}
	})
	t.Run("vllm counters", func(t *testing.T) {
		t.Parallel()
		on := true
		s, url := startSim(t, Config{PromptCache: &on, TokenInterval: time.Millisecond, PrefillRate: 1e6})
		mustStream(t, url, chatBody("kovara-sim-8b", 1, 100, streamOpts(2, true)))
		mustStream(t, url, chatBody("kovara-sim-8b", 1, 100, streamOpts(2, true)))
		text := string(s.metricsText())
		for _, want := range []string{
			`vllm:prefix_cache_queries_total{engine="0",model_name="kovara-sim-8b"} 222`,
			`vllm:prefix_cache_hits_total{engine="0",model_name="kovara-sim-8b"} 107`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}
