package engine

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/netstamp"
)

// TestRequestStartsAtItsLastWrite checks that a measured request starts
// when its bytes left on the socket, not when the slot handed it to
// net/http: under a burst the transport's write goroutine runs late, and
// that wait is the client's. (httptrace's WroteRequest fires before the
// transport flushes a small request, so it cannot be the source.)
func TestRequestStartsAtItsLastWrite(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	base, err := ParseBase(url)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	c := newConn(Endpoint{URL: url}, base, t0)
	defer c.close()
	if err := c.preopen(context.Background()); err != nil {
		t.Fatal(err)
	}
	opts := requestOpts{model: "kovara-sim-8b", maxTokens: 4, words: 50, seed: 1, ignoreEOS: true}
	for n := int64(1); n <= 3; n++ {
		handed := c.clock()
		out := c.do(context.Background(), opts, n, 10*time.Second)
		if out.class != "" {
			t.Fatalf("request %d: %s %s", n, out.class, out.msg)
		}
		sock := c.sock.Load()
		if sock == nil {
			t.Fatal("the slot has no socket")
		}
		if got, want := out.start, sock.LastWrite().Sub(t0); got != want {
			t.Errorf("request %d: start %v, want the socket's last write %v (handed to net/http at %v)", n, got, want, handed)
		}
		if out.start < handed {
			t.Errorf("request %d: start %v before the request was handed over at %v", n, out.start, handed)
		}
		if runtime.GOOS == "linux" && !sock.KernelSent() {
			t.Errorf("request %d: the start is not the kernel's transmit time", n)
		}
		if out.ttft <= 0 || out.end-out.start < out.ttft {
			t.Errorf("request %d: ttft %v, latency %v", n, out.ttft, out.end-out.start)
		}
	}
}

// TestSettleStart moves a provisional start to the socket's last write and
// everything already measured from it along, and leaves a start alone when
// the socket's last write is older (an earlier request's).
func TestSettleStart(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		buf := make([]byte, 16)
		for {
			if _, err := b.Read(buf); err != nil {
				return
			}
		}
	}()
	t0 := time.Now()
	c := &conn{t0: t0}
	s := netstamp.Wrap(a)
	c.sock.Store(s)
	if _, err := s.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	w := s.LastWrite().Sub(t0)
	const ms = time.Millisecond

	tests := []struct {
		name string
		in   outcome
		want outcome
	}{
		{"moved with what was measured",
			outcome{start: w - 3*ms, ttft: 10 * ms, ttfa: 12 * ms, firstEvent: 10 * ms},
			outcome{start: w, ttft: 7 * ms, ttfa: 9 * ms, firstEvent: 7 * ms}},
		{"nothing measured yet",
			outcome{start: w - 3*ms, ttft: -1, ttfa: -1, firstEvent: -1},
			outcome{start: w, ttft: -1, ttfa: -1, firstEvent: -1}},
		{"already settled",
			outcome{start: w, ttft: 7 * ms, ttfa: -1, firstEvent: 7 * ms},
			outcome{start: w, ttft: 7 * ms, ttfa: -1, firstEvent: 7 * ms}},
		{"the write is an earlier request's",
			outcome{start: w + ms, ttft: 5 * ms, ttfa: 5 * ms, firstEvent: 5 * ms},
			outcome{start: w + ms, ttft: 5 * ms, ttfa: 5 * ms, firstEvent: 5 * ms}},
	}
	for _, tt := range tests {
		got := tt.in
		c.settleStart(&got)
		if got.start != tt.want.start || got.ttft != tt.want.ttft || got.ttfa != tt.want.ttfa || got.firstEvent != tt.want.firstEvent {
			t.Errorf("%s: got start %v ttft %v ttfa %v first event %v, want %v %v %v %v", tt.name,
				got.start, got.ttft, got.ttfa, got.firstEvent, tt.want.start, tt.want.ttft, tt.want.ttfa, tt.want.firstEvent)
		}
	}
}
