package stream

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/valyala/fastjson"
)

type namedDecoder struct {
	name string
	new  func() func([]byte, *Chunk) error // a decoder for one goroutine
	// maxDepth: the deepest nesting it decodes. fastjson's parser stops
	// at 300 levels where encoding/json and the scanner go to 10,000.
	maxDepth int
}

// decoders are the chunk decoders the table tests, FuzzDecode and the
// benchmarks run: the scanner and the fastjson one measured against it
// (docs/performance.md).
var decoders = []namedDecoder{
	{"scanner", func() func([]byte, *Chunk) error { return Decode }, maxDepth},
	{"fastjson", func() func([]byte, *Chunk) error { return (&FastJSONDecoder{Strict: true}).Decode }, fastjson.MaxDepth},
}

// benchDecoders adds fastjson's parser without the grammar check: what
// the library costs at the least, though it accepts what Decode rejects.
var benchDecoders = append(decoders[:len(decoders):len(decoders)], namedDecoder{
	"fastjson-noverify", func() func([]byte, *Chunk) error { return (&FastJSONDecoder{}).Decode }, fastjson.MaxDepth})

// fuzzCorpus reads the inputs kept for a fuzz target of one []byte.
func fuzzCorpus(t *testing.T, target string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", target, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus for %s: %v", target, err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
		if len(lines) != 2 || string(lines[0]) != "go test fuzz v1" {
			t.Fatalf("%s: not a one-value corpus file", f)
		}
		lit := bytes.TrimSuffix(bytes.TrimPrefix(lines[1], []byte("[]byte(")), []byte(")"))
		s, err := strconv.Unquote(string(lit))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out["corpus/"+filepath.Base(f)] = []byte(s)
	}
	return out
}

// capturedChunks reads every data event of the real llama.cpp streams kept
// in engine/testdata, through the package's own reader.
func capturedChunks(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "llamacpp-b9749", "*.sse"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured streams: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(fh, nil, 0)
		for i := 0; r.Next(); i++ {
			if bytes.Equal(r.Data(), doneMsg) {
				continue
			}
			out[filepath.Base(f)+"#"+strconv.Itoa(i)] = bytes.Clone(r.Data())
		}
		fh.Close()
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return out
}

func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrBadCount):
		return "bad count"
	case errors.Is(err, ErrMalformedChunk):
		return "malformed"
	}
	return "other: " + err.Error()
}

// TestDecodersAgree: the scanner and the fastjson decoder give the same
// chunk and the same kind of error on every kept fuzz input and every chunk
// of the real llama.cpp captures.
func TestDecodersAgree(t *testing.T) {
	t.Parallel()
	inputs := fuzzCorpus(t, "FuzzDecode")
	captured := capturedChunks(t)
	var timings, cacheN, drafts int
	for name, in := range captured {
		inputs[name] = in
		var c Chunk
		if err := Decode(in, &c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.HasTimings {
			timings++
		}
		if c.HasCacheN {
			cacheN++
		}
		if c.HasDraft {
			drafts++
		}
	}
	// The captures must hold what the decoders are compared on.
	if len(captured) < 50 || timings == 0 || cacheN == 0 || drafts == 0 {
		t.Fatalf("captures: %d chunks, %d with timings, %d with cache_n, %d with drafts", len(captured), timings, cacheN, drafts)
	}
	decs := make([]func([]byte, *Chunk) error, len(decoders))
	for i, d := range decoders {
		decs[i] = d.new()
	}
	for name, in := range inputs {
		var want Chunk
		wantErr := decs[0](in, &want)
		for i, dec := range decs[1:] {
			var got Chunk
			gotErr := dec(in, &got)
			if got != want || errClass(gotErr) != errClass(wantErr) {
				t.Errorf("%s: %s gives %+v (%s: %v), %s gives %+v (%s: %v)", name,
					decoders[i+1].name, got, errClass(gotErr), gotErr, decoders[0].name, want, errClass(wantErr), wantErr)
			}
		}
	}
}

// TestFastJSONValidateMissesControlCharacter pins what FuzzDecode found in
// fastjson.Validate (v1.6.10): a raw control character in a string passes
// when an escape follows it in the same string, so the fastjson decoder
// accepts a chunk that encoding/json and the scanner reject.
func TestFastJSONValidateMissesControlCharacter(t *testing.T) {
	t.Parallel()
	in := []byte("{\"a\":\"\x00\\n\"}")
	var c Chunk
	if err := Decode(in, &c); !errors.Is(err, ErrMalformedChunk) {
		t.Errorf("scanner: error = %v, want ErrMalformedChunk", err)
	}
	if err := (&FastJSONDecoder{Strict: true}).Decode(in, &c); err != nil {
		t.Errorf("fastjson: error = %v, want none (the library's gap this test records)", err)
	}
}
