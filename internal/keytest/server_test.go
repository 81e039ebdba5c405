package keytest

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/sim"
)

func TestServer(t *testing.T) {
	t.Parallel()
	ks := NewServer(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, key, func(w http.ResponseWriter, n int64) bool {
		if n != 7 {
			return false
		}
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "echoed "+key)
		return true
	})
	send := func(auth, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ks.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+auth)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	chat := func(n string) string {
		return `{"model":"kovara-sim-8b","max_tokens":2,"messages":[{"role":"user","content":"Request ` + n + `: say hi"}]}`
	}
	tests := []struct {
		name, auth, body string
		code             int
		says             string
	}{
		{"a wrong key is refused and repeated", "sk-wrong-key", chat("1"), http.StatusUnauthorized, "sk-wrong-key"},
		{"the picked request is echoed", key, chat("7"), http.StatusBadGateway, "echoed " + key},
		{"another goes to the simulator", key, chat("8"), http.StatusOK, ""},
	}
	for _, tc := range tests {
		code, body := send(tc.auth, tc.body)
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %d %q, want %d saying %q", tc.name, code, body, tc.code, tc.says)
		}
	}
	if got := ks.Seen(); got != 2 {
		t.Errorf("Seen %d, want the 2 requests with the right key", got)
	}
}
