// Package netstamp wraps TCP connections so every read learns when the
// kernel received its bytes and every write notes when its bytes were
// handed to the kernel.
//
// A client that stamps a chunk when its own goroutine gets round to the
// read adds its scheduling delay to every TTFT and inter-token gap; under a
// burst of hundreds of streams that delay is the client's, not the
// server's. Where the operating system offers receive timestamps (Linux
// SO_TIMESTAMPNS) the stamp is the kernel's; elsewhere it is the moment the
// read returned, as other tools do.
package netstamp

import (
	"errors"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// Conn is a stamped connection. Its stamps are plain time.Time values with
// a monotonic reading, so they subtract cleanly from a run's start.
type Conn struct {
	net.Conn
	plat platform

	// Stamps are kept as monotonic offsets from epoch (+1, so 0 means
	// none yet) to stay allocation-free.
	lastRead  atomic.Int64 // when the bytes of the latest read arrived
	lastWrite atomic.Int64 // when the latest write's bytes left
	kernel    atomic.Bool  // the latest read stamp came from the kernel
	kernelTx  atomic.Bool  // the latest write stamp came from the kernel
	// gone: a read ended the connection (the peer closed it, or it
	// broke) or it was closed on this side. net/http's transport keeps a
	// read pending on an idle connection, so a server's close shows here
	// while the connection waits for its next request.
	gone atomic.Bool
}

// epoch anchors the stamps.
var epoch = time.Now()

// Wrap stamps c: reads with the kernel's receive time where the OS gives
// it, writes with the moment just before the write call began. It never
// fails: without kernel timestamps reads get the time the call returned.
// The Conn owns c: close the Conn, never c itself (on Linux a read may be
// waiting inside c, and only the Conn's Close ends that wait).
//
// Writes are not stamped by the kernel here on purpose. A transmit stamp
// is delivered on the socket's error queue, which wakes whoever polls the
// socket; on a virtual machine that wakeup can stall the write for
// milliseconds after the stamp was taken and before the bytes leave
// (seen at ~3.5 ms, traced with perf), so the stamp would claim the bytes
// left earlier than they did. A client's request start is therefore the
// moment its last write call began.
func Wrap(c net.Conn) *Conn {
	w := &Conn{Conn: c}
	w.plat.init(c, false)
	return w
}

// WrapSending stamps c like Wrap and also asks the kernel for each write's
// transmit time, which the simulator's record uses. Its stall, when one
// happens, comes after the stamp, inside the write call: a record that
// uses these stamps must allow for the call's length (see sim.Timing).
func WrapSending(c net.Conn) *Conn {
	w := &Conn{Conn: c}
	w.plat.init(c, true)
	return w
}

// Read reads like the wrapped connection and records when the bytes came in.
func (c *Conn) Read(p []byte) (int, error) {
	n, at, kernel, err := c.plat.read(c.Conn, p)
	if n > 0 {
		c.lastRead.Store(int64(at.Sub(epoch)) + 1)
		c.kernel.Store(kernel)
	}
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		c.gone.Store(true)
	}
	return n, err
}

// Close closes the connection and marks it gone.
func (c *Conn) Close() error {
	c.gone.Store(true)
	c.plat.closing()
	return c.Conn.Close()
}

// SetDeadline sets the wrapped connection's deadlines. The reader's own
// bound on its waits (see pull_linux.go) steps aside from then on.
func (c *Conn) SetDeadline(t time.Time) error {
	c.plat.userDeadline()
	return c.Conn.SetDeadline(t)
}

// SetReadDeadline sets the wrapped connection's read deadline, as
// SetDeadline does.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.plat.userDeadline()
	return c.Conn.SetReadDeadline(t)
}

// Gone reports whether the connection can no longer carry a request: a
// read found it closed by the peer or broken, or it was closed here. A
// false answer is no promise: the peer's close may still be on its way.
func (c *Conn) Gone() bool { return c.gone.Load() }

// Write writes and records when the bytes left: for WrapSending the
// kernel's transmit time where the OS reports it, else the moment before
// the write began. Writes
// must not be concurrent (TCP users such as net/http never make them so).
func (c *Conn) Write(p []byte) (int, error) {
	before := time.Now()
	n, err := c.Conn.Write(p)
	at, kernel := before, false
	if tx, ok := c.plat.sent(); ok && !tx.Before(before) {
		at, kernel = tx, true // older stamps belong to an earlier write
	}
	c.kernelTx.Store(kernel)
	c.lastWrite.Store(int64(at.Sub(epoch)) + 1)
	return n, err
}

// LastRead is when the bytes of the latest read arrived (zero before any).
func (c *Conn) LastRead() time.Time { return fromOffset(c.lastRead.Load()) }

// KernelStamps reports whether the latest read was stamped by the kernel.
func (c *Conn) KernelStamps() bool { return c.kernel.Load() }

// KernelSent reports whether the latest write was stamped by the kernel.
func (c *Conn) KernelSent() bool { return c.kernelTx.Load() }

// LastWrite is when the latest write's bytes left (zero before any).
func (c *Conn) LastWrite() time.Time { return fromOffset(c.lastWrite.Load()) }

func fromOffset(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(v - 1))
}

// fromWall turns a kernel wall-clock stamp into a monotonic instant, given
// a monotonic instant mono at which the wall clock read wallNs: the event
// happened wallNs−stamp before mono. A stamp from the future or from long
// ago (the wall clock was stepped) is refused.
func fromWall(mono time.Time, wallNs, stampNs int64) (time.Time, bool) {
	lag := time.Duration(wallNs - stampNs)
	if lag < 0 || lag > 10*time.Second {
		return mono, false
	}
	return mono.Add(-lag), true
}

// rawOf is c's socket for system calls, where c has one.
func rawOf(c net.Conn) (syscall.RawConn, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, false
	}
	raw, err := sc.SyscallConn()
	return raw, err == nil
}
