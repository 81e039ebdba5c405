package engine

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/engine/netstamp"
	"github.com/kovara/desktop/engine/setup"
)

// maxModelsBody bounds the /v1/models answer: real lists are kilobytes.
const maxModelsBody = 8 << 20

func checkTimeout(e setup.Endpoint) time.Duration {
	if e.Timeout > 0 {
		return e.Timeout
	}
	return 15 * time.Second
}

// tlsConfig is the client TLS setup: verification on unless the user turned
// it off for this endpoint, and HTTP/1.1 only so one connection is one
// stream slot.
func tlsConfig(e setup.Endpoint, host string) *tls.Config {
	return &tls.Config{
		ServerName:         host,
		InsecureSkipVerify: e.InsecureTLS, //nolint:gosec // the user's explicit per-endpoint choice
		NextProtos:         []string{"http/1.1"},
		MinVersion:         tls.VersionTLS12,
	}
}

// newTransport builds a transport that holds a single keep-alive
// connection. When pre is non-nil it is handed out on the first dial, so a
// connection opened ahead of a level carries the level's first request.
// Every connection is stamped (netstamp); onConn, when set, learns of each
// one so the slot can read its stamps.
func newTransport(e setup.Endpoint, b setup.Base, pre net.Conn, onConn func(*netstamp.Conn)) *http.Transport {
	// The transport dials from its own goroutines, two at once when a
	// connection is slow to open (the /metrics scraper's were), so the
	// pre-opened connection is handed out under a lock, to one dial only.
	var first oneConn
	first.c = pre
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		if c := first.take(); c != nil {
			if sc, ok := c.(*netstamp.Conn); ok && onConn != nil {
				onConn(sc)
			}
			return c, nil
		}
		sc, c, err := dialStamped(ctx, e, b)
		if err == nil && onConn != nil {
			onConn(sc)
		}
		return c, err
	}
	tr := &http.Transport{
		Proxy:               nil, // a proxy would be measured too; talk to the server directly
		DialContext:         dial,
		TLSClientConfig:     tlsConfig(e, b.Host),
		TLSHandshakeTimeout: 10 * time.Second,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // no HTTP/2
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true, // gzip would hold back streamed chunks
	}
	if b.TLS() {
		tr.DialTLSContext = dial
	}
	return tr
}

// oneConn is a connection handed out once, to whichever of the
// transport's concurrent dials asks first.
type oneConn struct {
	mu sync.Mutex
	c  net.Conn
}

func (o *oneConn) take() net.Conn {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.c
	o.c = nil
	return c
}

// dialStamped opens one stamped connection, with the TLS handshake done
// for https. It returns the stamped TCP connection and the connection to
// use (the same, or TLS over it).
func dialStamped(ctx context.Context, e setup.Endpoint, b setup.Base) (*netstamp.Conn, net.Conn, error) {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	raw, err := dialer.DialContext(ctx, "tcp", b.HostPort())
	if err != nil {
		return nil, nil, err
	}
	sc := netstamp.Wrap(raw)
	if !b.TLS() {
		return sc, sc, nil
	}
	tc := tls.Client(sc, tlsConfig(e, b.Host))
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		sc.Close()
		return nil, nil, err
	}
	return sc, tc, nil
}

// checkClient is a short-lived client for the endpoint checks, the first
// contact with an endpoint: an https handshake that goes unanswered has
// the port asked whether it speaks plain HTTP (dialTLSWatched).
func checkClient(e setup.Endpoint, b setup.Base) *http.Client {
	tr := newTransport(e, b, nil, nil)
	tr.MaxConnsPerHost = 0
	tr.MaxIdleConnsPerHost = 2
	if b.TLS() {
		tr.DialTLSContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialTLSWatched(ctx, e, b)
		}
	}
	return &http.Client{Transport: tr, Timeout: checkTimeout(e), CheckRedirect: sameServer}
}

// otherSchemeAfter is how long a first TLS handshake may go unanswered
// before the port is asked whether it speaks plain HTTP. A TLS server on a
// home network answers in milliseconds; a plain one reads the handshake as
// a request line and may wait for its end until its read timeout
// (llama-server waits for a CRLF for minutes), so without asking, the
// check would only say that the server did not answer in time.
const otherSchemeAfter = time.Second

// errOtherScheme marks a first contact that found the server speaking the
// protocol its address does not name (speaksOtherScheme); connectError
// says so with the address that would reach it.
var errOtherScheme = errors.New("the server speaks the other protocol on this port")

