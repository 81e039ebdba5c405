package engine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/clip"
)

// ErrorKind says what went wrong with an endpoint, so callers can choose an
// exit code or a hint without parsing sentences.
type ErrorKind int

const (
	ErrBadAddress ErrorKind = iota + 1
	ErrUnreachable
	ErrTimeout
	ErrTLS
	ErrAuth
	ErrNotFound
	ErrNotReady
	ErrNotOpenAI
	ErrModelNotServed
	ErrNoModel
	ErrRefused // the server answered but refused the request
)

// EndpointError is a failure talking to the endpoint, phrased for a
// homelab user: what happened and what to check.
type EndpointError struct {
	Kind ErrorKind
	Msg  string
	Err  error
}

func (e *EndpointError) Error() string { return e.Msg }
func (e *EndpointError) Unwrap() error { return e.Err }

// answered says what had answered before a request failed without an
// answer, so the advice fits the case: on first contact the address
// itself is in doubt (the port, http or https); once the endpoint has
// answered at that address, it is not, and once the very connection the
// request went on had carried an answer, the server closed a connection
// it was keeping.
type answered int

const (
	answeredNothing  answered = iota // first contact: the endpoint check
	answeredEndpoint                 // the endpoint answered before, on another connection
	answeredConn                     // this connection carried an answer before
)

// connectError explains a failed request before any answer arrived, on
// first contact with the endpoint.
func connectError(e setup.Endpoint, b setup.Base, err error) error {
	return connectErrorAfter(e, b, err, answeredNothing)
}

// connectErrorAfter explains a failed request before any answer arrived,
// given what had answered before it.
func connectErrorAfter(e setup.Endpoint, b setup.Base, err error, before answered) error {
	addr := b.HostPort()
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var recordErr tls.RecordHeaderError
	var dnsErr *net.DNSError
	switch {
	case before == answeredNothing && otherScheme(b, err):
		return otherSchemeError(b, err)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return &EndpointError{Kind: ErrTimeout, Err: err, Msg: fmt.Sprintf(
			"%s did not answer in time: is the server up and reachable from this machine?", addr)}
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr):
		return &EndpointError{Kind: ErrTLS, Err: err, Msg: fmt.Sprintf(
			"the certificate of %s is not trusted (%s); if you trust this server, turn off \"Verify TLS\" for this endpoint (--insecure)", addr, certReason(err))}
	case errors.As(err, &recordErr), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &EndpointError{Kind: ErrTLS, Err: err, Msg: fmt.Sprintf(
			"%s does not speak https: try http:// instead", addr)}
	case errors.As(err, &dnsErr):
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"the host name %q could not be found: check the spelling, or use the server's IP address", b.Host)}
	case errors.Is(err, syscall.ECONNREFUSED) && before != answeredNothing:
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"nothing is listening on %s any more, though the server answered there before: it has stopped, or is restarting", addr)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"nothing is listening on %s: is the server running, and is the port right?", addr)}
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"%s cannot be reached from this machine: check the address and the network", addr)}
	case closedByServer(err) && before == answeredConn:
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"%s closed a connection it had answered on before, without answering this request (it may close idle or finished connections, or have restarted)", addr)}
	case closedByServer(err) && before == answeredEndpoint:
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"%s closed a new connection without answering this request, though it had answered at this address before: it may be restarting, or dropping connections under load", addr)}
	case closedByServer(err):
		return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
			"%s closed the connection without answering: check that this is the server's API port (and whether it wants https://), and that the server is not restarting", addr)}
	}
	return &EndpointError{Kind: ErrUnreachable, Err: err, Msg: fmt.Sprintf(
		"could not talk to %s: %s", addr, scrub(rootCause(err), e.APIKey))}
}

// otherScheme reports a failure that shows the server speaking, on the
// address's port, the protocol the address does not name: what the port
// said when asked (errOtherScheme), an HTTP answer to the TLS handshake of
// an https address, or a TLS record where an http address expected an HTTP
// answer (a TLS server's alert, which net/http calls a malformed
// response).
func otherScheme(b setup.Base, err error) bool {
	if errors.Is(err, errOtherScheme) {
		return true
	}
	msg := err.Error()
	if b.TLS() {
		var rec tls.RecordHeaderError
		return errors.As(err, &rec) && string(rec.RecordHeader[:]) == "HTTP/" ||
			strings.Contains(msg, "server gave HTTP response to HTTPS client")
	}
	return strings.Contains(msg, `malformed HTTP response "\x15\x03`) ||
		strings.Contains(msg, `malformed HTTP response "\x16\x03`)
}

