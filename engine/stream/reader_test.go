package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type event struct {
	Type string
	Data string
}

func (e event) String() string { return fmt.Sprintf("{%q %q}", e.Type, e.Data) }

// collect drains r and returns its events and final error.
func collect(r *Reader) ([]event, error) {
	var evs []event
	for r.Next() {
		evs = append(evs, event{Type: string(r.EventType()), Data: string(r.Data())})
	}
	return evs, r.Err()
}

func readAll(src io.Reader, maxLine int) ([]event, error) {
	return collect(NewReader(src, nil, maxLine))
}

// splitReader hands out its input in pieces ending at the given offsets.
type splitReader struct {
	data []byte
	cuts []int // ascending offsets where a Read stops
	off  int
}

func (s *splitReader) Read(p []byte) (int, error) {
	if s.off >= len(s.data) {
		return 0, io.EOF
	}
	for len(s.cuts) > 0 && s.cuts[0] <= s.off {
		s.cuts = s.cuts[1:]
	}
	end := len(s.data)
	if len(s.cuts) > 0 {
		end = min(s.cuts[0], end)
	}
	if end-s.off > len(p) {
		end = s.off + len(p)
	}
	n := copy(p, s.data[s.off:end])
	s.off += n
	return n, nil
}

func randomCuts(rng *rand.Rand, n int) []int {
	var cuts []int
	for off := 0; off < n; {
		off += 1 + rng.IntN(7)
		cuts = append(cuts, off)
	}
	return cuts
}

// readerShapes returns the same input behind differently chunked sources.
func readerShapes(input string) map[string]func() io.Reader {
	shapes := map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(input) },
		"one-byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) },
		"half":     func() io.Reader { return iotest.HalfReader(strings.NewReader(input)) },
		"data-err": func() io.Reader { return iotest.DataErrReader(strings.NewReader(input)) },
	}
	for seed := range uint64(4) {
		shapes[fmt.Sprintf("random-%d", seed)] = func() io.Reader {
			rng := rand.New(rand.NewPCG(seed, 99))
			return &splitReader{data: []byte(input), cuts: randomCuts(rng, len(input))}
		}
	}
	return shapes
}

