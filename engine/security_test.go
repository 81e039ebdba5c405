package engine

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// seenAuth records what a test server was sent.
type seenAuth struct {
	mu       sync.Mutex
	requests int
	auth     []string // every Authorization header value it saw
}

func (s *seenAuth) note(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if a := r.Header.Get("Authorization"); a != "" {
		s.auth = append(s.auth, a)
	}
}

func (s *seenAuth) get() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, append([]string(nil), s.auth...)
}

// TestRedirectNeverCarriesTheKey: an endpoint that redirects its API to a
// second server (another host name, or the same address on another port)
// never gets the key to that server, and the user is told where the API
// moved. The runs are refused with a sentence at the check when the model
// list is redirected, and each redirected chat request inside a level is
// an error of its own class while the run goes on.
func TestRedirectNeverCarriesTheKey(t *testing.T) {
	t.Parallel()
	const key = "sk-redirect-test-7f3a91"
	// The second server: a real simulator, so a client that followed the
	// redirect would get real answers from it.
	other := &seenAuth{}
	target := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.note(r)
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { second.CloseClientConnections(); second.Close(); target.Close() })
	port := second.URL[strings.LastIndexByte(second.URL, ':')+1:]

	first := prompt.MeasuredRequest(0, 4, 0, 0)
	for _, tc := range []struct {
		name   string
		status int
		host   string // where the redirect points
		which  string // "models": every API call; "level": measured chat requests only
	}{
		{"307 to another host name", http.StatusTemporaryRedirect, "localhost:" + port, "models"},
		{"308 to another host name", http.StatusPermanentRedirect, "localhost:" + port, "models"},
		{"307 to another port", http.StatusTemporaryRedirect, "127.0.0.1:" + port, "models"},
		{"308 of chat requests to another port", http.StatusPermanentRedirect, "127.0.0.1:" + port, "level"},
		{"307 of chat requests to another host name", http.StatusTemporaryRedirect, "localhost:" + port, "level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redirect := func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://"+tc.host+r.URL.Path, tc.status)
			}
			var url string
			if tc.which == "level" {
				url = measuredOnly(t, first, redirect)
			} else {
				own := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
				ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/models") || strings.HasSuffix(r.URL.Path, "/chat/completions") {
						redirect(w, r)
						return
					}
					own.ServeHTTP(w, r)
				}))
				t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); own.Close() })
				url = ts.URL
			}
			plan := faultPlan(matrixCell{conc: 2, requests: 4}, 20*time.Second)
			var logs []string
			var mu sync.Mutex
			obs := Observer{Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() }}
			f, err := Run(context.Background(), plan, setup.Endpoint{URL: url, APIKey: key}, obs)

			if n, auth := other.get(); len(auth) > 0 {
				t.Fatalf("the second server was sent Authorization %q (%d requests)", auth, n)
			}
			switch tc.which {
			case "models":
				var ee *EndpointError
				if f != nil || !errors.As(err, &ee) {
					t.Fatalf("file %v err %T %v: want a refusal at the check", f != nil, err, err)
				}
				if !strings.Contains(ee.Msg, "redirects") || !strings.Contains(ee.Msg, "http://"+tc.host+"/v1/models") || !strings.Contains(ee.Msg, "endpoint") {
					t.Errorf("message %q should say where the API moved and to use that address", ee.Msg)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("the error shows the key: %v", err)
				}
				t.Logf("check: %v", err)
			case "level":
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				mustValid(t, f)
				lv := f.Local.Levels[0]
				class := httpClass(tc.status)
				if lv.Errors[class] != 4 || len(lv.Errors) != 1 {
					t.Errorf("errors %v, want %s on all 4 requests", lv.Errors, class)
				}
				msgs := strings.Join(lv.Messages[class], " | ")
				if !strings.Contains(msgs, "http://"+tc.host+"/v1/chat/completions") {
					t.Errorf("messages %q should say where the request was redirected", msgs)
				}
				t.Logf("level messages: %s", msgs)
			}
			mu.Lock()
			for _, l := range logs {
				if strings.Contains(l, key) {
					t.Errorf("a log line shows the key: %q", l)
				}
			}
			mu.Unlock()
		})
	}
	if n, _ := other.get(); n > 0 {
		t.Errorf("the second server got %d requests: redirects to another origin must not be followed", n)
	}
}

// A redirect that stays on the same server (same scheme, host and port) is
// followed, with the key, as the user's own server asked.
func TestRedirectOnTheSameServerIsFollowed(t *testing.T) {
	t.Parallel()
	const key = "sk-same-origin-0c44"
	seen := &seenAuth{}
	s := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			http.Redirect(w, r, "/api"+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		if p, ok := strings.CutPrefix(r.URL.Path, "/api"); ok {
			seen.note(r)
			r.URL.Path = p
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); s.Close() })
	f, err := Run(context.Background(), faultPlan(matrixCell{conc: 1, requests: 2}, 20*time.Second), setup.Endpoint{URL: ts.URL, APIKey: key}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	if f.Runs[0].Metrics.RequestsOK != 2 {
		t.Errorf("ok %d", f.Runs[0].Metrics.RequestsOK)
	}
	n, auth := seen.get()
	if n == 0 || len(auth) != n {
		t.Errorf("%d redirected requests, %d with the key: the same server should get it every time", n, len(auth))
	}
}

