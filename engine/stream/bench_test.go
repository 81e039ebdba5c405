package stream

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"
)

// vllmStream builds a response shaped like vLLM's for a 256-token answer
// with include_usage: a role chunk carrying empty content, 256 content
// chunks (the last with finish_reason), a usage-only chunk and [DONE].
// It returns the bytes and the offsets where each event ends, so a reader
// can hand them out one event per Read as a socket would.
func vllmStream(tokens int) (stream []byte, eventEnds []int) {
	words := []string{" the", " of", " and", " to", "\\n", " \\\"quoted\\\"", " caf\\u00e9", " model", ",", " benchmark"}
	var b bytes.Buffer
	add := func(payload string) {
		fmt.Fprintf(&b, "data: %s\n\n", payload)
		eventEnds = append(eventEnds, b.Len())
	}
	const head = `{"id":"chatcmpl-5d8e1c2b9a7f4e3d","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":`
	add(head + `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`)
	for i := range tokens {
		finish := "null"
		if i == tokens-1 {
			finish = `"length","stop_reason":null`
		}
		add(head + `{"content":"` + words[i%len(words)] + `"},"logprobs":null,"finish_reason":` + finish + `}]}`)
	}
	add(`{"id":"chatcmpl-5d8e1c2b9a7f4e3d","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256}}`)
	add("[DONE]")
	return b.Bytes(), eventEnds
}

// eventReader serves a stream one event per Read and can be reset without
// allocating.
type eventReader struct {
	data []byte
	ends []int
	off  int
	next int
}

func (e *eventReader) Read(p []byte) (int, error) {
	if e.off >= len(e.data) {
		return 0, io.EOF
	}
	end := e.ends[e.next]
	n := copy(p, e.data[e.off:end])
	e.off += n
	if e.off == end {
		e.next++
	}
	return n, nil
}

func (e *eventReader) reset() { e.off, e.next = 0, 0 }

// consume reads a whole stream through r, decoding every chunk, and returns
// the number of events.
func consume(tb testing.TB, r *Reader, c *Chunk) int {
	n := 0
	for r.Next() {
		n++
		if bytes.Equal(r.Data(), doneMsg) {
			continue
		}
		if err := Decode(r.Data(), c); err != nil {
			tb.Fatalf("Decode: %v", err)
		}
	}
	if err := r.Err(); err != nil {
		tb.Fatalf("Err(): %v", err)
	}
	return n
}

func TestReaderDecodeAllocs(t *testing.T) {
	stream, ends := vllmStream(256)
	src := &eventReader{data: stream, ends: ends}
	start := time.Now()
	r := NewReader(src, func() time.Duration { return time.Since(start) }, 0)
	var c Chunk
	allocs := testing.AllocsPerRun(20, func() {
		src.reset()
		r.Reset(src)
		if n := consume(t, r, &c); n != len(ends) {
			t.Fatalf("got %d events, want %d", n, len(ends))
		}
	})
	if allocs != 0 {
		t.Errorf("a %d-event stream allocates %v times, want 0", len(ends), allocs)
	}
	if !c.HasUsage || c.CompletionTokens != 256 {
		t.Errorf("last chunk = %+v, want usage with 256 completion tokens", c)
	}
}

// BenchmarkReaderDecode reads and decodes a 256-token vLLM stream, the work
// the engine does per request, and reports it per chunk (an event: the 256
// content chunks, the role chunk, usage and [DONE]). ns/chunk is also CPU
// milliseconds per million chunks.
func BenchmarkReaderDecode(b *testing.B) {
	stream, ends := vllmStream(256)
	for _, shape := range []string{"socket", "bulk"} {
		b.Run(shape, func(b *testing.B) {
			src := &eventReader{data: stream, ends: ends}
			if shape == "bulk" {
				src.ends = []int{len(stream)}
			}
			start := time.Now()
			r := NewReader(src, func() time.Duration { return time.Since(start) }, 0)
			var c Chunk
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			events := 0
			for range b.N {
				src.reset()
				r.Reset(src)
				events += consume(b, r, &c)
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/chunk")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(events), "allocs/chunk")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	stream, ends := vllmStream(256)
	content := bytes.TrimSuffix(bytes.TrimPrefix(stream[ends[1]:ends[2]], []byte("data: ")), []byte("\n\n"))
	usage := bytes.TrimSuffix(bytes.TrimPrefix(stream[ends[len(ends)-3]:ends[len(ends)-2]], []byte("data: ")), []byte("\n\n"))
	chunks := map[string][]byte{
		"vllm-content":     content,
		"vllm-usage":       usage,
		"llamacpp-timings": []byte(`{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1718000000,"id":"chatcmpl-Ab","model":"gpt-3.5-turbo","system_fingerprint":"b5900-abcdef","object":"chat.completion.chunk","usage":{"completion_tokens":256,"prompt_tokens":1030,"total_tokens":1286},"timings":{"prompt_n":1030,"prompt_ms":412.5,"prompt_per_token_ms":0.4,"prompt_per_second":2496.9,"predicted_n":256,"predicted_ms":2980.1,"predicted_per_token_ms":11.64,"predicted_per_second":85.9}}`),
	}
	for _, name := range []string{"vllm-content", "vllm-usage", "llamacpp-timings"} {
		data := chunks[name]
		b.Run(name, func(b *testing.B) {
			var c Chunk
			if err := Decode(data, &c); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Decode(data, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
