package engine

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// firstByteListener hands its server only the connections whose first
// byte the server's protocol expects: a TLS handshake starts with 0x16, a
// plain request with a letter. The others are held unanswered until the
// client gives up (hold), as a plain server that reads a TLS handshake as
// a request line waiting for its CRLF does (llama-server), or closed at
// once, as servers that drop what they cannot parse do.
type firstByteListener struct {
	net.Listener
	wantTLS bool
	hold    bool
}

func (l firstByteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &firstByteConn{Conn: c, r: bufio.NewReader(c), l: l}, nil
}

type firstByteConn struct {
	net.Conn
	r    *bufio.Reader
	l    firstByteListener
	once sync.Once
	drop bool
}

func (c *firstByteConn) Read(p []byte) (int, error) {
	c.once.Do(func() {
		first, err := c.r.Peek(1)
		c.drop = err == nil && (first[0] == 0x16) != c.l.wantTLS
	})
	if !c.drop {
		return c.r.Read(p)
	}
	if c.l.hold {
		_, _ = io.Copy(io.Discard, c.r) // until the client closes
	}
	c.Conn.Close()
	return 0, io.EOF
}

// rawServer listens on loopback and hands every connection to handle on
// its own goroutine (handle closes it); it returns host:port.
func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// tlsAlertServer answers whatever comes with a TLS alert record (fatal,
// protocol_version) and closes, as OpenSSL-based https servers answer a
// plain HTTP request.
func tlsAlertServer(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 4096)
		if _, err := c.Read(buf); err != nil {
			return
		}
		_, _ = c.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46})
	})
}

// closingServer accepts every connection and closes it unread.
func closingServer(t *testing.T) string {
	return rawServer(t, func(c net.Conn) { c.Close() })
}

// TestSchemeMixUpSaidInOneSentence: an https address on a port that speaks
// plain HTTP, and an http address on a port that speaks TLS, are each said
// in one sentence that gives the address that works, through the engine's
// own first contact (Check, as the app's Test and kovara-bench check run
// it) against real listeners on loopback: Go's servers, a plain server
// that holds a TLS handshake unanswered (llama-server waits for a CRLF for
// minutes: the check asks the port rather than wait), one that drops it,
// a TLS server that drops plain requests, and one that answers them with
// a TLS alert. A port that closes on both protocols is not said to speak
// either.
func TestSchemeMixUpSaidInOneSentence(t *testing.T) {
	t.Parallel()
	target := sim.New(fastSim())
	t.Cleanup(func() { target.Close() })
	plain := func(l *firstByteListener) func(t *testing.T) string {
		return func(t *testing.T) string {
			ts := httptest.NewUnstartedServer(target)
			if l != nil {
				l.Listener = ts.Listener
				ts.Listener = *l
			}
			ts.Start()
			t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
			return strings.TrimPrefix(ts.URL, "http://")
		}
	}
	tlsServer := func(l *firstByteListener) func(t *testing.T) string {
		return func(t *testing.T) string {
			ts := httptest.NewUnstartedServer(target)
			if l != nil {
				l.Listener = ts.Listener
				ts.Listener = *l
			}
			ts.Config.ErrorLog = log.New(io.Discard, "", 0) // each refused handshake would log
			ts.StartTLS()
			t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
			return strings.TrimPrefix(ts.URL, "https://")
		}
	}
	const (
		toHTTP  = "the server at %s speaks plain HTTP, not HTTPS: try http://%s as the address"
		toHTTPS = "the server at %s speaks HTTPS, not plain HTTP: try https://%s as the address"
	)
	tests := []struct {
		name   string
		start  func(t *testing.T) string
		scheme string
		want   string // a format of the address twice; "" for no claim
		works  bool   // the address the sentence gives answers
	}{
		{"https to Go's plain server (it answers the handshake with HTTP 400)", plain(nil), "https", toHTTP, true},
		{"https to a plain server that holds the handshake", plain(&firstByteListener{wantTLS: false, hold: true}), "https", toHTTP, true},
		{"https to a plain server that drops the handshake", plain(&firstByteListener{wantTLS: false}), "https", toHTTP, true},
		{"http to Go's TLS server (400: HTTP request to an HTTPS server)", tlsServer(nil), "http", toHTTPS, true},
		{"http to a TLS server that drops plain requests", tlsServer(&firstByteListener{wantTLS: true}), "http", toHTTPS, true},
		{"http to a TLS server that answers with an alert", tlsAlertServer, "http", toHTTPS, false},
		{"https to a port that closes everything", closingServer, "https", "", false},
		{"http to a port that closes everything", closingServer, "http", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := tc.start(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			// The endpoint's timeout is far longer than the check
			// takes: only asking the port ends a held handshake.
			ep := setup.Endpoint{URL: tc.scheme + "://" + addr + "/v1", Timeout: 45 * time.Second, InsecureTLS: true}
			_, err := Check(ctx, ep, "")
			var ee *EndpointError
			if !errors.As(err, &ee) {
				t.Fatalf("got %T %v, want an *EndpointError", err, err)
			}
			if tc.want == "" {
				if strings.Contains(ee.Msg, "speaks") {
					t.Errorf("got %q, want no claim about the protocol", ee.Msg)
				}
				return
			}
			if got, want := ee.Msg, strings.ReplaceAll(tc.want, "%s", addr); got != want || ee.Kind != ErrTLS {
				t.Errorf("got kind %d %q\nwant kind %d %q", ee.Kind, got, ErrTLS, want)
			}
			if !tc.works {
				return
			}
			other := "http"
			if tc.scheme == "http" {
				other = "https"
			}
			if _, err := Check(ctx, setup.Endpoint{URL: other + "://" + addr, InsecureTLS: true}, ""); err != nil {
				t.Errorf("the address the sentence gives: %v", err)
			}
		})
	}
}

