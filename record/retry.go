package record

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"syscall"
)

// retryStale is the proxy's transport to the server: a request sent on a
// kept-alive connection that the server had just closed is sent once
// more on a new one. llama-server (b4748, cpp-httplib) closes the
// connection after every streamed answer while it still says
// "Keep-Alive: timeout=5, max=100", so a chat client's next turn, sent
// at once, met the close: a 502 for nothing. net/http retries this
// itself only for idempotent methods; an inference request is a POST, but
// one the server closed on without answering did nothing there, and its
// body is in hand (readBody's GetBody), so it is safe to send again.
type retryStale struct{ base http.RoundTripper }

func (t retryStale) RoundTrip(req *http.Request) (*http.Response, error) {
	reused := false
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused },
	})
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err == nil || !reused || req.GetBody == nil || req.Context().Err() != nil || !closedUnder(err) {
		return resp, err
	}
	body, gerr := req.GetBody()
	if gerr != nil {
		return resp, err
	}
	again := req.Clone(req.Context())
	again.Body = body
	return t.base.RoundTrip(again)
}

// closedUnder: the error of a connection the server closed as the
// request went out — an end of input, a reset or a broken pipe.
func closedUnder(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
