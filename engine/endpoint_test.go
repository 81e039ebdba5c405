package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kovara/desktop/engine/netstamp"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// listModelsAt asks e's GET /v1/models with the endpoint check's client,
// as a session's check does (session.go), for the tests of what the model
// list says.
func listModelsAt(ctx context.Context, e setup.Endpoint) ([]Model, http.Header, error) {
	b, err := setup.ParseBase(e.URL)
	if err != nil {
		return nil, nil, &EndpointError{Kind: ErrBadAddress, Msg: err.Error()}
	}
	c := checkClient(e, b)
	defer c.CloseIdleConnections()
	return listModels(ctx, c, e, b)
}

func TestListModelsErrors(t *testing.T) {
	t.Parallel()
	handler := func(status int, ctype, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ctype)
			w.WriteHeader(status)
			fmt.Fprint(w, body)
		})
	}
	big := strings.Repeat("x", maxModelsBody+10)
	tests := []struct {
		name string
		h    http.Handler
		kind ErrorKind
		want string
	}{
		{"401", handler(401, "application/json", `{"error":{"message":"Invalid API key sk-secret-123"}}`), ErrAuth, "check the key"},
		{"403", handler(403, "text/plain", "forbidden"), ErrAuth, "API key"},
		{"404", handler(404, "text/plain", "not found"), ErrNotFound, "/v1"},
		{"503", handler(503, "text/plain", "loading"), ErrNotReady, "no model is ready"},
		{"html", handler(200, "text/html", "<!doctype html><html><body>router</body></html>"), ErrNotOpenAI, "web page"},
		{"not a list", handler(200, "application/json", `{"models":["a"]}`), ErrNotOpenAI, "OpenAI-style model list"},
		{"empty list", handler(200, "application/json", `{"object":"list","data":[]}`), ErrNoModel, "no models"},
		{"huge", handler(200, "application/json", big), ErrNotOpenAI, "more than 8 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(tc.h)
			defer ts.Close()
			_, _, err := listModelsAt(context.Background(), setup.Endpoint{URL: ts.URL, APIKey: "sk-secret-123"})
			var ee *EndpointError
			if !errors.As(err, &ee) || ee.Kind != tc.kind || !strings.Contains(ee.Msg, tc.want) {
				t.Fatalf("got %v (%T), want kind %d mentioning %q", err, err, tc.kind, tc.want)
			}
			if strings.Contains(err.Error(), "sk-secret-123") {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestListModelsRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, _, err = listModelsAt(context.Background(), setup.Endpoint{URL: "http://" + addr})
	var ee *EndpointError
	if !errors.As(err, &ee) || ee.Kind != ErrUnreachable || !strings.Contains(ee.Msg, "is the server running") {
		t.Fatalf("got %v, want unreachable with a hint", err)
	}
}

func TestListModelsSelfSigned(t *testing.T) {
	t.Parallel()
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","max_model_len":4096}]}`)
	}))
	defer ts.Close()
	_, _, err := listModelsAt(context.Background(), setup.Endpoint{URL: ts.URL})
	var ee *EndpointError
	if !errors.As(err, &ee) || ee.Kind != ErrTLS || !strings.Contains(ee.Msg, "Verify TLS") {
		t.Fatalf("got %v, want a TLS error naming the verify switch", err)
	}
	models, _, err := listModelsAt(context.Background(), setup.Endpoint{URL: ts.URL, InsecureTLS: true})
	if err != nil || len(models) != 1 || models[0].ContextLength != 4096 || models[0].OwnedBy != "vllm" {
		t.Fatalf("insecure: %v %+v", err, models)
	}
}

// TestListModelsSendsKey: a key goes out as a bearer token on
// GET /v1/models (and no Authorization header without one), and the
// models the server lists come back in its order. The server answers
// either way, so only the header it saw can tell.
func TestListModelsSendsKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, wantAuth string }{{"k-1", "Bearer k-1"}, {"", ""}} {
		var (
			mu   sync.Mutex
			auth []string
		)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auth = append(auth, r.Header.Get("Authorization"))
			mu.Unlock()
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m-two"},{"id":"m-one"}]}`)
		}))
		models, _, err := listModelsAt(context.Background(), setup.Endpoint{URL: ts.URL, APIKey: tc.key})
		ts.Close()
		if err != nil {
			t.Fatalf("key %q: %v", tc.key, err)
		}
		var ids []string
		for _, m := range models {
			ids = append(ids, m.ID)
		}
		if got, want := ids, []string{"m-two", "m-one"}; !slices.Equal(got, want) {
			t.Errorf("key %q: models %q, want %q", tc.key, got, want)
		}
		mu.Lock()
		if got, want := auth, []string{tc.wantAuth}; !slices.Equal(got, want) {
			t.Errorf("key %q: the server saw Authorization %q, want %q", tc.key, got, want)
		}
		mu.Unlock()
	}
}