// dialTLSWatched is dialStamped for the first contact with an https
// address: when the handshake is still unanswered after otherSchemeAfter
// and the port answers plain HTTP, it ends at once with errOtherScheme.
func dialTLSWatched(ctx context.Context, e setup.Endpoint, b setup.Base) (net.Conn, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watch := time.AfterFunc(otherSchemeAfter, func() {
		if speaksOtherScheme(ctx, e, b) {
			cancel(errOtherScheme)
		}
	})
	defer watch.Stop()
	_, c, err := dialStamped(ctx, e, b)
	if err != nil && errors.Is(context.Cause(ctx), errOtherScheme) {
		return nil, fmt.Errorf("%w: %w", errOtherScheme, err)
	}
	return c, err
}

// otherSchemeProbeTime bounds speaksOtherScheme: one connection and one
// short answer.
const otherSchemeProbeTime = 3 * time.Second

// speaksOtherScheme reports whether the server at b's host and port speaks
// the protocol b's address does not name. For an https address: it answers
// a plain HTTP request with an HTTP answer that is not a TLS server's
// complaint about one (tlsComplaint). For an http address: it completes a
// TLS handshake, or answers one with a TLS alert. It sends no API key and
// no body, and verifies no certificate: it only asks which protocol the
// port speaks, and the request that follows on the right scheme verifies
// as the endpoint says.
func speaksOtherScheme(ctx context.Context, e setup.Endpoint, b setup.Base) bool {
	ctx, cancel := context.WithTimeout(ctx, otherSchemeProbeTime)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", b.HostPort())
	if err != nil {
		return false
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if !b.TLS() {
		cfg := tlsConfig(e, b.Host)
		cfg.InsecureSkipVerify = true //nolint:gosec // asks only whether the port speaks TLS; nothing is sent over it
		err := tls.Client(c, cfg).HandshakeContext(ctx)
		return err == nil || strings.Contains(err.Error(), "remote error: tls:")
	}
	req := "GET / HTTP/1.1\r\nHost: " + b.HostPort() + "\r\nUser-Agent: kovara-desktop\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var body []byte
	if resp.StatusCode == http.StatusBadRequest {
		body, _, _ = readBounded(resp.Body, 4<<10)
	}
	return !tlsComplaint(resp.StatusCode, body)
}

// sameServer is the redirect policy of every client that carries the API
// key. The transports only ever dial the endpoint's own address, so a
// redirect elsewhere cannot be followed truthfully: it ends the request
// with the redirect itself (see redirectNote), and the key is never sent
// anywhere but the address the user gave. A redirect on the same scheme,
// host and port is followed.
func sameServer(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if o := via[0].URL; req.URL.Scheme != o.Scheme || !strings.EqualFold(req.URL.Host, o.Host) {
		return http.ErrUseLastResponse
	}
	return nil
}

func authorize(e setup.Endpoint, req *http.Request) {
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
}

// Model is one entry of /v1/models.
type Model struct {
	ID            string
	OwnedBy       string
	ContextLength int
	ContextField  string // the /v1/models field ContextLength came from
}

// listModels asks GET /v1/models and returns the served models, or an
// *EndpointError that says in words what is wrong.
func listModels(ctx context.Context, c *http.Client, e setup.Endpoint, b setup.Base) ([]Model, http.Header, error) {
	u := b.API("/v1/models")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, &EndpointError{Kind: ErrBadAddress, Msg: err.Error()}
	}
	authorize(e, req)
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		// A port that closes on the scheme the address names may speak
		// the other one: ask it, once, before advising.
		if !errors.Is(err, errOtherScheme) && closedByServer(err) && ctx.Err() == nil && speaksOtherScheme(ctx, e, b) {
			err = fmt.Errorf("%w: %w", errOtherScheme, err)
		}
		return nil, nil, connectError(e, b, err)
	}
	defer resp.Body.Close()
	body, tooBig, err := readBounded(resp.Body, maxModelsBody)
	if err != nil {
		return nil, resp.Header, connectError(e, b, err)
	}
	if !b.TLS() && tlsComplaint(resp.StatusCode, body) {
		return nil, resp.Header, otherSchemeError(b, nil)
	}
	if note := redirectNote(resp, e.APIKey); note != "" {
		return nil, resp.Header, &EndpointError{Kind: ErrBadAddress, Msg: "the server " + note}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, resp.Header, statusError(e, resp.StatusCode, "/v1/models", body)
	}
	if tooBig {
		return nil, resp.Header, &EndpointError{Kind: ErrNotOpenAI, Msg: fmt.Sprintf(
			"GET /v1/models answered with more than %d MiB: that is not a model list; is this the API port?", maxModelsBody>>20)}
	}
	models, err := parseModels(body)
	if err != nil {
		return nil, resp.Header, err
	}
	return models, resp.Header, nil
}