func TestReaderEvents(t *testing.T) {
	t.Parallel()
	chunk1 := `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`
	chunk2 := `{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"length"}]}`
	usage := `{"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1024,"completion_tokens":256,"total_tokens":1280}}`
	errObj := `{"error":{"message":"model overloaded","type":"ServiceUnavailableError","code":503}}`
	tests := []struct {
		name  string
		input string
		want  []event
	}{
		{"empty", "", nil},
		{"lf", "data: " + chunk1 + "\n\ndata: " + chunk2 + "\n\ndata: [DONE]\n\n",
			[]event{{"", chunk1}, {"", chunk2}, {"", "[DONE]"}}},
		{"crlf", "data: " + chunk1 + "\r\n\r\ndata: [DONE]\r\n\r\n",
			[]event{{"", chunk1}, {"", "[DONE]"}}},
		{"lone cr", "data: a\r\rdata: b\r\r", []event{{"", "a"}, {"", "b"}}},
		{"mixed endings", "data: a\r\n\ndata: b\n\r\ndata: c\r\rdata: d\n\n",
			[]event{{"", "a"}, {"", "b"}, {"", "c"}, {"", "d"}}},
		{"no space after colon", "data:x\n\n", []event{{"", "x"}}},
		{"one space stripped", "data: x\n\n", []event{{"", "x"}}},
		{"only one space stripped", "data:  x \n\n", []event{{"", " x "}}},
		{"comments", ": ping\n\n:\ndata: x\n: inside\n\n", []event{{"", "x"}}},
		{"event type", "event: error\ndata: " + errObj + "\n\n", []event{{"error", errObj}}},
		{"event type reset after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n",
			[]event{{"a", "1"}, {"", "2"}}},
		{"event without data is dropped", "event: ping\n\ndata: x\n\n", []event{{"", "x"}}},
		{"multi-line data", "data: a\ndata: b\ndata:\n\n", []event{{"", "a\nb\n"}}},
		{"empty data not dispatched", "data:\n\ndata: x\n\n", []event{{"", "x"}}},
		{"two empty data lines", "data:\ndata:\n\n", []event{{"", "\n"}}},
		{"field without colon", "data\ndata\n\n", []event{{"", "\n"}}},
		{"id retry unknown ignored", "id: 7\nretry: 100\nfoo: bar\ndata: x\n\n", []event{{"", "x"}}},
		{"no blank lines", "data: " + chunk1 + "\ndata: " + chunk2 + "\ndata: " + usage + "\ndata: [DONE]\n",
			[]event{{"", chunk1}, {"", chunk2}, {"", usage}, {"", "[DONE]"}}},
		{"no blank lines crlf", "data: {\"a\":1}\r\ndata: [DONE]\r\n",
			[]event{{"", `{"a":1}`}, {"", "[DONE]"}}},
		{"no blank lines padded", "data:  {\"a\":1}  \ndata: x\n\n",
			[]event{{"", ` {"a":1}  `}, {"", "x"}}},
		{"no blank lines split json", "data: {\"a\":\ndata: 1}\n\n", []event{{"", "{\"a\":\n1}"}}},
		{"no blank lines after done", "data: [DONE]\ndata: {}\n", []event{{"", "[DONE]"}, {"", "{}"}}},
		{"no blank lines with event lines", "event: a\ndata: {}\nevent: b\ndata: {}\n",
			[]event{{"a", "{}"}, {"b", "{}"}}},
		{"usage only final chunk", "data: " + chunk2 + "\n\ndata: " + usage + "\n\ndata: [DONE]\n\n",
			[]event{{"", chunk2}, {"", usage}, {"", "[DONE]"}}},
		{"error payload", "data: " + errObj + "\n\n", []event{{"", errObj}}},
		// llama.cpp b4748's failure inside a stream (engine/testdata/llamacpp-b4748/context-stream.sse).
		{"error field", "error: " + errObj + "\n\ndata: [DONE]\n\n", []event{{"error", errObj}, {"", "[DONE]"}}},
		{"trailing data without newline", "data: " + chunk1 + "\n\ndata: [DONE]",
			[]event{{"", chunk1}, {"", "[DONE]"}}},
		{"trailing data without blank line", "data: a\ndata: b\n", []event{{"", "a\nb"}}},
		{"only comments", ": one\n: two\n", nil},
		{"bom", "\xEF\xBB\xBFdata: x\n\n", []event{{"", "x"}}},
		{"bom only at start", "data: x\n\n\xEF\xBB\xBFdata: y\n\n", []event{{"", "x"}}},
		{"partial bom", "\xEF\xBBdata: x\n\n", nil},
		{"blank lines only", "\n\n\r\n\r\r", nil},
	}
	for _, tt := range tests {
		for shape, src := range readerShapes(tt.input) {
			t.Run(tt.name+"/"+shape, func(t *testing.T) {
				t.Parallel()
				got, err := readAll(src(), 0)
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("events = %v, want %v", got, tt.want)
				}
			})
		}
	}
}

// TestReaderEverySplit cuts a stream into two reads at every offset (and
// three reads around every CR) and expects the same events each time.
func TestReaderEverySplit(t *testing.T) {
	t.Parallel()
	input := "\xEF\xBB\xBF: hi\r\nevent: x\r\ndata: {\"a\":1}\r\n\r\ndata: b\rdata: c\r\rdata: {}\ndata: [DONE]\n\ndata: tail"
	want, err := readAll(strings.NewReader(input), 0)
	if err != nil {
		t.Fatalf("Err() = %v", err)
	}
	for a := 0; a <= len(input); a++ {
		for b := a; b <= len(input); b++ {
			src := &splitReader{data: []byte(input), cuts: []int{a, b}}
			got, err := readAll(src, 0)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("cuts %d,%d: events = %v, %v; want %v, nil", a, b, got, err, want)
			}
		}
	}
}

