package sim

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// openStream posts body and reports on ready once the first text-bearing
// chunk (or, failing that, the response headers) has arrived; it then
// reads to the end and returns whether [DONE] was seen and the read error.
func openStream(client *http.Client, url string, body []byte, ready chan<- struct{}) (done bool, err error) {
	signalled := false
	signal := func() {
		if !signalled {
			signalled = true
			ready <- struct{}{}
		}
	}
	defer signal()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		signal()
	}
	rd := bufio.NewReader(resp.Body)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return done, err
		}
		if strings.Contains(line, `"content":" `) {
			signal()
		}
		if strings.HasPrefix(line, "data: [DONE]") {
			done = true
		}
	}
}

func TestCloseEndsEveryStream(t *testing.T) {
	baseline := runtime.NumGoroutine()
	transport := &http.Transport{}
	client := &http.Client{Transport: transport}

	stalled, url, err := Start(Config{Faults: func(int64) Fault { return FaultStall }}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A second server whose requests are slow or stuck in the queue.
	queued, url2, err := Start(Config{BatchCapacity: 1, TokenInterval: time.Second}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}

	type result struct {
		done bool
		err  error
	}
	results := make(chan result, 13)
	ready := make(chan struct{}, 13)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			d, e := openStream(client, url, chatBody("kovara-sim-8b", int64(i), 10, streamOpts(50, true)), ready)
			results <- result{d, e}
		})
	}
	for range 10 {
		select {
		case <-ready:
		case <-time.After(5 * time.Second):
			t.Fatal("stalled streams never started")
		}
	}
	for i := range 3 {
		wg.Go(func() {
			d, e := openStream(client, url2, chatBody("kovara-sim-8b", int64(i), 10, streamOpts(50, true)), make(chan struct{}, 1))
			results <- result{d, e}
		})
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, w := queued.sched.counts(); w == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("requests never queued")
		}
	}

	start := time.Now()
	if err := stalled.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := queued.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v", took)
	}
	if n := stalled.inflight.Load() + queued.inflight.Load(); n != 0 {
		t.Errorf("%d handlers still running after Close", n)
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.done || r.err == nil {
			t.Errorf("a stream ended cleanly (done=%v err=%v) when the server closed", r.done, r.err)
		}
	}
	stalled.Close() // a second Close is harmless

	transport.CloseIdleConnections()
	var now int
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if now = runtime.NumGoroutine(); now <= baseline+2 {
			return
		}
	}
	buf := make([]byte, 1<<16)
	t.Errorf("goroutines: %d before, %d after Close\n%s", baseline, now, buf[:runtime.Stack(buf, true)])
}

// Close on a simulator mounted in someone else's server aborts its streams
// too.
func TestCloseMounted(t *testing.T) {
	t.Parallel()
	s := New(Config{TokenInterval: time.Second})
	hs := &http.Server{Handler: s}
	ln, url := listen(t)
	go hs.Serve(ln)
	defer hs.Close()
	ready := make(chan struct{}, 1)
	res := make(chan error, 1)
	go func() {
		done, err := openStream(http.DefaultClient, url, chatBody("kovara-sim-8b", 1, 10, streamOpts(50, true)), ready)
		if done {
			err = nil
		}
		res <- err
	}()
	<-ready
	s.Close()
	select {
	case err := <-res:
		if err == nil {
			t.Error("the stream ended cleanly")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the stream did not end")
	}
	// New requests get no answer, as from a killed server.
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(chatBody("kovara-sim-8b", 2, 10, streamOpts(2, true))))
	if err == nil {
		resp.Body.Close()
		t.Errorf("after Close: HTTP %d, want the connection dropped", resp.StatusCode)
	}
}
