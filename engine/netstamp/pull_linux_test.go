//go:build linux

package netstamp

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"testing"
	"time"
)

// guard fails the test when f has not returned within a generous limit,
// instead of hanging until go test's own timeout.
func guard(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still blocked after 20 s", what)
	}
}

func pulling(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	c, s := pair(t)
	if !c.plat.pull.on {
		t.Skip("this kernel gives no TCP_INQ: reads try before they wait")
	}
	return c, s
}

// Each chunk costs one recvmsg: the read after a chunk that emptied the
// socket waits for the next one instead of finding the socket empty.
func TestPullOneRecvPerChunk(t *testing.T) {
	t.Parallel()
	c, s := pulling(t)
	const n = 200
	ack := make(chan struct{})
	go func() {
		for i := range n {
			s.Write([]byte("data: chunk\n\n"))
			if i%2 == 0 {
				time.Sleep(50 * time.Microsecond) // sometimes the reader waits first, sometimes the data is there
			}
			<-ack
		}
	}()
	buf := make([]byte, 4096)
	guard(t, "reading", func() {
		for range n {
			k, err := c.Read(buf)
			if err != nil || string(buf[:k]) != "data: chunk\n\n" {
				t.Errorf("Read = %q, %v; want one chunk", buf[:k], err)
				return
			}
			ack <- struct{}{}
		}
	})
	// The very first read tries before it waits, and may find nothing.
	if got := c.plat.recvs; got > n+1 {
		t.Errorf("recvmsg calls for %d chunks: got %d, want at most %d", n, got, n+1)
	}
}

// Whatever the timing of the writes, every byte is read and no read waits
// for an event that already happened.
func TestPullNoLostWakeup(t *testing.T) {
	t.Parallel()
	c, s := pulling(t)
	var want bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := make([][]byte, 3000)
	for i := range pieces {
		pieces[i] = bytes.Repeat([]byte{byte('a' + i%26)}, 1+rng.IntN(300))
		want.Write(pieces[i])
	}
	go func() {
		for i, p := range pieces {
			s.Write(p)
			if i%3 == 0 {
				time.Sleep(time.Duration(rng.IntN(40)) * time.Microsecond)
			}
		}
		s.Close()
	}()
	var got []byte
	guard(t, "reading every piece", func() {
		var err error
		got, err = io.ReadAll(c)
		if err != nil {
			t.Errorf("ReadAll: %v", err)
		}
	})
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("read %d bytes, want %d (the same bytes)", len(got), want.Len())
	}
}

// Close ends a read that waits and one that is suspended between reads;
// neither keeps Close waiting, and reads after it fail as closed.
func TestPullClose(t *testing.T) {
	t.Parallel()
	t.Run("waiting", func(t *testing.T) {
		t.Parallel()
		c, _ := pulling(t)
		errc := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 64))
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond) // let the read begin its wait
		guard(t, "Close", func() { c.Close() })
		var err error
		guard(t, "the waiting Read", func() { err = <-errc })
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("waiting Read: got %v, want net.ErrClosed", err)
		}
	})
	t.Run("between reads", func(t *testing.T) {
		t.Parallel()
		c, s := pulling(t)
		s.Write([]byte("one"))
		buf := make([]byte, 64)
		if k, err := c.Read(buf); err != nil || string(buf[:k]) != "one" {
			t.Fatalf("Read = %q, %v", buf[:k], err)
		}
		guard(t, "Close", func() { c.Close() })
		if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after Close: got %v, want net.ErrClosed", err)
		}
		if !c.Gone() {
			t.Error("Gone() = false after Close")
		}
	})
}

// A reset right behind the data is reported, not waited for.
func TestPullResetBehindData(t *testing.T) {
	t.Parallel()
	c, s := pulling(t)
	s.Write([]byte("last words"))
	s.(*net.TCPConn).SetLinger(0) // close with a reset
	s.Close()
	var got []byte
	var err error
	guard(t, "reading to the reset", func() { got, err = io.ReadAll(c) })
	if string(got) != "last words" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("ReadAll = %q, %v; want the data, then ECONNRESET", got, err)
	}
	if !c.Gone() {
		t.Error("Gone() = false after a reset")
	}
}

// A wait that began without a try gives up after waitCap, tries the
// socket, and waits again, unseen by the reader: a reset whose wakeup was
// spent on the data before it is found within the cap.
func TestPullWaitCap(t *testing.T) {
	old := waitCap
	waitCap = 10 * time.Millisecond
	defer func() { waitCap = old }()
	c, s := pulling(t)
	defer c.Close()
	errc := make(chan error, 1)
	buf := make([]byte, 64)
	go func() {
		k, err := c.Read(buf)
		if err == nil && string(buf[:k]) != "late" {
			err = errors.New("read " + string(buf[:k]))
		}
		errc <- err
	}()
	time.Sleep(150 * time.Millisecond)
	s.Write([]byte("late"))
	var err error
	guard(t, "the Read", func() { err = <-errc })
	if err != nil {
		t.Fatalf("Read across several caps: %v, want the late bytes", err)
	}
	if got := c.plat.recvs; got < 3 {
		t.Errorf("recvmsg calls over 15 caps: got %d, want at least 3 (the first try, retries after caps, the read)", got)
	}
}
