package keytest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kovara/desktop/engine/sim"
)

// Server is the simulator behind a bearer-key check, as a server that
// repeats what it is sent would be: a wrong key is refused (401) with that
// key repeated in the error.
type Server struct {
	URL  string
	seen atomic.Int64 // requests with the right key
}

// Seen is how many requests came with the right key.
func (s *Server) Seen() int64 { return s.seen.Load() }

// numberRE finds a measured request's number in its prompt (the prompt
// generator's "Request N:").
var numberRE = regexp.MustCompile(`Request (\d+):`)

// Echo answers measured request n itself, to repeat the key in its
// answer, and says whether it did; when it did not, the simulator
// answers.
type Echo func(w http.ResponseWriter, n int64) bool

// NewServer serves the simulator (cfg) behind key until the test ends;
// echo, when not nil, picks measured requests to answer itself.
func NewServer(t testing.TB, cfg sim.Config, key string, echo Echo) *Server {
	t.Helper()
	ks := &Server{}
	s := sim.New(cfg)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if auth != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"invalid api key %s"}}`, strings.TrimPrefix(auth, "Bearer "))
			return
		}
		ks.seen.Add(1)
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && echo != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if m := numberRE.FindSubmatch(body); m != nil {
				if n, _ := strconv.ParseInt(string(m[1]), 10, 64); echo(w, n) {
					return
				}
			}
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); s.Close() })
	ks.URL = ts.URL
	return ks
}