// scriptedReader returns one scripted piece per Read (an empty piece is a
// (0, nil) read) and counts the reads that returned bytes.
type scriptedReader struct {
	pieces []string
	reads  int
}

func (s *scriptedReader) Read(p []byte) (int, error) {
	if len(s.pieces) == 0 {
		return 0, io.EOF
	}
	piece := s.pieces[0]
	s.pieces = s.pieces[1:]
	if len(piece) > len(p) {
		panic("scripted piece larger than the read buffer")
	}
	if piece != "" {
		s.reads++
	}
	return copy(p, piece), nil
}

func TestReaderAt(t *testing.T) {
	t.Parallel()
	src := &scriptedReader{pieces: []string{
		"data: {\"a\":1}\n",          // 1: completes line of event 1
		"\n",                         // 2: blank line arrives later
		"data: {\"b\":",              // 3
		"",                           // (0, nil): no clock call
		"2}\r",                       // 4: CR completes the line
		"\n\n",                       // 5: LF of the CRLF, then the blank line
		"data: [DO",                  // 6
		"NE]\n\ndata: {\"c\":3}\n\n", // 7: two events in one read
		": keep-alive\n",             // 8
		"data: {\"d\"",               // 9
		":4}",                        // 10: completes the unterminated last line
	}}
	clockCalls := 0
	clock := func() time.Duration {
		clockCalls++
		return time.Duration(src.reads)
	}
	r := NewReader(src, clock, 0)
	type stamped struct {
		data string
		at   time.Duration
	}
	var got []stamped
	for r.Next() {
		got = append(got, stamped{string(r.Data()), r.At()})
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err() = %v", err)
	}
	want := []stamped{{`{"a":1}`, 1}, {`{"b":2}`, 4}, {"[DONE]", 7}, {`{"c":3}`, 7}, {`{"d":4}`, 10}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stamps = %v, want %v", got, want)
	}
	if clockCalls != src.reads {
		t.Errorf("clock called %d times, want once per read with bytes (%d)", clockCalls, src.reads)
	}
}

// TestReaderAtOneByte feeds a stream one byte per Read and checks that each
// event is stamped with the read that delivered its last data line's end.
func TestReaderAtOneByte(t *testing.T) {
	t.Parallel()
	input := "data: {\"a\":1}\n\ndata: x\r\n\r\ndata: [DONE]"
	var pieces []string
	for i := range len(input) {
		pieces = append(pieces, input[i:i+1])
	}
	src := &scriptedReader{pieces: pieces}
	r := NewReader(src, func() time.Duration { return time.Duration(src.reads) }, 0)
	var got []time.Duration
	for r.Next() {
		got = append(got, r.At())
	}
	// Reads are 1-based byte positions: the LF after {"a":1}, the CR after
	// x, and the last byte of [DONE].
	want := []time.Duration{
		time.Duration(strings.Index(input, "}\n") + 2),
		time.Duration(strings.Index(input, "x\r") + 2),
		time.Duration(len(input)),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("At() values = %v, want %v", got, want)
	}
}

