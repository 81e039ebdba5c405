package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// fuzzRead drains src through r (reset onto it) and returns the events and
// whether reading stopped on ErrLineTooLong; any other error fails the test.
func fuzzRead(t *testing.T, r *Reader, src io.Reader) ([]event, bool) {
	t.Helper()
	r.Reset(src)
	evs, err := collect(r)
	switch {
	case err == nil:
		return evs, false
	case errors.Is(err, ErrLineTooLong):
		return evs, true
	}
	t.Fatalf("unexpected Err() = %v", err)
	return nil, false
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data:x\r\n\r\nevent: error\r\ndata: {\"error\":\"e\"}\r\n\r\n"))
	f.Add([]byte("data: {}\ndata: {}\rdata: [DONE]"))
	f.Add([]byte(": ping\n\ndata: a\ndata: b\n\n\xEF\xBB\xBF"))
	// One reader per limit, reused through Reset as the engine does; this
	// also keeps each run cheap, which matters while inputs are minimised.
	limits := []int{64, 0}
	readers := []*Reader{NewReader(nil, nil, limits[0]), NewReader(nil, nil, limits[1])}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + bytes.Count(data, []byte{'\r'}) + 1
		for k, maxLine := range limits {
			r := readers[k]
			limit := maxLine
			if limit == 0 {
				limit = DefaultMaxLine
			}
			want, wantLong := fuzzRead(t, r, bytes.NewReader(data))
			if len(want) > lines {
				t.Fatalf("maxLine %d: %d events from %d lines", maxLine, len(want), lines)
			}
			for _, e := range want {
				if len(e.Data) == 0 || len(e.Data) > limit {
					t.Fatalf("maxLine %d: event data of %d bytes", maxLine, len(e.Data))
				}
			}
			if len(r.buf) > max(initialBuf, limit+1) {
				t.Fatalf("maxLine %d: buffer grew to %d bytes", maxLine, len(r.buf))
			}
			rng := rand.New(rand.NewPCG(uint64(len(data)), 1))
			shapes := []struct {
				name string
				src  io.Reader
			}{
				{"one-byte", iotest.OneByteReader(bytes.NewReader(data))},
				{"random", &splitReader{data: data, cuts: randomCuts(rng, len(data))}},
			}
			for _, sh := range shapes {
				got, gotLong := fuzzRead(t, r, sh.src)
				if gotLong != wantLong || !reflect.DeepEqual(got, want) {
					t.Fatalf("maxLine %d, %s reads: events %v (too long %v), want %v (too long %v)",
						maxLine, sh.name, got, gotLong, want, wantLong)
				}
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`))
	f.Add([]byte(`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":256,"total_tokens":266}}`))
	f.Add([]byte(`{"choices":[{"delta":{"reasoning_content":"\u00e9\n"}}],"timings":{"predicted_n":3,"prompt_n":1.0e1}}`))
	f.Add([]byte(`{"error":{"message":"boom","code":500}}`))
	f.Add([]byte(`{"object":"error","message":"m","error":null}`))
	f.Add([]byte(`[{"a":1}]`))
	f.Add([]byte(`{"a":"\ud800\udc00","b":[1,-0.5e+3,true,false,null,{}]}`))
	// Every chunk a real llama.cpp sent (engine/testdata), final chunks
	// with usage, cached_tokens, cache_n and draft counts among them.
	for _, chunk := range capturedChunks(f) {
		f.Add(chunk)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Chunk
		err := Decode(data, &c)
		if !json.Valid(data) {
			if err == nil {
				t.Fatalf("Decode accepted invalid JSON: %+v", c)
			}
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if derr := dec.Decode(&v); derr != nil {
			t.Fatalf("json.Valid but encoding/json fails: %v", derr)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			if err == nil {
				t.Fatalf("Decode accepted a non-object top-level value %T", v)
			}
			return
		}
		if err != nil {
			if !errors.Is(err, ErrBadCount) {
				t.Fatalf("Decode rejected a valid object: %v", err)
			}
			return
		}
		if want := expectedChunk(obj); c != want {
			t.Fatalf("Decode() = %+v\nencoding/json says %+v", c, want)
		}
	})
}

// capturedChunks returns the data of every event, but [DONE], of the
// streams a real llama.cpp b9749 sent (../testdata/llamacpp-b9749/*.sse),
// read with the package's own Reader. It fails when no chunk carries
// usage, cached_tokens, cache_n or draft_n, the counts they are kept for.
func capturedChunks(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "llamacpp-b9749", "*.sse"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no captured llama.cpp streams: %v", err)
	}
	var chunks [][]byte
	var seen Chunk // which counts some chunk carried
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		r := NewReader(bytes.NewReader(data), nil, 0)
		for r.Next() {
			if bytes.Equal(r.Data(), doneMsg) {
				continue
			}
			chunks = append(chunks, bytes.Clone(r.Data()))
			var c Chunk
			if err := Decode(r.Data(), &c); err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			seen.HasUsage, seen.HasCached = seen.HasUsage || c.HasUsage, seen.HasCached || c.HasCached
			seen.HasCacheN, seen.HasDraft = seen.HasCacheN || c.HasCacheN, seen.HasDraft || c.HasDraft
		}
		if err := r.Err(); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	if !seen.HasUsage || !seen.HasCached || !seen.HasCacheN || !seen.HasDraft {
		tb.Fatalf("no captured chunk carries usage, cached_tokens, cache_n or draft_n: %+v", seen)
	}
	return chunks
}