// tlsComplaint reports the answer with which an https server refuses a
// plain HTTP request: HTTP 400 saying so, as Go servers ("Client sent an
// HTTP request to an HTTPS server"), nginx ("The plain HTTP request was
// sent to HTTPS port") and Apache ("speaking plain HTTP to an SSL-enabled
// server port") put it.
func tlsComplaint(status int, body []byte) bool {
	if status != http.StatusBadRequest {
		return false
	}
	text := strings.ToLower(string(body))
	for _, s := range []string{"https server", "https port", "ssl-enabled server"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// otherSchemeError says that the server speaks the other protocol on the
// address's port, with the address that reaches it: the other scheme and
// the same port, spelled out, since the port stays what it was.
func otherSchemeError(b setup.Base, err error) *EndpointError {
	addr := b.HostPort()
	scheme, msg := "https", "the server at %s speaks HTTPS, not plain HTTP: try %s as the address"
	if b.TLS() {
		scheme, msg = "http", "the server at %s speaks plain HTTP, not HTTPS: try %s as the address"
	}
	other := scheme + "://" + addr
	if u, perr := url.Parse(b.Root); perr == nil {
		other += u.Path
	}
	return &EndpointError{Kind: ErrTLS, Err: err, Msg: fmt.Sprintf(msg, addr, other)}
}

// closedByServer reports a connection the server closed or reset before
// any answer (net/http says "server closed idle connection" when that
// happens on a fresh connection).
func closedByServer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func certReason(err error) string {
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &unknownAuth):
		return "it is self-signed or signed by an unknown authority"
	case errors.As(err, &hostErr):
		return "it was issued for another name"
	}
	return "it failed verification"
}

// rootCause strips Go's "Post \"url\": " wrappers to the innermost message.
func rootCause(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// redirectNote says where a redirect that was not followed (see
// sameServer) points, or "" when resp is no redirect.
func redirectNote(resp *http.Response, key string) string {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return ""
	}
	where := "another address"
	if loc, err := resp.Location(); err == nil {
		where = clip.Text(scrub(loc.String(), key), 200)
	}
	return fmt.Sprintf("redirects %s to %s (HTTP %d): give that address as the endpoint; Kovara does not follow a redirect to another server, so the API key is never sent there",
		resp.Request.URL.Path, where, resp.StatusCode)
}

// statusError explains a non-200 answer to an API call.
func statusError(e setup.Endpoint, status int, path string, body []byte) error {
	detail := serverMessage(body, e.APIKey)
	suffix := ""
	if detail != "" {
		suffix = " (the server said: " + detail + ")"
	}
	switch {
	case status == 401 || status == 403:
		return authError(e, status, path, detail, false)
	case status == 404:
		return &EndpointError{Kind: ErrNotFound, Msg: fmt.Sprintf(
			"%s was not found (HTTP 404): check the path — the API usually lives under /v1 at the server's root%s", path, suffix)}
	case status == 502 || status == 503:
		return &EndpointError{Kind: ErrNotReady, Msg: fmt.Sprintf(
			"the server answered HTTP %d on %s: no model is ready yet (still loading, or the backend behind a proxy is down)%s", status, path, suffix)}
	}
	return &EndpointError{Kind: ErrRefused, Msg: fmt.Sprintf("the server answered HTTP %d on %s%s", status, path, suffix)}
}

// keyHintBoth is where the key goes when the caller did not say
// (Endpoint.KeyHint): the app's endpoint form, or the CLI's variable.
const keyHintBoth = "in the endpoint's API key field in the app (Endpoints: select the endpoint, type the key, Save), which keeps it in the system keyring; " +
	"for kovara-bench, in the environment variable named by --api-key-env (KOVARA_API_KEY unless you name another)"

// authError explains a 401 or 403 on path: the server wants a key and
// none was given, or refused the one given. detail is the server's own
// message, already scrubbed of the key; listedOpen says the model list
// answered without a key, as llama-server's does when it was started with
// --api-key. The message says where the key goes and never holds it.
func authError(e setup.Endpoint, status int, path, detail string, listedOpen bool) *EndpointError {
	hint := e.KeyHint
	if hint == "" {
		hint = keyHintBoth
	}
	said := ""
	if detail != "" {
		said = "; the server said: " + detail
	}
	var msg string
	switch {
	case e.APIKey == "" && listedOpen:
		msg = fmt.Sprintf("the server wants an API key for chat requests (HTTP %d on %s%s), though it listed its models without one: the key goes %s",
			status, path, said, hint)
	case e.APIKey == "":
		msg = fmt.Sprintf("the server wants an API key (HTTP %d on %s%s), and none was given: the key goes %s", status, path, said, hint)
	default:
		msg = fmt.Sprintf("the server refused the API key (HTTP %d on %s%s): check the key for this endpoint; it goes %s", status, path, said, hint)
	}
	return &EndpointError{Kind: ErrAuth, Msg: scrub(msg, e.APIKey)}
}

// serverMessage pulls a short human message out of an error body.
func serverMessage(body []byte, key string) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case len(e.Error) > 0 && json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case len(e.Error) > 0 && json.Unmarshal(e.Error, &s) == nil:
			msg = s
		case e.Message != "":
			msg = e.Message
		case len(e.Detail) > 0:
			if json.Unmarshal(e.Detail, &s) == nil {
				msg = s
			} else {
				msg = string(e.Detail)
			}
		}
	} else if t := strings.TrimSpace(string(body)); t != "" && !strings.HasPrefix(t, "<") {
		msg = t
	}
	// Scrub before cutting: a cut through the key would leave part of it.
	msg = scrub(strings.Join(strings.Fields(msg), " "), key)
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// scrub removes the API key from any text that might be shown or stored:
// every whole occurrence, and a start of it that ends the text (where
// someone else cut a message short partway through the key).
func scrub(s, key string) string {
	if key == "" || len(key) < 4 {
		return s
	}
	s = strings.ReplaceAll(s, key, "[api key]")
	for n := len(key) - 1; n >= 4; n-- {
		if strings.HasSuffix(s, key[:n]) {
			return s[:len(s)-n] + "[api key]"
		}
	}
	return s
}