// TestOtherSchemeAddress: the address the sentence gives keeps the host,
// the port (spelled out where the old scheme implied it) and the path.
func TestOtherSchemeAddress(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://llm.home.lan/proxy/v1", "the server at llm.home.lan:443 speaks plain HTTP, not HTTPS: try http://llm.home.lan:443/proxy as the address"},
		{"http://[::1]", "the server at [::1]:80 speaks HTTPS, not plain HTTP: try https://[::1]:80 as the address"},
		{"10.0.0.5:8443", "the server at 10.0.0.5:8443 speaks HTTPS, not plain HTTP: try https://10.0.0.5:8443 as the address"},
	}
	for _, tc := range tests {
		b, err := setup.ParseBase(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := otherSchemeError(b, nil).Error(); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestTLSComplaint: only a 400 that says a plain request reached an https
// port is taken for one, not any 400 that mentions https.
func TestTLSComplaint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		body   string
		want   bool
	}{
		{400, "Client sent an HTTP request to an HTTPS server.\n", true},
		{400, "<html><head><title>400 The plain HTTP request was sent to HTTPS port</title></head></html>", true},
		{400, "Reason: You're speaking plain HTTP to an SSL-enabled server port.", true},
		{400, `{"error":{"message":"bad request: see https://docs.example/api"}}`, false},
		{404, "Client sent an HTTP request to an HTTPS server.", false},
		{400, "", false},
	}
	for _, tc := range tests {
		if got := tlsComplaint(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("%d %q: got %v, want %v", tc.status, tc.body, got, tc.want)
		}
	}
}

// TestKept: a result is kept when its run finished or was stopped (by the
// person, or because the server went), and after any other error only
// when it measured something.
func TestKept(t *testing.T) {
	t.Parallel()
	gone := &ServerGoneError{Why: "the server stopped answering", Err: ErrInterrupted}
	stopped := &StageError{Stage: PhaseMeasure, Err: ErrInterrupted}
	refused := errors.New("the endpoint refused the request")
	for _, tc := range []struct {
		name     string
		err      error
		measured bool
		want     bool
	}{
		{"finished, nothing measured", nil, false, true},
		{"stopped, nothing measured", stopped, false, true},
		{"server gone, nothing measured", gone, false, true},
		{"another error, nothing measured", refused, false, false},
		{"another error, something measured", refused, true, true},
	} {
		if got := Kept(tc.err, tc.measured); got != tc.want {
			t.Errorf("%s: Kept = %v, want %v", tc.name, got, tc.want)
		}
	}
}
