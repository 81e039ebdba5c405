//go:build linux

package netstamp

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel switches receive timestamping on for the whole system lazily:
// the first socket that asks schedules the switch on a workqueue, and
// segments that arrive before it has run carry no stamp (the read then
// falls back to the time it returned). The switch goes off again when the
// last socket asking closes. One UDP socket that asks, held for the life of
// the process, keeps it on, so a connection opened later is stamped from
// its first byte.
var _ = func() int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) != nil {
		unix.Close(fd)
		return -1
	}
	return fd
}()

// platform reads with recvmsg so the kernel's SO_TIMESTAMPNS receive time
// comes with the bytes.
type platform struct {
	raw syscall.RawConn
	oob [256]byte

	// recvmsg state, kept here so that neither the message header nor the
	// callback passed to RawConn.Read is allocated per read.
	msg   unix.Msghdr
	iov   unix.Iovec
	fn    func(uintptr) bool
	rn    int
	roobn int
	rerr  error
	recvs int // recvmsg calls made, for the tests

	// Transmit timestamps come back on the socket's error queue.
	tx      bool
	emsg    unix.Msghdr
	eoob    [256]byte
	drainFn func(uintptr)
	txNs    int64

	// The reader that waits before it reads (pull_linux.go).
	pull puller
}

// txFlags asks for a software timestamp of each write's last byte as it
// leaves for the network device, reported without the packet's payload.
const txFlags = unix.SOF_TIMESTAMPING_TX_SOFTWARE | unix.SOF_TIMESTAMPING_SOFTWARE | unix.SOF_TIMESTAMPING_OPT_TSONLY

func (pl *platform) init(c net.Conn, sending bool) {
	// The control message is parsed by hand for the 64-bit layout only.
	if unix.SizeofCmsghdr != 16 {
		return
	}
	raw, ok := rawOf(c)
	if !ok {
		return
	}
	if setInt(raw, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) != nil {
		return
	}
	pl.raw = raw
	pl.fn = pl.recv
	pl.pull.init(c, pl)
	if !sending {
		return
	}
	if setInt(raw, unix.SOL_SOCKET, unix.SO_TIMESTAMPING, txFlags) == nil {
		pl.tx = true
		pl.drainFn = pl.drain
	}
}

// setInt sets an integer socket option on raw's socket.
func setInt(raw syscall.RawConn, level, opt, value int) error {
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), level, opt, value)
	}); err != nil {
		return err
	}
	return serr
}

// drain empties the error queue and keeps the newest transmit timestamp.
func (pl *platform) drain(fd uintptr) {
	for {
		pl.emsg.Control = &pl.eoob[0]
		pl.emsg.SetControllen(len(pl.eoob))
		_, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&pl.emsg)), unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
		if errno != 0 {
			pl.emsg.Control = nil
			return
		}
		if ns, ok := timestampNs(pl.eoob[:pl.emsg.Controllen]); ok {
			pl.txNs = ns
		}
	}
}

// sent returns the kernel's transmit time of the write just made, if it
// reported one.
func (pl *platform) sent() (time.Time, bool) {
	if !pl.tx {
		return time.Time{}, false
	}
	pl.txNs = 0
	if err := pl.raw.Control(pl.drainFn); err != nil || pl.txNs == 0 {
		return time.Time{}, false
	}
	return monoOf(pl.txNs)
}

// monoOf turns a kernel CLOCK_REALTIME stamp into a monotonic instant. The
// wall clock is read between two monotonic readings, and again when the
// thread was interrupted in between: a pair read milliseconds apart (a
// preempted virtual CPU does that) would shift the stamp by as much. All
// three readings are time.Now's, served by the vDSO: unix.ClockGettime is
// a real system call, and it was two of every three system calls per
// chunk (strace -c -f; docs/performance.md).
func monoOf(stampNs int64) (time.Time, bool) {
	for try := 0; ; try++ {
		a := time.Now()
		wall := time.Now().UnixNano()
		b := time.Now()
		span := b.Sub(a)
		if span <= 20*time.Microsecond || try == 4 {
			return fromWall(a.Add(span/2), wall, stampNs)
		}
	}
}

