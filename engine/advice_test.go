package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestConnectErrorAdvice: the advice for a request that got no answer
// depends on what had answered before it. Only first contact doubts the
// address (the port, http or https); a connection the server had
// answered on before was closed by a server that closes connections, and
// a refused connection after answers means the server went away.
func TestConnectErrorAdvice(t *testing.T) {
	t.Parallel()
	b, err := setup.ParseBase("http://10.0.0.5:8080")
	if err != nil {
		t.Fatal(err)
	}
	opErr := func(e error) error {
		return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", e)}
	}
	eof := fmt.Errorf("Post \"http://10.0.0.5:8080/v1/chat/completions\": %w", io.EOF)
	idle := errors.New("Post \"http://10.0.0.5:8080/v1/chat/completions\": net/http: HTTP/1.x transport connection broken: server closed idle connection")
	reset := fmt.Errorf("Post \"x\": %w", opErr(syscall.ECONNRESET))
	refused := fmt.Errorf("Post \"x\": %w", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})
	const port = "check that this is the server's API port"
	tests := []struct {
		name    string
		err     error
		before  answered
		want    []string
		notWant []string
	}{
		{"EOF on first contact", eof, answeredNothing,
			[]string{"10.0.0.5:8080 closed the connection without answering", port, "https://"}, nil},
		{"reset on first contact", reset, answeredNothing, []string{port}, nil},
		{"EOF on a connection that had answered", eof, answeredConn,
			[]string{"10.0.0.5:8080 closed a connection it had answered on before, without answering this request (it may close idle or finished connections, or have restarted)"},
			[]string{port, "https://"}},
		{"idle close on a connection that had answered", idle, answeredConn,
			[]string{"closed a connection it had answered on before"}, []string{port}},
		{"reset on a connection that had answered", reset, answeredConn,
			[]string{"closed a connection it had answered on before"}, []string{port}},
		{"EOF on a new connection after the check", eof, answeredEndpoint,
			[]string{"10.0.0.5:8080 closed a new connection without answering this request, though it had answered at this address before", "restarting"},
			[]string{port, "https://"}},
		{"refused on first contact", refused, answeredNothing,
			[]string{"nothing is listening on 10.0.0.5:8080: is the server running, and is the port right?"}, nil},
		{"refused after answers", refused, answeredConn,
			[]string{"nothing is listening on 10.0.0.5:8080 any more, though the server answered there before"}, []string{"is the port right"}},
		{"refused on a new connection after the check", refused, answeredEndpoint,
			[]string{"any more"}, []string{"is the port right"}},
		{"timeout does not depend on it", context.DeadlineExceeded, answeredConn,
			[]string{"did not answer in time"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := connectErrorAfter(setup.Endpoint{URL: "http://10.0.0.5:8080"}, b, tc.err, tc.before)
			var ee *EndpointError
			if !errors.As(got, &ee) || ee.Kind == 0 {
				t.Fatalf("got %T %v, want an *EndpointError", got, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(ee.Msg, w) {
					t.Errorf("%q lacks %q", ee.Msg, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(ee.Msg, w) {
					t.Errorf("%q should not say %q", ee.Msg, w)
				}
			}
		})
	}
	// connectError is first contact.
	if got := connectError(setup.Endpoint{}, b, eof).Error(); !strings.Contains(got, port) {
		t.Errorf("connectError: %q", got)
	}
}

// TestConnAdviceFollowsWhatAnswered: a slot's failed request is explained
// by what had answered before it, end to end through conn.do. A server
// answers one chat request and then closes every connection a chat
// request comes on without answering.
func TestConnAdviceFollowsWhatAnswered(t *testing.T) {
	t.Parallel()
	var chats atomic.Int64
	target := sim.New(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && chats.Add(1) > 1 {
			closeConn(w, r)
			return
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	base, err := setup.ParseBase(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	opts := requestOpts{model: "kovara-sim-8b", maxTokens: 4, words: 20, seed: 1, ignoreEOS: true, streamOptions: true}

	// A slot after the endpoint check: its first request is answered, the
	// next dies on the same connection, is sent again on a fresh one
	// (opened with a model list, so it had answered too) and dies again.
	c := newConn(setup.Endpoint{URL: ts.URL}, base, time.Now())
	c.reached = true
	defer c.close()
	if out := c.do(context.Background(), opts, 1, 5*time.Second); !out.ok() {
		t.Fatalf("first request: %s %s", out.class, out.msg)
	}
	out := c.do(context.Background(), opts, 2, 5*time.Second)
	if out.class != ClassConnection || !strings.Contains(out.msg, "closed a connection it had answered on before, without answering this request") ||
		strings.Contains(out.msg, "API port") {
		t.Errorf("reused connection: %s %q", out.class, out.msg)
	}
	if c.stats.Resent != 1 {
		t.Errorf("resent %d, want the one resend", c.stats.Resent)
	}

	// A fresh slot after the endpoint check: the address is known good.
	c2 := newConn(setup.Endpoint{URL: ts.URL}, base, time.Now())
	c2.reached = true
	defer c2.close()
	out = c2.do(context.Background(), opts, 3, 5*time.Second)
	if out.class != ClassConnection || !strings.Contains(out.msg, "closed a new connection without answering this request, though it had answered at this address before") {
		t.Errorf("new connection after the check: %s %q", out.class, out.msg)
	}

	// First contact: nothing has answered, so the address is in doubt.
	c3 := newConn(setup.Endpoint{URL: ts.URL}, base, time.Now())
	defer c3.close()
	out = c3.do(context.Background(), opts, 4, 5*time.Second)
	if out.class != ClassConnection || !strings.Contains(out.msg, "check that this is the server's API port") {
		t.Errorf("first contact: %s %q", out.class, out.msg)
	}
}

// apiKeyLlama replays what llama-server b9749 started with --api-key
// answered without the key (testdata/llamacpp-b9749/apikey-*): the model
// list to anyone, 401 "Invalid API Key" for everything else. It counts
// the chat requests.
func apiKeyLlama(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var chats atomic.Int64
	serve := func(w http.ResponseWriter, headers, body string) {
		h := captureHeader(t, headers)
		for k, v := range h {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		status := http.StatusOK
		if strings.Contains(string(capture(t, headers)), " 401 ") {
			status = http.StatusUnauthorized
		}
		w.WriteHeader(status)
		w.Write(capture(t, body))
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models", "/models", "/health":
			serve(w, "apikey-models.headers", "apikey-models.json")
		case "/v1/chat/completions":
			chats.Add(1)
			serve(w, "apikey-401.headers", "apikey-401.json")
		default:
			serve(w, "apikey-props-401.headers", "apikey-props-401.json")
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL, &chats
}

// TestAPIKeyAskedForByChatOnly: against the replayed llama-server with
// --api-key, the endpoint check passes (the model list needs no key; the
// context comes from its meta.n_ctx, /props wanting the key too) and the
// probe's 401 becomes an authentication error that says where the key
// goes, never holding the key itself.
func TestAPIKeyAskedForByChatOnly(t *testing.T) {
	t.Parallel()
	url, chats := apiKeyLlama(t)
	const wrong = "sk-wrong-7781"
	tests := []struct {
		name    string
		ep      setup.Endpoint
		want    []string
		notWant []string
	}{
		{"no key", setup.Endpoint{URL: url}, []string{
			"probing: the server wants an API key for chat requests (HTTP 401 on /v1/chat/completions; the server said: Invalid API Key), though it listed its models without one: the key goes ",
			keyHintBoth}, nil},
		{"no key, hint given", setup.Endpoint{URL: url, KeyHint: "in the variable LAB_KEY"}, []string{
			"though it listed its models without one: the key goes in the variable LAB_KEY"}, []string{"--api-key-env"}},
		{"wrong key", setup.Endpoint{URL: url, APIKey: wrong, KeyHint: "in the variable LAB_KEY"}, []string{
			"probing: the server refused the API key (HTTP 401 on /v1/chat/completions; the server said: Invalid API Key): check the key for this endpoint; it goes in the variable LAB_KEY"},
			[]string{wrong, "wrong-77"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plan := faultPlan(matrixCell{conc: 1, requests: 1}, 5*time.Second)
			f, err := Run(context.Background(), plan, tc.ep, Observer{})
			var ee *EndpointError
			if f != nil || !errors.As(err, &ee) || ee.Kind != ErrAuth {
				t.Fatalf("file %v, err %T %v: want no file and an ErrAuth", f != nil, err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("%q holds %q", err, w)
				}
			}

			// The endpoint Test says the same, after what it learned.
			lines, rep, err := TestEndpointReport(context.Background(), tc.ep)
			if !errors.As(err, &ee) || ee.Kind != ErrAuth || len(lines) == 0 || lines[0] != "Failed: "+err.Error() {
				t.Fatalf("Test: %v, %q", err, lines)
			}
			d := rep.Detection
			if d.Family != results.FamilyLlamaCpp || d.ContextLength != 8192 || d.ContextSource != "/v1/models meta.n_ctx" {
				t.Errorf("detection %+v", d)
			}
			if strings.Contains(strings.Join(lines, "\n"), wrong) {
				t.Errorf("the Test shows the key: %q", lines)
			}
		})
	}
	t.Cleanup(func() { // after the subtests
		if chats.Load() == 0 {
			t.Error("no chat request reached the replay")
		}
	})
}

// TestModelListAuthErrors: a 401 or 403 on the model list says whether a
// key was missing or refused, and where it goes.
func TestModelListAuthErrors(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}`)
	}))
	defer ts.Close()
	tests := []struct {
		ep   setup.Endpoint
		want string
	}{
		{setup.Endpoint{URL: ts.URL, KeyHint: "in KOVARA_API_KEY"}, "the server wants an API key (HTTP 401 on /v1/models; the server said: Invalid API Key), and none was given: the key goes in KOVARA_API_KEY"},
		{setup.Endpoint{URL: ts.URL, APIKey: "sk-abcdef-99", KeyHint: "in KOVARA_API_KEY"}, "the server refused the API key (HTTP 401 on /v1/models; the server said: Invalid API Key): check the key for this endpoint; it goes in KOVARA_API_KEY"},
	}
	for _, tc := range tests {
		_, _, err := listModelsAt(context.Background(), tc.ep)
		var ee *EndpointError
		if !errors.As(err, &ee) || ee.Kind != ErrAuth || ee.Msg != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

// TestFitContext: a plan whose prompt and answer cannot fit the context
// the server reported is refused with the numbers; the calibration's
// tolerance is the only margin (the chat template is inside the
// calibrated prompt).
func TestFitContext(t *testing.T) {
	t.Parallel()
	llama := &results.Detection{Family: results.FamilyLlamaCpp, ContextLength: 16384, ContextSource: "/props default_generation_settings.n_ctx"}
	vllm := &results.Detection{Family: results.FamilyVLLM, ContextLength: 4096, ContextSource: "/v1/models max_model_len"}
	tests := []struct {
		name          string
		input, output int
		d             *results.Detection
		want          string // "" when the plan fits
	}{
		{"no detection", 20000, 256, nil, ""},
		{"no context reported", 20000, 256, &results.Detection{Family: results.FamilyVLLM}, ""},
		{"fits", 1024, 256, llama, ""},
		{"fits with the margin", 15900, 256, llama, ""},
		{"too long", 20000, 256, llama,
			"the plan asks for 20000-token prompts and 256-token answers, 20256 tokens, but the server's context holds 16384 (from /props default_generation_settings.n_ctx), so every request would be refused: lower --input-tokens or --output-tokens, or start the server with a larger context (llama-server: -c, which it divides among its -np slots)"},
		{"the answer does not fit", 16000, 512, llama,
			"16512 tokens, but the server's context holds 16384 (from /props default_generation_settings.n_ctx), so answers would stop short of 512 tokens: lower"},
		{"only the margin does not fit", 3900, 190, vllm,
			"the plan asks for 3900-token prompts and 190-token answers, 4090 tokens, and a calibrated prompt may come out up to 39 tokens longer, but the server's context holds 4096 (from /v1/models max_model_len), so answers could stop short of 190 tokens: lower --input-tokens or --output-tokens, or start the server with a larger context"},
		{"exactly full", 16128, 256, llama, "16384 tokens, and a calibrated prompt may come out up to 162 tokens longer"},
	}
	for _, tc := range tests {
		ce := FitContext(tc.input, tc.output, tc.d)
		switch {
		case tc.want == "" && ce != nil:
			t.Errorf("%s: refused: %v", tc.name, ce)
		case tc.want != "" && ce == nil:
			t.Errorf("%s: not refused", tc.name)
		case ce != nil && !strings.Contains(ce.Error(), tc.want):
			t.Errorf("%s:\n got %s\nwant %s", tc.name, ce, tc.want)
		}
	}
	ce := FitContext(20000, 256, llama)
	ce.Lower = "the input or output tokens"
	if !strings.Contains(ce.Error(), ": lower the input or output tokens, or start") {
		t.Errorf("caller's words: %s", ce)
	}
}

// TestRunRefusesPlanBeyondContext: the Kovara method and the capacity
// plan refuse a plan the server's reported context cannot hold, with a
// *PlanError holding the *ContextError, before any chat request (the
// probe and calibration included) and with no file.
func TestRunRefusesPlanBeyondContext(t *testing.T) {
	t.Parallel()
	var chats atomic.Int64
	target := sim.New(sim.Config{Personality: sim.LlamaCpp, ContextLength: 2048, TokenInterval: time.Millisecond, PrefillRate: 1e6})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			chats.Add(1)
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	ep := setup.Endpoint{URL: ts.URL}
	check := func(what string, err error) {
		t.Helper()
		var pe *PlanError
		var ce *ContextError
		if !errors.As(err, &pe) || !errors.As(err, &ce) {
			t.Fatalf("%s: err %T %v, want a PlanError with a ContextError", what, err, err)
		}
		if ce.Context != 2048 || ce.Source != "/props default_generation_settings.n_ctx" ||
			!strings.HasPrefix(err.Error(), "the plan asks for 3000-token prompts and 64-token answers, 3064 tokens, but the server's context holds 2048") {
			t.Errorf("%s: %v", what, err)
		}
	}
	plan := faultPlan(matrixCell{conc: 1, requests: 1}, 5*time.Second)
	plan.InputTokens, plan.OutputTokens = 3000, 64
	f, err := Run(context.Background(), plan, ep, Observer{})
	if f != nil {
		t.Error("a refused plan returned a file")
	}
	check("Run", err)

	cp := setup.DefaultCapacityPlan()
	cp.InputTokens, cp.OutputTokens, cp.Warmup = 3000, 64, 0
	res, err := RunCapacity(context.Background(), cp, ep, Observer{})
	if res != nil {
		t.Error("a refused capacity plan returned a result")
	}
	check("RunCapacity", err)
	if n := chats.Load(); n != 0 {
		t.Errorf("%d chat requests were sent", n)
	}

	// A plan that fits runs.
	plan.InputTokens = 512
	if _, err := Run(context.Background(), plan, ep, Observer{}); err != nil {
		t.Errorf("a plan that fits: %v", err)
	}
}
