//go:build linux

package netstamp

import (
	"errors"
	"iter"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Go's netpoller makes every read try the socket before it waits, and
// clears any readiness it saw before that try. A stream reader therefore
// pays two recvmsg calls a chunk: the one that brings the chunk and one
// that finds the socket empty and parks. The puller saves the second:
// TCP_INQ tells, with each read, how many bytes the socket still holds,
// and when it held none the next read waits for readiness first. That is
// only safe inside one RawConn.Read call (a new call would clear readiness
// that came in between), so the puller keeps one call alive across reads,
// as a coroutine that yields each result to the Read that resumed it
// (docs/performance.md, "Where the system calls went").
//
// KOVARA_NETREAD=poll turns it off, for side-by-side measurements.
var pullOff = os.Getenv("KOVARA_NETREAD") == "poll"

// waitCap bounds a wait that began without a try. TCP_INQ reports a
// received FIN as a byte still to read, but not a reset: a reset that
// came in with the chunk just read would otherwise wait for an event that
// already happened. After waitCap without readiness the socket is tried.
var waitCap = time.Second // a variable for the tests

// aLongTimeAgo is a read deadline that has passed: it wakes a waiting read.
var aLongTimeAgo = time.Unix(1, 0)

type puller struct {
	on   bool
	conn net.Conn
	pl   *platform // whose socket and recvmsg state the reads use

	// mu lets one Read (or the close) at a time drive the coroutine.
	mu      sync.Mutex
	next    func() (struct{}, bool)
	stop    func()
	yield   func(struct{}) bool
	stepFn  func(uintptr) bool // p.step, made once: RawConn.Read takes a func
	ended   bool               // the coroutine is finished: the connection is closed
	stopped bool               // stop asked the coroutine to end
	rawErr  error              // RawConn.Read's own error for the Read in progress
	// waitFirst: the latest read left the socket empty.
	waitFirst bool

	// dl orders the wait cap's deadline against the deadlines set by the
	// connection's user and by close.
	dl     sync.Mutex
	capAt  int64       // when the armed cap runs out, as an offset from epoch
	user   atomic.Bool // the user set a deadline: no cap and no waiting first
	closed atomic.Bool
}

// init switches the puller on when the kernel gives TCP_INQ.
func (p *puller) init(c net.Conn, pl *platform) {
	if pullOff || setInt(pl.raw, unix.SOL_TCP, unix.TCP_INQ, 1) != nil {
		return
	}
	p.on, p.conn, p.pl = true, c, pl
	p.stepFn = p.step
}

// read brings the next bytes into the platform's message buffers, as one
// recvmsg did; it returns RawConn.Read's own error (deadline, closed).
func (p *puller) read() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended || p.closed.Load() {
		return net.ErrClosed
	}
	if p.next == nil {
		p.next, p.stop = iter.Pull(p.serve)
	}
	p.rawErr = nil
	if _, ok := p.next(); !ok {
		p.ended = true
		return net.ErrClosed
	}
	if p.rawErr != nil && p.closed.Load() {
		return net.ErrClosed
	}
	return p.rawErr
}

// serve is the coroutine: one RawConn.Read for as long as it goes well.
func (p *puller) serve(yield func(struct{}) bool) {
	p.yield = yield
	for {
		err := p.pl.raw.Read(p.stepFn)
		if p.stopped || err == nil {
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !p.user.Load() && !p.closed.Load() {
			// The cap ran out: try the socket, then wait again.
			p.waitFirst = false
			p.arm()
			continue
		}
		p.rawErr = err
		if !yield(struct{}{}) {
			return
		}
	}
}

// step is RawConn.Read's callback: false waits for readiness. Each result
// is handed to the Read that resumed the coroutine; the next Read resumes
// it here, still inside the same RawConn.Read.
func (p *puller) step(fd uintptr) bool {
	pl := p.pl
	for {
		if p.waitFirst {
			p.waitFirst = false
			p.arm()
			return false
		}
		if !pl.recv(fd) {
			p.arm()
			return false
		}
		if pl.rerr == nil && pl.rn > 0 && !p.user.Load() {
			left, ok := inqOf(pl.oob[:pl.roobn])
			p.waitFirst = ok && left == 0
		}
		if !p.yield(struct{}{}) {
			p.stopped = true
			return true
		}
	}
}

// arm makes sure the wait about to begin ends within waitCap, moving the
// read deadline only when less than half the cap is left.
func (p *puller) arm() {
	now := time.Now()
	at := int64(now.Sub(epoch))
	if p.capAt-at > int64(waitCap/2) || p.user.Load() {
		return
	}
	p.dl.Lock()
	if !p.user.Load() && !p.closed.Load() {
		p.capAt = at + int64(waitCap)
		_ = p.conn.SetReadDeadline(now.Add(waitCap))
	}
	p.dl.Unlock()
}

// userDeadline: the connection's user sets its own deadlines from now on.
func (p *puller) userDeadline() {
	if !p.on {
		return
	}
	p.dl.Lock()
	p.user.Store(true)
	p.dl.Unlock()
}

// close ends the coroutine, which holds a reference to the socket that
// would keep the socket's Close waiting: a waiting read is woken by a
// deadline in the past, a suspended one is stopped.
func (p *puller) close() {
	if !p.on {
		return
	}
	p.dl.Lock()
	p.closed.Store(true)
	_ = p.conn.SetReadDeadline(aLongTimeAgo)
	p.dl.Unlock()
	p.mu.Lock()
	if p.stop != nil {
		p.stop()
	}
	p.ended = true
	p.mu.Unlock()
}
