package netstamp

import (
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// pair returns a connected client (wrapped) and server end on loopback.
func pair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-acc
	w := WrapSending(c)
	t.Cleanup(func() { w.Close(); s.Close() })
	return w, s
}

// timestampsOn waits until the kernel's receive timestamping is on: the
// package's keeper socket asks for it at start-up, but the kernel switches
// it on through a workqueue, and a test that starts at once can beat it.
func timestampsOn(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	for try := 0; try < 100; try++ {
		c, s := pair(t)
		s.Write([]byte("x"))
		if _, err := c.Read(make([]byte, 1)); err == nil && c.KernelStamps() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the kernel never stamped a read")
}

func TestReadStampIsArrivalNotReadTime(t *testing.T) {
	t.Parallel()
	timestampsOn(t)
	c, s := pair(t)
	sent := time.Now()
	if _, err := s.Write([]byte("data: x\n\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond) // the bytes wait in the socket buffer
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	readAt := time.Now()
	if err != nil || string(buf[:n]) != "data: x\n\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	at := c.LastRead()
	if runtime.GOOS != "linux" {
		if at.Before(sent) || at.After(readAt) {
			t.Fatalf("stamp %v outside [sent, read]", at)
		}
		return
	}
	if !c.KernelStamps() {
		t.Fatal("want a kernel timestamp on linux")
	}
	// The stamp is when the data arrived, about when it was sent, not when
	// the read returned 60 ms later. The kernel stamps by the wall clock,
	// so the two are compared on it, and a wall-clock adjustment between
	// them can put the stamp a little before the send (−0.49 ms once,
	// under a CPU hog): 2 ms either way is allowed.
	if d := at.Sub(sent); d < -2*time.Millisecond || d > 20*time.Millisecond {
		t.Errorf("stamp − sent = %v, want within 20 ms", d)
	}
	if d := readAt.Sub(at); d < 50*time.Millisecond {
		t.Errorf("read − stamp = %v, want ≈ 60 ms of waiting", d)
	}
}

func TestReadEOFAndDeadline(t *testing.T) {
	t.Parallel()
	c, s := pair(t)
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("deadline: got %v, want a timeout net.Error", err)
	}
	c.SetReadDeadline(time.Time{})
	s.Write([]byte("ab"))
	s.Close()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "ab" {
		t.Fatalf("ReadAll = %q, %v; want ab, nil (EOF)", got, err)
	}
}

func TestWriteStamp(t *testing.T) {
	t.Parallel()
	c, s := pair(t)
	if !c.LastWrite().IsZero() {
		t.Fatal("no write yet, want zero")
	}
	before := time.Now()
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if w := c.LastWrite(); w.Before(before) || w.After(after) {
		t.Errorf("write stamp %v outside [%v, %v]", w, before, after)
	}
	if runtime.GOOS == "linux" && !c.KernelSent() {
		t.Errorf("want a kernel transmit timestamp on linux")
	}
	// Many writes: each gets its own stamp, and the error queue is drained
	// so stale stamps never stand in for a later write.
	for i := 0; i < 50; i++ {
		before := time.Now()
		c.Write([]byte("x"))
		if w := c.LastWrite(); w.Before(before) {
			t.Fatalf("write %d: stamp %v before the write began %v", i, w, before)
		}
	}
	buf := make([]byte, 52)
	io.ReadFull(s, buf)
}

func TestFromWall(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		lag  time.Duration
		ok   bool
		want time.Duration
	}{
		{5 * time.Millisecond, true, 5 * time.Millisecond},
		{0, true, 0},
		{-time.Millisecond, false, 0},
		{11 * time.Second, false, 0},
	}
	for _, tc := range tests {
		at, ok := fromWall(now, now.UnixNano(), now.UnixNano()-int64(tc.lag))
		if ok != tc.ok || now.Sub(at) != tc.want {
			t.Errorf("lag %v: got %v %v, want %v %v", tc.lag, now.Sub(at), ok, tc.want, tc.ok)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		s, _ := ln.Accept()
		chunk := make([]byte, 256)
		for {
			if _, err := s.Write(chunk); err != nil {
				return
			}
		}
	}()
	raw, _ := net.Dial("tcp", ln.Addr().String())
	c := Wrap(raw)
	defer c.Close()
	buf := make([]byte, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := c.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
}
