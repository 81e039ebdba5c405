package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTokensPerWord: a tokenizer that makes more tokens than words counts
// each prompt word as TokensPerWord tokens, and the llamacpp personality
// refuses a prompt longer than its context in llama-server's own words,
// with both numbers (b9749; docs/servers.md).
func TestTokensPerWord(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{Personality: LlamaCpp, TokensPerWord: 1.3, ContextLength: 200, TokenInterval: time.Millisecond, PrefillRate: 1e6})
	fits := summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", 1, 100, streamOpts(2, true))).lines)
	if u := fits.usage; u == nil || u.PromptTokens != 130+11 {
		t.Fatalf("usage %+v, want 141 prompt tokens (100 words × 1.3 and the template)", u)
	}
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(chatBody("kovara-sim-8b", 2, 150, streamOpts(2, true))))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	want := "request (206 tokens) exceeds the available context size (200 tokens), try increasing it"
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body.Error.Message, want) {
		t.Errorf("HTTP %d %q, want 400 %q", resp.StatusCode, body.Error.Message, want)
	}
}