// readBounded reads at most limit bytes and reports whether more followed.
func readBounded(r io.Reader, limit int64) ([]byte, bool, error) {
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return body[:limit], true, nil
	}
	return body, false, nil
}

func parseModels(body []byte) ([]Model, error) {
	trimmed := strings.TrimSpace(string(body[:min(len(body), 512)]))
	if strings.HasPrefix(trimmed, "<") {
		return nil, &EndpointError{Kind: ErrNotOpenAI, Msg: "GET /v1/models answered with a web page, not an OpenAI model list: is this the API port of the server?"}
	}
	var list struct {
		Object *string `json:"object"`
		Data   *[]struct {
			ID           string          `json:"id"`
			OwnedBy      string          `json:"owned_by"`
			MaxModelLen  json.Number     `json:"max_model_len"`
			ContextLen   json.Number     `json:"context_length"`
			Meta         json.RawMessage `json:"meta"`
			ContextWin   json.Number     `json:"context_window"`
			MaxPositions json.Number     `json:"max_position_embeddings"`
			MaxContext   json.Number     `json:"max_context_length"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return nil, &EndpointError{Kind: ErrNotOpenAI, Msg: "GET /v1/models did not answer with an OpenAI-style model list (an object with a \"data\" array): is this an OpenAI-compatible server?"}
	}
	var out []Model
	for _, d := range *list.Data {
		if d.ID == "" {
			continue
		}
		m := Model{ID: d.ID, OwnedBy: d.OwnedBy}
		for i, n := range []json.Number{d.MaxModelLen, d.ContextLen, d.MaxContext, d.ContextWin, d.MaxPositions} {
			if v, err := n.Int64(); err == nil && v > 0 {
				m.ContextLength = int(v)
				m.ContextField = []string{"max_model_len", "context_length", "max_context_length", "context_window", "max_position_embeddings"}[i]
				break
			}
		}
		if m.ContextLength == 0 && len(d.Meta) > 0 {
			var meta struct {
				NCtxTrain json.Number `json:"n_ctx_train"`
				NCtx      json.Number `json:"n_ctx"`
			}
			if json.Unmarshal(d.Meta, &meta) == nil {
				for i, n := range []json.Number{meta.NCtx, meta.NCtxTrain} {
					if v, err := n.Int64(); err == nil && v > 0 {
						m.ContextLength = int(v)
						m.ContextField = []string{"meta.n_ctx", "meta.n_ctx_train"}[i]
						break
					}
				}
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, &EndpointError{Kind: ErrNoModel, Msg: "the server lists no models: is a model loaded yet?"}
	}
	return out, nil
}

// modelHintBoth is where the model is chosen when the caller did not say
// (Endpoint.ModelHint): the app's Benchmark form, or the CLI's flag.
const modelHintBoth = "in the app's Model field, or with kovara-bench's --model"

// ServedModels lists the ids of the models the endpoint serves, sorted,
// within the endpoint's check timeout: the app's Benchmark form offers
// them before a run.
func ServedModels(ctx context.Context, ep setup.Endpoint) ([]string, error) {
	b, err := setup.ParseBase(ep.URL)
	if err != nil {
		return nil, &EndpointError{Kind: ErrBadAddress, Msg: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout(ep))
	defer cancel()
	c := checkClient(ep, b)
	defer c.CloseIdleConnections()
	models, _, err := listModels(ctx, c, ep, b)
	if err != nil {
		return nil, err
	}
	ids := modelIDs(models)
	sort.Strings(ids)
	return ids, nil
}

// ResolveModel picks the model to request: the one asked for, which must be
// served, or the only one served. hint says where the user chooses one
// (Endpoint.ModelHint), as a phrase that follows "choose one".
func ResolveModel(models []Model, want, hint string) (string, error) {
	if hint == "" {
		hint = modelHintBoth
	}
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	sort.Strings(ids)
	if want != "" {
		for _, id := range ids {
			if id == want {
				return id, nil
			}
		}
		// Ollama's name without a tag is its ":latest", as `ollama run`
		// takes it; its model list names the tag.
		if !strings.Contains(want, ":") && slices.Contains(ids, want+":latest") {
			return want + ":latest", nil
		}
		return "", &EndpointError{Kind: ErrModelNotServed, Msg: fmt.Sprintf(
			"the server does not serve %q; it serves: %s", want, strings.Join(ids, ", "))}
	}
	if len(ids) == 1 {
		return ids[0], nil
	}
	return "", &EndpointError{Kind: ErrModelNotServed, Msg: fmt.Sprintf(
		"the server serves %d models; choose one %s: %s", len(ids), hint, strings.Join(ids, ", "))}
}
