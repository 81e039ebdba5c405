package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
)

// What a recording sees that is private, each planted where a client or
// a server puts it. A trace has no local section: it is shared as it is
// (the app's Traces tab exports a byte-for-byte copy), so none of these
// may be in it at all.
var tracePlants = []struct{ where, value string }{
	{"the prompt's words", "planted-trace-prompt-words"},
	{"the system prompt's words", "planted-trace-system-words"},
	{"the answer's words", "planted-trace-answer-words"},
	{"the client's bearer key", "planted-trace-bearer-key"},
	{"a key in the query", "planted-trace-query-key"},
	{"an Anthropic client's key", "planted-trace-anthropic-key"},
	{"the server's error message", "planted-trace-server-error"},
	{"the upstream's password", "planted-trace-upstream-pass"},
	{"the upstream's path", "planted-trace-upstream-path"},
}

// TestRecordedTraceHoldsNothingPrivate records, through kovara-bench
// record, a streamed chat, an Anthropic message and a request the server
// failed, with a private text planted in each place a client or the
// server puts one (tracePlants), and finds none of them in the trace —
// what the app's Traces tab exports and a person shares.
func TestRecordedTraceHoldsNothingPrivate(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte("fail this one")):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":{"message":"CUDA out of memory on planted-trace-server-error","type":"server_error"}}`)
		case strings.HasSuffix(r.URL.Path, "/messages"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"planted-trace-answer-words"}],"usage":{"input_tokens":9,"output_tokens":3}}`)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"planted-trace-answer-words"}}]}`+"\n\n")
			io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}}`+"\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(up.Close)
	upstream := strings.Replace(up.URL, "http://", "http://kovara:planted-trace-upstream-pass@", 1) + "/planted-trace-upstream-path/v1"

	port := serverproctest.FreePort(t)
	path := filepath.Join(t.TempDir(), "day.jsonl")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), cliArgsEnv+"="+shellwords.Join([]string{"record", "--upstream", upstream, "--listen", "127.0.0.1:" + port, "-o", path}))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "Recording:") {
		t.Fatalf("the recorder said %q, %v", line, err)
	}
	base := "http://127.0.0.1:" + port

	send := func(path string, header map[string]string, body any) {
		t.Helper()
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	msgs := func(user string) []map[string]string {
		return []map[string]string{{"role": "system", "content": "You are planted-trace-system-words."}, {"role": "user", "content": user}}
	}
	bearer := map[string]string{"Authorization": "Bearer planted-trace-bearer-key"}
	send("/v1/chat/completions?api_key=planted-trace-query-key", bearer,
		map[string]any{"model": "m", "stream": true, "max_tokens": 8, "messages": msgs("Say planted-trace-prompt-words back.")})
	send("/v1/messages", map[string]string{"x-api-key": "planted-trace-anthropic-key"},
		map[string]any{"model": "m", "max_tokens": 8, "messages": []map[string]string{{"role": "user", "content": "planted-trace-prompt-words"}}})
	send("/v1/chat/completions", bearer,
		map[string]any{"model": "m", "stream": true, "max_tokens": 8, "messages": msgs("fail this one: planted-trace-prompt-words")})

	// Each line is written as its request ends, a moment after the
	// client has the answer.
	var reqs []trace.Request
	// A generous bound on a busy machine; the loop ends as soon as the
	// three are there.
	for deadline := time.Now().Add(30 * time.Second); len(reqs) < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		reqs, _, _ = trace.Read(f, 0)
		f.Close()
	}
	if len(reqs) != 3 {
		t.Fatalf("the trace holds %d requests, want the 3 sent", len(reqs))
	}
	// Lines are written as requests end, which on a busy machine need not
	// be the order they were sent in.
	if !slices.ContainsFunc(reqs, func(r trace.Request) bool { return r.Status == http.StatusInternalServerError }) {
		t.Errorf("no request recorded with status 500: the server's failure was not what was recorded (%+v)", reqs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tracePlants {
		if bytes.Contains(data, []byte(p.value)) {
			t.Errorf("the trace holds %s (%q)", p.where, p.value)
		}
	}
}
