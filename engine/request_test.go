package engine

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/netstamp"
	"github.com/kovara/desktop/engine/setup"
)

// TestRequestStartsAtItsLastWrite checks that a measured request starts
// when its bytes left on the socket, not when the slot handed it to
// net/http: under a burst the transport's write goroutine runs late, and
// that wait is the client's. (httptrace's WroteRequest fires before the
// transport flushes a small request, so it cannot be the source.)
func TestRequestStartsAtItsLastWrite(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, fastSim())
	base, err := setup.ParseBase(url)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	c := newConn(setup.Endpoint{URL: url}, base, t0)
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
		if sock.KernelSent() {
			t.Errorf("request %d: the client asked for kernel transmit stamps (see netstamp.Wrap)", n)
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

// TestSendGateIsGivenBack: a slot's place in the send gate comes back
// whether the request is answered, refused, cut off or cancelled while
// waiting, so a level's first round can never wedge on it.
func TestSendGateIsGivenBack(t *testing.T) {
	t.Parallel()
	_, live := startSim(t, fastSim())
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr
	}()
	// A server that reads the request and hangs up without an answer.
	hangsUp := "http://" + rawServer(t, func(c net.Conn) {
		c.Read(make([]byte, 64<<10))
		c.Close()
	})

	opts := requestOpts{model: "kovara-sim-8b", maxTokens: 4, words: 50, seed: 1, ignoreEOS: true}
	for _, tt := range []struct {
		name, url string
		wantOK    bool
	}{
		{"answered", live, true},
		{"connection refused", refused, false},
		{"hung up", hangsUp, false},
	} {
		base, err := setup.ParseBase(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		c := newConn(setup.Endpoint{URL: tt.url}, base, time.Now())
		g := newSendGate(1)
		for n := int64(1); n <= 3; n++ {
			c.gate = g
			out := c.do(context.Background(), opts, n, 5*time.Second)
			if got := out.class == ""; got != tt.wantOK {
				t.Errorf("%s: request %d: class %q %s", tt.name, n, out.class, out.msg)
			}
			if len(g.places) != 0 || c.held.Load() != nil {
				t.Fatalf("%s: request %d kept its place in the send gate", tt.name, n)
			}
		}
		c.close()
	}

	// Waiting for a place ends with the request's context.
	base, _ := setup.ParseBase(live)
	c := newConn(setup.Endpoint{URL: live}, base, time.Now())
	defer c.close()
	g := newSendGate(1)
	g.places <- struct{}{} // another slot is writing and never finishes
	c.gate = g
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := c.do(ctx, opts, 1, 5*time.Second)
	if !out.interrupted {
		t.Errorf("a stopped run's request waiting at the gate: class %q, interrupted %v", out.class, out.interrupted)
	}
	if len(g.places) != 1 || c.held.Load() != nil {
		t.Errorf("a request that never got a place gave one back or kept one")
	}
}
