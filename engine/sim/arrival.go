package sim

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kovara/desktop/engine/netstamp"
)

// The truth is taken at the socket, where a real server's clock would
// start and stop: a request arrives when its first bytes reached the
// server's socket (the kernel's receive time where the OS gives it), and a
// chunk leaves when its write to the socket began. The time a server
// spends parsing and queueing a burst of requests is its own and belongs in
// the true TTFT. Start wraps its listener so every connection is stamped;
// a Server mounted elsewhere falls back to the handler's own clock.

type connKey struct{}

// stampListener hands out stampConns.
type stampListener struct {
	net.Listener
	nagle bool // Config.Nagle
	// threads holds a token for each connection being served
	// (Config.HTTPThreads); nil: no limit.
	threads chan struct{}
}

func (l stampListener) Accept() (net.Conn, error) {
	var release func()
	if l.threads != nil {
		// A connection is taken only when a thread is free; until then
		// it waits in the listen queue, its request unread.
		l.threads <- struct{}{}
		release = func() { <-l.threads }
	}
	c, err := l.Listener.Accept()
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	sc := l.wrap(c)
	sc.release = release
	return sc, nil
}

func (l stampListener) wrap(c net.Conn) *stampConn {
	if !l.nagle {
		return &stampConn{Conn: netstamp.WrapSending(c)}
	}
	// With Nagle on, the kernel's transmit stamp is when a held chunk was
	// let go, which the client's ACKs decide; the truth is the server's
	// own write, so writes are stamped as their call began.
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(false)
	}
	return &stampConn{Conn: netstamp.Wrap(c)}
}

// stampConn remembers when the first bytes of the current request arrived.
// ServeHTTP clears the stamp before it returns, which is always before the
// client can send its next request on this connection.
type stampConn struct {
	*netstamp.Conn
	first atomic.Int64 // UnixNano-free: offset from epoch + 1; 0 = not stamped
	// closeWhenIdle: close the connection once the current response is
	// out, as llama-server does after a streamed answer (see
	// Config.CloseAfterStream).
	closeWhenIdle atomic.Bool
	// release frees the connection's thread (Config.HTTPThreads) once.
	release     func()
	releaseOnce sync.Once
}

// Close closes the connection and frees its thread.
func (c *stampConn) Close() error {
	err := c.Conn.Close()
	if c.release != nil {
		c.releaseOnce.Do(c.release)
	}
	return err
}

// connState closes a connection marked closeWhenIdle as soon as its
// response is complete: after the last byte of the answer (the chunked
// body's end included), with no Connection: close header to warn the
// client, so a client that sends its next request at once races the close.
func connState(c net.Conn, st http.ConnState) {
	if sc, ok := c.(*stampConn); ok && st == http.StateIdle && sc.closeWhenIdle.Load() {
		sc.Close()
	}
}

// epoch anchors first-read stamps.
var epoch = time.Now()

func (c *stampConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.first.CompareAndSwap(0, int64(c.Conn.LastRead().Sub(epoch))+1)
	}
	return n, err
}

func connContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*stampConn); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

func stampOf(r *http.Request) *stampConn {
	sc, _ := r.Context().Value(connKey{}).(*stampConn)
	return sc
}

// arrival returns when r's first bytes arrived, or fallback, and a function
// that clears the stamp for the next request.
func arrival(r *http.Request, fallback time.Time) (time.Time, func()) {
	sc := stampOf(r)
	if sc == nil {
		return fallback, func() {}
	}
	v := sc.first.Load()
	if v == 0 {
		return fallback, func() {}
	}
	return epoch.Add(time.Duration(v - 1)), func() { sc.first.Store(0) }
}

// sentAt is when the latest write to r's connection began, if it began
// after since; otherwise now.
func sentAt(sc *stampConn, since time.Time) time.Time {
	if sc != nil {
		if w := sc.LastWrite(); !w.Before(since) {
			return w
		}
	}
	return time.Now()
}
