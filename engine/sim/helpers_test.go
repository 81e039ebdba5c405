package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// freshConns opens a new connection for every request: the llamacpp
// personality closes its connection after each streamed answer, as
// llama-server does, and a client that reuses it races the close (the
// engine handles that; these tests are about the simulator).
var freshConns = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// startSim serves cfg on a loopback port for the length of the test.
func startSim(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s, base, err := Start(cfg, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

// promptText is a Kovara-style prompt: an instruction with the request
// number, then filler words; words counts every word of the result.
func promptText(n int64, words int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request %d: write", n) // 3 words
	for i := 3; i < words; i++ {
		b.WriteString(" word")
	}
	return b.String()
}

// chatBody builds a request body; extra members are merged in.
func chatBody(model string, n int64, words int, extra map[string]any) []byte {
	m := map[string]any{
		"model":    model,
		"messages": []map[string]any{{"role": "user", "content": promptText(n, words)}},
	}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// streamOpts are the members a benchmark request carries.
func streamOpts(maxTokens int, ignoreEOS bool) map[string]any {
	m := map[string]any{
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     maxTokens,
		"temperature":    0,
	}
	if ignoreEOS {
		m["ignore_eos"] = true
	}
	return m
}

type sseLine struct {
	at   time.Time
	data string // after "data: "
}

type streamResult struct {
	status int
	header http.Header
	body   []byte // the whole body when the status is not 200
	lines  []sseLine
	err    error // the read error that ended the body (nil on a clean EOF)
}

// postStream posts body and reads the response line by line, timing each
// data line when it is read.
func postStream(ctx context.Context, client *http.Client, url string, body []byte) (streamResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return streamResult{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if client == nil {
		client = freshConns
	}
	resp, err := client.Do(req)
	if err != nil {
		return streamResult{}, err
	}
	defer resp.Body.Close()
	res := streamResult{status: resp.StatusCode, header: resp.Header}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		res.body, res.err = io.ReadAll(resp.Body)
		return res, nil
	}
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := rd.ReadString('\n')
		at := time.Now()
		if err != nil {
			switch {
			case !errors.Is(err, io.EOF):
				res.err = err
			case line != "":
				res.err = io.ErrUnexpectedEOF // a partial last line
			}
			return res, nil
		}
		line = strings.TrimRight(line, "\r\n")
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			res.lines = append(res.lines, sseLine{at, d})
		}
	}
}

func mustStream(t *testing.T, url string, body []byte) streamResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := postStream(ctx, nil, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type usageJSON struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Details          *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type chunkJSON struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *usageJSON         `json:"usage"`
	Timings map[string]float64 `json:"timings"`
	Error   *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// summary is what a client would make of a stream.
type summary struct {
	roleChunks  int
	texts       []string
	textAt      []time.Time
	finish      []string // every non-null finish_reason
	usage       *usageJSON
	usageChunks int
	timings     map[string]float64
	done        bool
	afterDone   int
	errorEvents int
	errorType   string
	badJSON     int
	longest     int
}

func summarize(t *testing.T, lines []sseLine) summary {
	t.Helper()
	var s summary
	for _, l := range lines {
		s.longest = max(s.longest, len(l.data))
		if s.done {
			s.afterDone++
			continue
		}
		if l.data == "[DONE]" {
			s.done = true
			continue
		}
		var c chunkJSON
		if err := json.Unmarshal([]byte(l.data), &c); err != nil {
			s.badJSON++
			continue
		}
		if c.Error != nil {
			s.errorEvents++
			s.errorType = c.Error.Type
			continue
		}
		if c.Usage != nil {
			s.usage = c.Usage
			if len(c.Choices) == 0 {
				s.usageChunks++
			}
		}
		if c.Timings != nil {
			s.timings = c.Timings
		}
		for _, ch := range c.Choices {
			if ch.Delta.Role != "" && (ch.Delta.Content == nil || *ch.Delta.Content == "") && ch.FinishReason == nil {
				s.roleChunks++
			}
			if ch.Delta.Content != nil && *ch.Delta.Content != "" {
				s.texts = append(s.texts, *ch.Delta.Content)
				s.textAt = append(s.textAt, l.at)
			}
			if ch.FinishReason != nil {
				s.finish = append(s.finish, *ch.FinishReason)
			}
		}
	}
	return s
}

func getJSON(t *testing.T, url string, v any) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v in %q", url, err, b)
		}
	}
	return resp
}

type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func decodeError(t *testing.T, b []byte) errorBody {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI-style error: %q (%v)", b, err)
	}
	return e
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String()
}

// waitTruth waits for request n's record, which is stored when its handler
// returns.
func waitTruth(t *testing.T, s *Server, n int64) Truth {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if tr, ok := s.Truth(n); ok {
			return tr
		}
	}
	t.Fatalf("no record of request %d: its handler did not return", n)
	return Truth{}
}
