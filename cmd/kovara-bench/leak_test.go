package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/internal/keytest"
	"github.com/kovara/desktop/storage"
)

// Secrets: a server that repeats the key it was sent (in error bodies, in
// error events, cut at any length) must not get it into anything the app
// writes or prints, whole or in part.

// leakKey is long and random-looking so that any 10 of its characters in
// a row are a leak, not a coincidence.
const leakKey = "sk-kvr-9f3c2a71b0de44c8a5e6f70d1b2c3a4e5f60718293"

// pad puts the key where a message of limit bytes would cut it, at, after
// cut characters of it.
func pad(limit, cut int, key string) string {
	return strings.Repeat("x", limit-cut) + key + " end"
}

func TestEchoedKeyNeverWritten(t *testing.T) {
	home := withHome(t)
	const requests = 12
	first := prompt.MeasuredRequest(0, requests, 0, 0)
	sse := func(w http.ResponseWriter, lines ...string) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range lines {
			io.WriteString(w, l+"\n\n")
		}
	}
	token := `data: {"choices":[{"index":0,"delta":{"content":" hi"}}]}`
	echo := map[int64]func(http.ResponseWriter, string){
		// Whole key in an OpenAI error body, a plain-text body and a header.
		first + 0: func(w http.ResponseWriter, k string) {
			w.Header().Set("X-Echo", k)
			w.WriteHeader(429)
			fmt.Fprintf(w, `{"error":{"message":"rate limit for key %s"}}`, k)
		},
		first + 1: func(w http.ResponseWriter, k string) { w.WriteHeader(500); io.WriteString(w, "Bearer "+k+" crashed") },
		// Cut by the 200-byte message limit partway through the key.
		first + 2: func(w http.ResponseWriter, k string) {
			w.WriteHeader(503)
			fmt.Fprintf(w, `{"error":{"message":%q}}`, pad(200, 12, k))
		},
		first + 3: func(w http.ResponseWriter, k string) { w.WriteHeader(400); io.WriteString(w, pad(200, 20, k)) },
		// Error events: in JSON, and as an SSE "event: error" with raw data.
		first + 4: func(w http.ResponseWriter, k string) {
			sse(w, token, `data: {"error":{"message":"upstream refused `+k+`"}}`)
		},
		first + 5: func(w http.ResponseWriter, k string) {
			sse(w, token, fmt.Sprintf(`data: {"error":{"message":%q}}`, pad(200, 15, k)))
		},
		first + 6: func(w http.ResponseWriter, k string) { sse(w, token, "event: error\ndata: bad key "+k) },
		first + 7: func(w http.ResponseWriter, k string) { sse(w, token, "event: error\ndata: "+pad(200, 11, k)) },
		first + 8: func(w http.ResponseWriter, k string) { sse(w, token, `data: {"object":"error","message":"key `+k+`"}`) },
		// Where a stream breaks, the key in the broken line.
		first + 9: func(w http.ResponseWriter, k string) { sse(w, token, `data: {"choices":[`+k) },
	}
	url := keytest.NewServer(t, fast(), leakKey, func(w http.ResponseWriter, n int64) bool {
		if h := echo[n]; h != nil {
			h(w, leakKey)
			return true
		}
		return false
	}).URL
	t.Setenv("KOVARA_LEAK_KEY", leakKey)
	out := filepath.Join(home, "data", "copy.json")
	code, stdout, stderr := runCLI("run", "--endpoint", url, "--api-key-env", "KOVARA_LEAK_KEY", "-o", out,
		"--concurrency", "1", "--requests", strconv.Itoa(requests), "--warmup", "0", "--input-tokens", "16", "--output-tokens", "4")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readResults(t, out)
	if lv := f.Local.Levels[0]; f.Runs[0].Metrics.RequestsOK != requests-len(echo) {
		t.Errorf("ok %d, errors %v", f.Runs[0].Metrics.RequestsOK, lv.Errors)
	}
	if where := keytest.Find(stdout+stderr, leakKey); where != "" {
		t.Errorf("printed: %s", where)
	}
	if n := keytest.ScanTree(t, home, leakKey); n < 3 {
		t.Errorf("scanned %d files", n)
	}
	// The library's own copy, and what history, compare and validate print.
	for _, args := range [][]string{{"history"}, {"validate", out}, {"compare", out, out}} {
		_, o, e := runCLI(args...)
		if where := keytest.Find(o+e, leakKey); where != "" {
			t.Errorf("%v prints %s", args, where)
		}
	}
	data, _ := os.ReadFile(out)
	if !strings.Contains(string(data), "[api key]") {
		t.Errorf("the key was not replaced in the messages kept:\n%v", f.Local.Levels[0].Messages)
	}
}

// A wrong key, a key the server repeats while refusing it, and failures
// at each stage before the levels: the errors say what is wrong without
// the key.
func TestEchoedKeyNeverInErrors(t *testing.T) {
	home := withHome(t)
	stage := func(h http.HandlerFunc) string {
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
		return ts.URL
	}
	s := sim.New(fast())
	t.Cleanup(func() { s.Close() })
	modelsThen := func(chat http.HandlerFunc) string {
		return stage(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") {
				chat(w, r)
				return
			}
			s.ServeHTTP(w, r)
		})
	}
	k := leakKey
	tests := []struct {
		name string
		url  string
		want string
	}{
		{"models refused, key repeated", stage(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			fmt.Fprintf(w, `{"error":{"message":"key %s is not allowed"}}`, r.Header.Get("Authorization"))
		}), "check the key"},
		{"models refused, key cut", stage(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"detail":%q}`, pad(200, 14, k))
		}), "check the key"},
		{"not a list, key in it", stage(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"object":"list","key":%q}`, k)
		}), "model list"},
		{"probe refused, key repeated", modelsThen(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"message":"engine failed for %s"}`, k)
		}), "probing"},
		{"probe refused, key cut", modelsThen(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, pad(200, 9, k))
		}), "probing"},
		{"probe error event, key cut", modelsThen(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: error\ndata: "+pad(200, 17, k)+"\n\n")
		}), "probing"},
	}
	t.Setenv("KOVARA_LEAK_KEY", k)
	for _, tc := range tests {
		code, stdout, stderr := runCLI("run", "--endpoint", tc.url, "--api-key-env", "KOVARA_LEAK_KEY", "--requests", "1", "--concurrency", "1", "--warmup", "0")
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want a failure mentioning %q", tc.name, code, stderr, tc.want)
		}
		if where := keytest.Find(stdout+stderr, k); where != "" {
			t.Errorf("%s: printed %s", tc.name, where)
		}
		t.Logf("%s: %s", tc.name, strings.TrimSpace(stderr))
	}
	keytest.ScanTree(t, home, k)
	// Saved endpoints hold no key, whatever the keyring does.
	store := storage.OpenEndpoints(filepath.Join(home, "config"))
	if err := store.Put(storage.SavedEndpoint{Name: "box", URL: "http://127.0.0.1:1", VerifyTLS: true}, ""); err != nil {
		t.Fatal(err)
	}
	keytest.ScanTree(t, home, k)
}