// recv is one recvmsg on the non-blocking socket. It cannot block, so it
// is a raw system call: syscall.Syscall's entersyscall wakes the runtime's
// sysmon thread on every call, and those wakeups were a third of the
// client's CPU at 64 streams (perf; docs/performance.md).
func (pl *platform) recv(fd uintptr) bool {
	pl.msg.SetControllen(len(pl.oob))
	pl.recvs++
	n, _, errno := unix.RawSyscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&pl.msg)), 0)
	if errno == unix.EAGAIN || errno == unix.EWOULDBLOCK {
		return false
	}
	pl.rn, pl.roobn, pl.rerr = int(n), int(pl.msg.Controllen), nil
	if errno != 0 {
		pl.rn, pl.roobn, pl.rerr = 0, 0, errno
		return true
	}
	if n > 0 {
		quickAck(fd)
	}
	return true
}

// one is TCP_QUICKACK's value, addressable for setsockopt.
var one int32 = 1

// quickAck acknowledges what was just read at once. Linux delays the ACK
// of data that arrives soon after the socket sent some (the request), by
// up to 40 ms, hoping to carry it on a reply; a server with Nagle's
// algorithm on (llama-server: cpp-httplib leaves TCP_NODELAY off) holds
// each small chunk until the previous one is acknowledged. Together they
// held llama-server's whole 16-token answer, headers sent, until its end:
// TTFT read 44 ms instead of 10 ms, and every inter-token gap 0. The
// setting lasts only until the kernel returns to delaying, so it is made
// again after every read: one system call a chunk.
func quickAck(fd uintptr) {
	_, _, _ = unix.RawSyscall6(unix.SYS_SETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, uintptr(unsafe.Pointer(&one)), 4, 0)
}

func (pl *platform) read(c net.Conn, p []byte) (int, time.Time, bool, error) {
	if pl.raw == nil || len(p) == 0 {
		n, err := c.Read(p)
		return n, time.Now(), false, err
	}
	pl.iov.Base = &p[0]
	pl.iov.SetLen(len(p))
	pl.msg.Iov = &pl.iov
	pl.msg.Iovlen = 1
	pl.msg.Control = &pl.oob[0]
	var err error
	if pl.pull.on {
		err = pl.pull.read()
	} else {
		err = pl.raw.Read(pl.fn)
	}
	pl.iov.Base, pl.msg.Iov, pl.msg.Control = nil, nil, nil // do not pin the caller's buffer
	now := time.Now()
	if err != nil {
		return 0, now, false, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if pl.rerr != nil {
		return 0, now, false, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", pl.rerr)}
	}
	if pl.rn == 0 {
		return 0, now, false, io.EOF
	}
	if ns, ok := timestampNs(pl.oob[:pl.roobn]); ok {
		if at, ok := monoOf(ns); ok {
			return pl.rn, at, true, nil
		}
	}
	return pl.rn, now, false, nil
}

// closing and userDeadline tell the reader what Conn is about to do.
func (pl *platform) closing()      { pl.pull.close() }
func (pl *platform) userDeadline() { pl.pull.userDeadline() }

// timestampNs finds an SCM_TIMESTAMPNS control message (or the software
// stamp of an SCM_TIMESTAMPING one) and returns its time in Unix
// nanoseconds.
func timestampNs(oob []byte) (int64, bool) {
	data, ok := findCmsg(oob, func(level, typ int32) bool {
		return level == unix.SOL_SOCKET && (typ == unix.SCM_TIMESTAMPNS || typ == unix.SCM_TIMESTAMPING)
	})
	if !ok || len(data) < 16 {
		return 0, false
	}
	sec := int64(binary.NativeEndian.Uint64(data[0:8]))
	nsec := int64(binary.NativeEndian.Uint64(data[8:16]))
	return sec*1e9 + nsec, true
}

// inqOf finds the TCP_CM_INQ control message: how many bytes the socket
// still held after the read.
func inqOf(oob []byte) (int, bool) {
	data, ok := findCmsg(oob, func(level, typ int32) bool {
		return level == unix.SOL_TCP && typ == unix.TCP_CM_INQ
	})
	if !ok || len(data) < 4 {
		return 0, false
	}
	return int(int32(binary.NativeEndian.Uint32(data[0:4]))), true
}

// findCmsg returns the data of the first control message match accepts.
func findCmsg(oob []byte, match func(level, typ int32) bool) ([]byte, bool) {
	const hdr = unix.SizeofCmsghdr
	for len(oob) >= hdr {
		l := int(binary.NativeEndian.Uint64(oob[0:8]))
		level := int32(binary.NativeEndian.Uint32(oob[8:12]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:16]))
		if l < hdr || l > len(oob) {
			return nil, false
		}
		if match(level, typ) {
			return oob[hdr:l], true
		}
		adv := (l + 7) &^ 7
		if adv > len(oob) {
			return nil, false
		}
		oob = oob[adv:]
	}
	return nil, false
}
