package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkConcurrentStreams runs `streams` concurrent 100-token streams at
// 20 ms per token (client in the same process) and reports how far the
// server's real chunk gaps stray from 20 ms, and the CPU (client and server
// together) per chunk. Run: go test -run x -bench ConcurrentStreams ./engine/sim/
func BenchmarkConcurrentStreams(b *testing.B) {
	for _, streams := range []int{256, 1024} {
		b.Run(fmt.Sprint(streams), func(b *testing.B) {
			for range b.N {
				benchStreams(b, streams, 100)
			}
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchStreams(b *testing.B, streams, tokens int) {
	s, url, err := Start(Config{RecordTruth: true, BatchCapacity: streams}, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: streams}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	cpu0, wall0 := cpuTime(), time.Now()
	var wg sync.WaitGroup
	for i := range streams {
		wg.Go(func() {
			body := chatBody("kovara-sim-8b", int64(i), 50, streamOpts(tokens, true))
			resp, err := client.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			rd := bufio.NewReader(resp.Body)
			for {
				if _, err := rd.ReadSlice('\n'); err != nil {
					if err != io.EOF {
						b.Error(err)
					}
					return
				}
			}
		})
	}
	wg.Wait()
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	var gaps []time.Duration
	var worstSpan time.Duration
	for _, t := range s.Truths() {
		gaps = append(gaps, t.ITL()...)
		if len(t.Chunks) == tokens {
			worstSpan = max(worstSpan, t.Chunks[tokens-1].Sub(t.Chunks[0]))
		}
	}
	slices.Sort(gaps)
	q := func(p float64) float64 { return ms(gaps[int(p*float64(len(gaps)-1))]) }
	chunks := float64(streams * tokens)
	b.ReportMetric(q(0.01), "gap-p1-ms")
	b.ReportMetric(q(0.5), "gap-p50-ms")
	b.ReportMetric(q(0.99), "gap-p99-ms")
	b.ReportMetric(ms(worstSpan)-float64(tokens-1)*20, "worst-drift-ms")
	b.ReportMetric(float64(cpu.Microseconds())/chunks, "cpu-us/chunk")
	b.ReportMetric(float64(cpu)/float64(wall), "cores")
}

// BenchmarkEncodeChunk measures building one token's SSE line; it must not
// allocate.
func BenchmarkEncodeChunk(b *testing.B) {
	for _, p := range []Personality{VLLM, LlamaCpp, Ollama, Strict} {
		b.Run(string(p), func(b *testing.B) {
			e := newEncoder(p, "chatcmpl-0123456789abcdef0123456789abcdef", "kovara-sim-8b", 1700000000, "b6000-5eed5ee", true)
			line := make([]byte, 0, 1024)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				line = e.chunk(line[:0], deltaText, vocabulary[i%len(vocabulary)], "", nil)
			}
			b.SetBytes(int64(len(line)))
		})
	}
}

func TestEncodeChunkDoesNotAllocate(t *testing.T) {
	e := newEncoder(VLLM, "chatcmpl-x", "m", 1, "fp", true)
	line := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() { line = e.chunk(line[:0], deltaText, vocabulary[1], "", nil) }); n != 0 {
		t.Errorf("%v allocations per chunk", n)
	}
}