func TestReaderLineLimit(t *testing.T) {
	t.Parallel()
	const limit = 10
	line := func(n int) string { return "data: " + strings.Repeat("x", n-len("data: ")) }
	tests := []struct {
		name    string
		input   string
		want    []event
		wantErr error
	}{
		{"at limit lf", line(limit) + "\n\n", []event{{"", "xxxx"}}, nil},
		{"at limit crlf", line(limit) + "\r\n\r\n", []event{{"", "xxxx"}}, nil},
		{"at limit cr", line(limit) + "\r\r", []event{{"", "xxxx"}}, nil},
		{"at limit eof", line(limit), []event{{"", "xxxx"}}, nil},
		{"over limit lf", line(limit+1) + "\n\n", nil, ErrLineTooLong},
		{"over limit crlf", line(limit+1) + "\r\n\r\n", nil, ErrLineTooLong},
		{"over limit eof", line(limit + 1), nil, ErrLineTooLong},
		{"comment over limit", ": " + strings.Repeat("c", limit) + "\n", nil, ErrLineTooLong},
		{"complete event then long line", "data: {}\n" + line(limit+5) + "\n", []event{{"", "{}"}}, ErrLineTooLong},
		{"incomplete event then long line", "data: {\n" + line(limit+5) + "\n", nil, ErrLineTooLong},
		{"joined data at limit", "data:1234\ndata:12345\n\n", []event{{"", "1234\n12345"}}, nil},
		{"joined data over limit", "data:12345\ndata:12345\n\n", nil, ErrLineTooLong},
	}
	for _, tt := range tests {
		for shape, src := range readerShapes(tt.input) {
			t.Run(tt.name+"/"+shape, func(t *testing.T) {
				t.Parallel()
				r := NewReader(src(), nil, limit)
				got, err := collect(r)
				if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
					t.Errorf("Err() = %v, want %v", err, tt.wantErr)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("events = %v, want %v", got, tt.want)
				}
				if len(r.buf) > limit+1 {
					t.Errorf("buffer grew to %d bytes, limit %d", len(r.buf), limit)
				}
			})
		}
	}
}

// chunkedReader serves data in reads of at most size bytes, like a socket.
type chunkedReader struct {
	data []byte
	size int
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.size, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func TestReaderSixteenMiBLine(t *testing.T) {
	t.Parallel()
	payload := bytes.Repeat([]byte("y"), DefaultMaxLine-len("data: "))
	input := append(append([]byte("data: "), payload...), "\n\ndata: [DONE]\n\n"...)
	r := NewReader(&chunkedReader{data: input, size: 64 << 10}, nil, 0)
	if !r.Next() {
		t.Fatalf("Next() = false, Err() = %v", r.Err())
	}
	if !bytes.Equal(r.Data(), payload) {
		t.Fatalf("data: got %d bytes, want %d", len(r.Data()), len(payload))
	}
	if !r.Next() || string(r.Data()) != "[DONE]" {
		t.Fatalf("second event = %q, Err() = %v; want [DONE]", r.Data(), r.Err())
	}
	if r.Next() || r.Err() != nil {
		t.Fatalf("after [DONE]: Next() = true or Err() = %v", r.Err())
	}
}

func TestReaderSeventeenMiBLine(t *testing.T) {
	t.Parallel()
	input := append([]byte("data: "), bytes.Repeat([]byte("z"), 17<<20)...)
	input = append(input, "\n\n"...)
	r := NewReader(&chunkedReader{data: input, size: 64 << 10}, nil, 0)
	if r.Next() {
		t.Fatalf("Next() = true with a %d-byte line", len(input)-2)
	}
	if err := r.Err(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Err() = %v, want ErrLineTooLong", err)
	}
}

// endlessLine produces "data: " followed by n bytes of 'x' and a newline,
// generated on the fly so the line is never held in memory.
type endlessLine struct {
	n    int64
	sent int64
}

func (e *endlessLine) Read(p []byte) (int, error) {
	total := e.n + int64(len("data: \n"))
	if e.sent >= total {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && e.sent < total {
		switch {
		case e.sent < 6:
			p[k] = "data: "[e.sent]
		case e.sent == total-1:
			p[k] = '\n'
		default:
			p[k] = 'x'
		}
		k++
		e.sent++
	}
	return k, nil
}

// Not parallel: it measures the whole process's allocations.
func TestReaderHugeLineBoundedMemory(t *testing.T) {
	src := &endlessLine{n: 200 << 20}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := NewReader(src, nil, 0)
	got := r.Next()
	runtime.ReadMemStats(&after)
	if got {
		t.Fatal("Next() = true for a 200 MiB line")
	}
	if err := r.Err(); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Err() = %v, want ErrLineTooLong", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB, read %.1f MiB of the line", float64(alloc)/(1<<20), float64(src.sent)/(1<<20))
	if alloc > 40<<20 {
		t.Errorf("allocated %d MiB reading a 200 MiB line, want < 40 MiB", alloc>>20)
	}
	if src.sent > DefaultMaxLine+initialBuf {
		t.Errorf("read %d bytes of the line, want it abandoned near %d", src.sent, DefaultMaxLine)
	}
}

type failingReader struct {
	data string
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset by peer")
	tests := []struct {
		name    string
		src     io.Reader
		want    []event
		wantErr error
	}{
		{"error after whole event", &failingReader{"data: {\"a\":1}\n\n", boom}, []event{{"", `{"a":1}`}}, boom},
		{"error after complete data line", &failingReader{"data: {\"a\":1}\n", boom}, []event{{"", `{"a":1}`}}, boom},
		{"error after done line", &failingReader{"data: [DONE]\n", boom}, []event{{"", "[DONE]"}}, boom},
		{"error mid line", &failingReader{"data: {\"a\":1}", boom}, nil, boom},
		{"error mid json", &failingReader{"data: {\"a\":\n", boom}, nil, boom},
		{"unexpected eof", &failingReader{"data: x\n\ndata: y", io.ErrUnexpectedEOF}, []event{{"", "x"}}, io.ErrUnexpectedEOF},
		{"no progress", zeroReader{}, nil, io.ErrNoProgress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewReader(tt.src, nil, 0)
			got, err := collect(r)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Err() = %v, want %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("events = %v, want %v", got, tt.want)
			}
			if r.Next() {
				t.Error("Next() = true after the end")
			}
		})
	}
}

