package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/trace"
)

// chat is a chat request of the given messages, streamed.
func chat(t testing.TB, msgs ...string) []byte {
	t.Helper()
	type m struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	var ms []m
	for i, s := range msgs {
		role := []string{"assistant", "user"}[i%2] // then user, assistant, user…
		if i == 0 {
			role = "system"
		}
		ms = append(ms, m{role, s})
	}
	b, err := json.Marshal(map[string]any{"model": "m", "messages": ms, "stream": true, "max_tokens": 8})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The turns of one conversation share their prefix's hash ids, another
// conversation shares only the system prompt's, and not a word of any
// prompt reaches the trace; two recordings of the same words have other
// ids (the salt).
func TestPrefixStructureWithoutWords(t *testing.T) {
	t.Parallel()
	cp := loadCapture(t, "llama_chat_stream", "/v1/chat/completions")
	up, _ := replay(t, cp)
	px, _, path := proxyTo(t, up.URL)
	system := strings.Repeat("You answer questions about the rivers of Europe with care. ", 300) // 18 kB: 8 blocks and a part
	turns := [][]byte{
		chat(t, system, "Which river runs through Vienna?"),
		chat(t, system, "Which river runs through Vienna?", "The Danube.", "And through Budapest?"),
		chat(t, system, "Tell me about the Rhine delta."),
	}
	for _, body := range turns {
		resp, err := http.Post(px.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	px.Close()
	reqs := readTrace(t, path)
	if len(reqs) != 3 {
		t.Fatalf("%d lines, want 3", len(reqs))
	}
	shared := func(a, b []int64) int {
		n := 0
		for n < min(len(a), len(b)) && a[n] == b[n] {
			n++
		}
		return n
	}
	first, second, other := reqs[0].HashIDs, reqs[1].HashIDs, reqs[2].HashIDs
	if got, want := shared(first, second), len(first)-1; got != want {
		t.Errorf("the second turn shares %d of the first's %d blocks, want all its whole ones (%d)", got, len(first), want)
	}
	if got, want := shared(first, other), len(system)/trace.BlockBytes; got != want {
		t.Errorf("another conversation shares %d blocks, want the system prompt's whole ones (%d)", got, want)
	}
	// By message, however short: the second turn holds the first's whole
	// prompt (its last message id), the other conversation does not.
	lastOf := func(ids []int64) int64 { return ids[len(ids)-1] }
	if !slices.Contains(reqs[1].MessageIDs, lastOf(reqs[0].MessageIDs)) || slices.Contains(reqs[2].MessageIDs, lastOf(reqs[0].MessageIDs)) {
		t.Errorf("message ids %v, %v, %v: want the second turn to hold the first's whole prompt, the other conversation not", reqs[0].MessageIDs, reqs[1].MessageIDs, reqs[2].MessageIDs)
	}
	if reqs[0].MessageIDs[0] != reqs[2].MessageIDs[0] || len(reqs[1].MessageIDs) != 4 {
		t.Errorf("message ids %v, %v: want the shared system prompt's first, and four for four messages", reqs[0].MessageIDs, reqs[1].MessageIDs)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"rivers", "Vienna", "Danube", "Budapest", "Rhine", "Europe", "assistant", "system"} {
		if bytes.Contains(raw, []byte(word)) {
			t.Errorf("the trace says %q", word)
		}
	}
	// Each recording draws its own salt: the same words, other ids.
	px2, _, path2 := proxyTo(t, up.URL)
	resp, err := http.Post(px2.URL+"/v1/chat/completions", "application/json", bytes.NewReader(turns[0]))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	px2.Close()
	again := readTrace(t, path2)
	if len(again) != 1 || shared(again[0].HashIDs, first) != 0 {
		t.Errorf("another recording's ids match this one's: %v", again)
	}
}

// slowStream is a server that streams n chunks, one every gap, and says
// on cancelled when its client (the proxy) went away before the end.
func slowStream(t *testing.T, n int, gap time.Duration) (*httptest.Server, chan struct{}) {
	cancelled := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range n {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				cancelled <- struct{}{}
				return
			case <-time.After(gap):
			}
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, cancelled
}

// A client that hangs up mid-answer: the server's request is cancelled
// (no answer runs on for nobody), and the trace says so with what came.
func TestClientHangsUp(t *testing.T) {
	t.Parallel()
	up, cancelled := slowStream(t, 200, 20*time.Millisecond)
	px, _, path := proxyTo(t, up.URL)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, px.URL+"/v1/chat/completions", bytes.NewReader(chat(t, "s", "hello")))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the server still answers a client that left")
	}
	px.Close()
	reqs := readTrace(t, path)
	if len(reqs) != 1 || !strings.Contains(reqs[0].Error, "the client hung up") || reqs[0].TTFTMs == nil {
		t.Errorf("trace %+v, want a request the client left with its first token's time", reqs)
	}
}

// A server that cannot be reached: the client gets a 502 that says so
// in JSON a client reads; the trace keeps the request with the reason.
// A server that dies mid-answer: the client's stream ends (it does not
// hang), and the trace says the answer broke off.
func TestServerFails(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	px, _, path := proxyTo(t, dead)
	resp, err := http.Post(px.URL+"/v1/chat/completions", "application/json", bytes.NewReader(chat(t, "s", "hello")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if resp.StatusCode != http.StatusBadGateway || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, "could not reach the server") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	px.Close()
	if reqs := readTrace(t, path); len(reqs) != 1 || reqs[0].Error != "the server could not be reached" {
		t.Errorf("trace %+v", reqs)
	}

	dies := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer dies.Close()
	px2, _, path2 := proxyTo(t, dies.URL)
	resp, err = http.Post(px2.URL+"/v1/chat/completions", "application/json", bytes.NewReader(chat(t, "s", "hello")))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body) // returns: the stream ended
	resp.Body.Close()
	if err == nil || !bytes.Contains(got, []byte(`"content":"a"`)) {
		t.Errorf("the client read %q, %v; want the first token and then an error, not a clean end", got, err)
	}
	px2.Close()
	if reqs := readTrace(t, path2); len(reqs) != 1 || !strings.Contains(reqs[0].Error, "broke off") {
		t.Errorf("trace %+v", reqs)
	}
}

// What is not an inference request passes unrecorded; a prompt longer
// than the proxy keeps passes whole and is hashed as far as it kept.
func TestPassesWhatItDoesNotRecord(t *testing.T) {
	t.Parallel()
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[]}`)
	}))
	defer up.Close()
	px, p, path := proxyTo(t, up.URL)
	p.maxPrompt = 1000
	resp, err := http.Get(px.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"object":"list","data":[]}` {
		t.Errorf("models: %q", b)
	}
	long := chat(t, strings.Repeat("x", 5000), "hi")
	resp, err = http.Post(px.URL+"/v1/chat/completions", "application/json", bytes.NewReader(long))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	px.Close()
	if !bytes.Equal(got, long) {
		t.Errorf("the server got %d bytes of the %d sent", len(got), len(long))
	}
	reqs := readTrace(t, path)
	if len(reqs) != 1 || !strings.Contains(reqs[0].Error, "longer than the 1000 bytes") {
		t.Errorf("trace %+v: want only the chat request, its prompt said too long", reqs)
	}
	if p.Requests() != 1 {
		t.Errorf("%d requests counted", p.Requests())
	}
	if !slices.Contains([]string{trace.APIChat}, reqs[0].API) {
		t.Errorf("api %q", reqs[0].API)
	}
}

// A client that closes its stream at [DONE], before the server's body
// has ended (Go's client does: it reads to the end mark, then closes a
// body it has not read to EOF): its answer was whole, and the trace
// keeps it as one — under load, TestRecordThenReplay's last turn was
// recorded as "the client hung up" and not replayed.
func TestClientClosesAtTheEndMark(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, line := range []string{
			`data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`,
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}`,
			`data: [DONE]`,
		} {
			fmt.Fprintf(w, "%s\n\n", line)
		}
		w.(http.Flusher).Flush()
		select { // the body stays open after the end mark
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(up.Close)
	px, _, path := proxyTo(t, up.URL)
	resp, err := http.Post(px.URL+"/v1/chat/completions", "application/json", bytes.NewReader(chat(t, "s", "hello")))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 256)
	for !bytes.Contains(got, []byte("[DONE]")) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("read %q: %v", got, err)
		}
	}
	resp.Body.Close()
	px.Close()
	reqs := readTrace(t, path)
	if len(reqs) != 1 || reqs[0].Error != "" || reqs[0].OutputLength != 1 {
		t.Errorf("trace %+v, want the whole answer kept without an error", reqs)
	}
}