// expectedChunk derives the Chunk fields from a generic encoding/json
// decode, following Chunk's documented rules independently of the scanner.
func expectedChunk(obj map[string]any) Chunk {
	var c Chunk
	nonEmpty := func(v any) bool { s, ok := v.(string); return ok && s != "" }
	if choices, ok := obj["choices"].([]any); ok {
		for _, el := range choices {
			ch, ok := el.(map[string]any)
			if !ok {
				continue
			}
			if delta, ok := ch["delta"].(map[string]any); ok {
				c.Content = c.Content || nonEmpty(delta["content"])
				c.Reasoning = c.Reasoning || nonEmpty(delta["reasoning_content"]) || nonEmpty(delta["reasoning"])
			}
			c.Content = c.Content || nonEmpty(ch["text"])
			if fr, ok := ch["finish_reason"]; ok && fr != nil && fr != "" {
				c.FinishReason = true
			}
			c.FinishLength = c.FinishLength || ch["finish_reason"] == "length"
		}
	}
	if usage, ok := obj["usage"].(map[string]any); ok {
		c.PromptTokens, _ = expectedCount(usage["prompt_tokens"])
		c.CompletionTokens, c.HasUsage = expectedCount(usage["completion_tokens"])
		if details, ok := usage["prompt_tokens_details"].(map[string]any); ok {
			c.CachedTokens, c.HasCached = expectedCount(details["cached_tokens"])
		}
	}
	if timings, ok := obj["timings"].(map[string]any); ok {
		c.HasTimings = true
		c.TimingsPredictedN, _ = expectedCount(timings["predicted_n"])
		c.TimingsPromptN, _ = expectedCount(timings["prompt_n"])
		c.TimingsCacheN, c.HasCacheN = expectedCount(timings["cache_n"])
		c.TimingsDraftN, c.HasDraft = expectedCount(timings["draft_n"])
		c.TimingsDraftAccepted, _ = expectedCount(timings["draft_n_accepted"])
	}
	errVal, errKey := obj["error"]
	errKey = errKey && errVal != nil && errVal != false
	objectIsError := obj["object"] == "error"
	c.Error = errKey || objectIsError
	switch {
	case errKey:
		switch e := errVal.(type) {
		case string:
			c.ErrorMessage = truncateMessage(e)
		case map[string]any:
			if m, ok := e["message"].(string); ok {
				c.ErrorMessage = truncateMessage(m)
			}
		}
	case objectIsError:
		if m, ok := obj["message"].(string); ok {
			c.ErrorMessage = truncateMessage(m)
		}
	}
	return c
}

// expectedCount reads a count that Decode accepted (so it is a whole,
// non-negative number or null).
func expectedCount(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return int(i), true
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return int(math.Abs(f)), true
}

func truncateMessage(m string) string {
	for len(m) > maxErrorMessage {
		_, size := utf8.DecodeLastRuneInString(m)
		m = m[:len(m)-size]
	}
	return m
}

// TestDecodeDepthMatchesEncodingJSON pins the nesting limit to the one
// encoding/json enforces, so FuzzDecode's cross-check holds at the edge.
func TestDecodeDepthMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{maxDepth - 2, maxDepth - 1, maxDepth, maxDepth + 1} {
		in := []byte(`{"x":` + string(bytes.Repeat([]byte("["), depth)) + string(bytes.Repeat([]byte("]"), depth)) + `}`)
		var c Chunk
		err := Decode(in, &c)
		if valid := json.Valid(in); valid != (err == nil) {
			t.Errorf("object holding %d nested arrays: json.Valid = %v, Decode error = %v", depth, valid, err)
		}
	}
}