func TestReaderReset(t *testing.T) {
	t.Parallel()
	r := NewReader(strings.NewReader("data: {\"a\":1}\r"), nil, 0)
	if got, err := collect(r); err != nil || len(got) != 1 {
		t.Fatalf("first stream: %v, %v", got, err)
	}
	// The first stream ended on a lone CR; the next one starts clean.
	r.Reset(strings.NewReader("\ndata: b\n\n"))
	got, err := collect(r)
	if want := []event{{"", "b"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after Reset: %v, %v; want %v, nil", got, err, want)
	}

	// A stream that grew the buffer and failed, then a normal one.
	r = NewReader(&endlessLine{n: 4 << 20}, nil, 2<<20)
	if _, err := collect(r); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Err() = %v, want ErrLineTooLong", err)
	}
	r.Reset(strings.NewReader("event: e\ndata: z\n\n"))
	got, err = collect(r)
	if want := []event{{"e", "z"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("after Reset: %v, %v; want %v, nil", got, err, want)
	}
	if len(r.buf) > keepOnReset {
		t.Errorf("buffer kept at %d bytes after Reset", len(r.buf))
	}
}

// TestReaderManyDataLines guards against work that grows with the square of
// an event's size: checking whether pending data is a whole message must not
// rescan it for every line (here 700k empty data lines, one event).
// TestReaderManyDataLines: 700,000 "data" lines with nothing after the
// field name make one event of 699,999 newlines, and the reader gets there
// by growing its buffers, not by a copy or an allocation per line (a
// quadratic reader would need one per line).
func TestReaderManyDataLines(t *testing.T) {
	input := bytes.Repeat([]byte("data\n"), 700_000)
	r := NewReader(bytes.NewReader(input), nil, 0)
	got, err := collect(r)
	if err != nil || len(got) != 1 || len(got[0].Data) != 700_000-1 {
		t.Fatalf("got %d events, Err() = %v; want one event of %d newlines", len(got), err, 700_000-1)
	}
	allocs := testing.AllocsPerRun(1, func() {
		r := NewReader(bytes.NewReader(input), nil, 0)
		for r.Next() {
		}
	})
	if allocs > 100 {
		t.Errorf("%.0f allocations for 700,000 lines; want the buffers grown, not a piece per line", allocs)
	}
}