// TestSelfSignedTLS: an https endpoint with a self-signed certificate is
// refused by default with a sentence that names the switch; with the
// switch it runs, and the file says verification was off.
func TestSelfSignedTLS(t *testing.T) {
	t.Parallel()
	s := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ts := quietTLSServer(s)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); s.Close() })
	plan := faultPlan(matrixCell{conc: 2, requests: 4}, 20*time.Second)

	f, err := Run(context.Background(), plan, setup.Endpoint{URL: ts.URL}, Observer{})
	var ee *EndpointError
	if f != nil || !errors.As(err, &ee) || ee.Kind != ErrTLS {
		t.Fatalf("verified: file %v err %T %v, want an ErrTLS refusal", f != nil, err, err)
	}
	for _, want := range []string{"not trusted", "self-signed", `"Verify TLS"`, "--insecure"} {
		if !strings.Contains(ee.Msg, want) {
			t.Errorf("refusal %q lacks %q", ee.Msg, want)
		}
	}
	if strings.Contains(ee.Msg, "\n") {
		t.Errorf("refusal is more than one line: %q", ee.Msg)
	}
	// Endpoint test (Check) says the same.
	if _, err := Check(context.Background(), setup.Endpoint{URL: ts.URL}, ""); !errors.As(err, &ee) || ee.Kind != ErrTLS {
		t.Errorf("Check: %v", err)
	}

	var logs []string
	var mu sync.Mutex
	obs := Observer{Log: func(s string) { mu.Lock(); logs = append(logs, s); mu.Unlock() }}
	f, err = Run(context.Background(), plan, setup.Endpoint{URL: ts.URL, InsecureTLS: true}, obs)
	if err != nil {
		t.Fatalf("with Verify TLS off: %v", err)
	}
	mustValid(t, f)
	if f.Runs[0].Metrics.RequestsOK != 4 {
		t.Errorf("ok %d, want 4", f.Runs[0].Metrics.RequestsOK)
	}
	if !containsWord(f.Local.Warnings, "verification was off") {
		t.Errorf("local.warnings %q should say certificate verification was off", f.Local.Warnings)
	}
	mu.Lock()
	if !containsWord(logs, "verification was off") {
		t.Errorf("the log %q should show the warning as it happens", logs)
	}
	mu.Unlock()
	rep, err := Check(context.Background(), setup.Endpoint{URL: ts.URL, InsecureTLS: true}, "")
	if err != nil || !containsWord(rep.Warnings, "verification was off") {
		t.Errorf("Check with Verify TLS off: %v, warnings %q", err, rep.Warnings)
	}

	// Plain http needs no such warning even with the switch on.
	_, url := startSim(t, fastSim())
	f, err = Run(context.Background(), plan, setup.Endpoint{URL: url, InsecureTLS: true}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if containsWord(f.Local.Warnings, "verification") {
		t.Errorf("an http endpoint warns about TLS: %q", f.Local.Warnings)
	}
}

// Scheme mix-ups are explained rather than shown as raw TLS errors.
func TestSchemeMixUps(t *testing.T) {
	t.Parallel()
	s := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	tlsSrv := quietTLSServer(s)
	plain := httptest.NewServer(s)
	t.Cleanup(func() {
		tlsSrv.CloseClientConnections()
		tlsSrv.Close()
		plain.CloseClientConnections()
		plain.Close()
		s.Close()
	})
	// https:// to a plain server.
	_, _, err := listModelsAt(context.Background(), setup.Endpoint{URL: "https://" + strings.TrimPrefix(plain.URL, "http://")})
	var ee *EndpointError
	if !errors.As(err, &ee) || ee.Kind != ErrTLS || !strings.Contains(ee.Msg, "try http://") {
		t.Errorf("https to a plain server: %v", err)
	}
	// http:// to a TLS server.
	_, _, err = listModelsAt(context.Background(), setup.Endpoint{URL: "http://" + strings.TrimPrefix(tlsSrv.URL, "https://")})
	if err == nil || !strings.Contains(err.Error(), "HTTPS") {
		t.Errorf("http to a TLS server: %v", err)
	}
	t.Logf("http to a TLS server: %v", err)
}

// quietTLSServer is httptest.NewTLSServer without the log line each
// refused handshake prints.
func quietTLSServer(h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	return ts
}

// A key cut short by a length limit is removed as surely as a whole one.
func TestScrubRemovesCutKeys(t *testing.T) {
	t.Parallel()
	const key = "sk-0123456789abcdef"
	for in, want := range map[string]string{
		"bad key " + key + " here": "bad key [api key] here",
		key + key:                  "[api key][api key]",
		"cut: " + key[:12]:         "cut: [api key]",
		"cut: " + key[:4]:          "cut: [api key]",
		"short: " + key[:3]:        "short: " + key[:3], // "sk-" says nothing
		"nothing secret":           "nothing secret",
		key[:8] + " in the middle": key[:8] + " in the middle",
	} {
		if got := scrub(in, key); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
	if got := serverMessage([]byte(`{"error":{"message":"`+strings.Repeat("x", 190)+key+`"}}`), key); strings.Contains(got, key[:8]) {
		t.Errorf("serverMessage kept part of the key: %q", got)
	}
}