func TestCheckReportsWhatTestShows(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.Personality = sim.Strict
	cfg.Models = []string{"m-two", "m-one"}
	_, url := startSim(t, cfg)
	rep, err := Check(context.Background(), setup.Endpoint{URL: url}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) != 2 || rep.Model != "m-one" || rep.Compat.IgnoreEOS || !rep.Compat.StreamOptions || rep.Compat.Attempts != 2 {
		t.Errorf("report %+v", rep)
	}
	_, url2 := startSim(t, fastSim())
	rep, err = Check(context.Background(), setup.Endpoint{URL: url2}, "")
	if err != nil || rep.Detection.Family != results.FamilyVLLM || rep.Detection.ContextLength == 0 || !rep.Compat.IgnoreEOS || !rep.Compat.Usage {
		t.Errorf("vllm report %+v, %v", rep, err)
	}
}

func TestReportLines(t *testing.T) {
	t.Parallel()
	rep := &EndpointReport{
		Models: []Model{{ID: "a"}, {ID: "b"}}, Model: "a",
		Detection: results.Detection{Family: "vllm", Version: "0.11.0", ContextLength: 32768},
		Compat:    results.Compat{IgnoreEOS: false, StreamOptions: true, Usage: true, Attempts: 2},
	}
	got := strings.Join(rep.Lines(nil), "\n")
	for _, want := range []string{"Serving 2 models: a, b", "Engine: vllm 0.11.0", "Context length: 32768", "ignore_eos refused", "prompts are calibrated"} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
	got = strings.Join((*EndpointReport)(nil).Lines(&EndpointError{Msg: "nothing is listening on h:1"}), "\n")
	if got != "Failed: nothing is listening on h:1" {
		t.Errorf("failure lines: %q", got)
	}
}

// TestTransportDialsConcurrently holds newTransport's dial to what
// http.Transport does on a slow machine: two dials at once on one
// transport (the /metrics scraper's, when a connection is slow to open).
// The pre-opened connection goes to one of them only, and -race sees no
// unguarded state (it saw the closure's `pre` written from both).
func TestTransportDialsConcurrently(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	b, err := setup.ParseBase("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, pre := range []bool{false, true} {
		var preConn net.Conn
		if pre {
			if preConn, err = net.Dial("tcp", ln.Addr().String()); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		seen := 0
		tr := newTransport(setup.Endpoint{URL: b.Root}, b, preConn, func(*netstamp.Conn) { mu.Lock(); seen++; mu.Unlock() })
		const dials = 8
		got := make([]net.Conn, dials)
		var wg sync.WaitGroup
		for i := range dials {
			wg.Go(func() {
				c, err := tr.DialContext(t.Context(), "tcp", ln.Addr().String())
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = c
			})
		}
		wg.Wait()
		handed := 0
		for _, c := range got {
			if c == nil {
				continue
			}
			if c == preConn {
				handed++
			}
			c.Close()
		}
		if want := map[bool]int{false: 0, true: 1}[pre]; handed != want {
			t.Errorf("pre-opened %v: handed out %d times, want %d", pre, handed, want)
		}
		if want := map[bool]int{false: dials, true: dials - 1}[pre]; seen != want {
			t.Errorf("pre-opened %v: onConn told of %d stamped connections, want %d", pre, seen, want)
		}
	}
}

// TestLateDialOfAReplacedTransport: since Go 1.22 a transport's dial goes
// on after its request was cancelled; when the slot has replaced that
// transport meanwhile (preopen after a timeout), the late connection is
// one the slot never uses and must not become its socket, whose stamps
// settle every request's start and every chunk's arrival.
func TestLateDialOfAReplacedTransport(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &conn{}
	old := c.sockRecorder(nil)
	current := netstamp.Wrap(a)
	record := c.sockRecorder(current) // the slot's new transport, with its pre-opened socket
	old(netstamp.Wrap(b))             // the abandoned transport's dial lands late
	if got := c.sock.Load(); got != current {
		t.Errorf("the slot's socket is the late dial's, want the current transport's")
	}
	newer := netstamp.Wrap(b)
	record(newer) // the current transport's own dial still records
	if got := c.sock.Load(); got != newer {
		t.Errorf("the current transport's dial did not record its socket")
	}
}
