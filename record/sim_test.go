package record

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/sim/simtest"
)

// The simulator as llama-server: it closes the connection after every
// streamed answer while it says Keep-Alive (as b4748 does). A chat
// client's turns, each sent as the last one ends, all go through; each
// is recorded with the simulator's token counts.
func TestTurnsThroughAServerThatClosesAfterEachStream(t *testing.T) {
	t.Parallel()
	cfg := simtest.Fast()
	cfg.Personality, cfg.Models = sim.LlamaCpp, []string{"m"}
	url := simtest.Start(t, cfg)
	px, _, path := proxyTo(t, url)
	const turns = 12
	for i := range turns {
		resp, err := http.Post(px.URL+"/v1/chat/completions", "application/json", bytes.NewReader(chat(t, "s", "hello", "a", "again")))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: %s", i+1, resp.Status)
		}
	}
	px.Close()
	reqs := readTrace(t, path)
	if len(reqs) != turns {
		t.Fatalf("%d lines, want %d", len(reqs), turns)
	}
	for i, q := range reqs {
		if q.Error != "" || q.OutputLength < 1 || q.OutputLength > 8 || q.InputLength == 0 {
			t.Errorf("turn %d: %+v", i+1, q)
		}
	}
}

// closesOnSecond is a server that answers the first request on each
// connection and closes the connection when a second one comes on it,
// unanswered: what the proxy met from the real llama-server b4748 between
// two turns of a chat (its request written, then EOF).
func closesOnSecond(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n"
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				if req2, err := http.ReadRequest(br); err == nil {
					io.Copy(io.Discard, req2.Body)
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

func TestSendsAgainWhereTheServerClosedUnderIt(t *testing.T) {
	t.Parallel()
	px, _, path := proxyTo(t, closesOnSecond(t))
	for i := range 6 {
		resp, err := http.Post(px.URL+"/v1/chat/completions", "application/json", bytes.NewReader(chat(t, "s", "hello")))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("turn %d: %s", i+1, resp.Status)
		}
	}
	px.Close()
	for i, q := range readTrace(t, path) {
		if q.Error != "" || q.InputLength != 3 {
			t.Errorf("turn %d: %+v", i+1, q)
		}
	}
}
