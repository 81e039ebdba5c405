package sim

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAPIKeyOpensOnlyTheModelList: with Config.APIKey the simulator does
// what llama-server b9749 started with --api-key did
// (engine/testdata/llamacpp-b9749/apikey-*): the model list and /health
// answer anyone; chat, /props and /metrics answer 401 "Invalid API Key"
// and close the connection, unless the request carries the key.
func TestAPIKeyOpensOnlyTheModelList(t *testing.T) {
	t.Parallel()
	_, base := startSim(t, Config{Personality: LlamaCpp, APIKey: "sim-key-42", TokenInterval: time.Millisecond, PrefillRate: 1e6})
	chat := `{"model":"kovara-sim-8b","messages":[{"role":"user","content":"Request 1: write"}],"max_tokens":2,"stream":true}`
	tests := []struct {
		method, path, key string
		status            int
	}{
		{"GET", "/v1/models", "", 200},
		{"GET", "/health", "", 200},
		{"GET", "/props", "", 401},
		{"GET", "/metrics", "", 401},
		{"POST", "/v1/chat/completions", "", 401},
		{"POST", "/v1/chat/completions", "wrong", 401},
		{"POST", "/v1/chat/completions", "sim-key-42", 200},
		{"GET", "/props", "sim-key-42", 200},
	}
	for _, tc := range tests {
		var body io.Reader
		if tc.method == "POST" {
			body = strings.NewReader(chat)
		}
		req, err := http.NewRequest(tc.method, base+tc.path, body)
		if err != nil {
			t.Fatal(err)
		}
		if tc.key != "" {
			req.Header.Set("Authorization", "Bearer "+tc.key)
		}
		resp, err := freshConns.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s key %q: %d, want %d", tc.method, tc.path, tc.key, resp.StatusCode, tc.status)
			continue
		}
		if tc.status == 401 {
			if got := string(b); got != `{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}` || !resp.Close {
				t.Errorf("%s %s: body %q, close %v", tc.method, tc.path, got, resp.Close)
			}
		}
	}
}
