package record

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve answers on ln until ctx ends, then lets each answer in progress
// finish for up to grace before closing its connection.
func Serve(ctx context.Context, ln net.Listener, p *Proxy, grace time.Duration) error {
	srv := &http.Server{
		Handler: p,
		// A client has this long to send its request's head; its body
		// and the answer have no bound (answers stream for minutes).
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("the recording proxy stopped: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	p.Close()
	return nil
}

// ReachWords is "" for an address only this machine reaches (loopback),
// else the sentence a person must read before others can use their server
// through the proxy.
func ReachWords(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return ""
	}
	return fmt.Sprintf("The proxy listens on %s: anyone who can reach this machine on port %s can use your server through it without its API key being asked of them by the proxy, and what they send is recorded in the trace (its lengths and timing, never its words).", addr, port)
}
