package sim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func BenchmarkHandlerSetup(b *testing.B) {
	s := New(Config{TokenInterval: time.Microsecond, PrefillRate: 1e12})
	words := strings.Repeat("apple river ", 128)
	body := []byte(`{"model":"kovara-sim-8b","messages":[{"role":"user","content":"Write a long story that uses the following words. Request 12: ` + words + `"}],"max_tokens":1,"temperature":0,"stream":true,"stream_options":{"include_usage":true},"ignore_eos":true}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
	}
}
