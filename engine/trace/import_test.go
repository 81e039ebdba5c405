package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// lines are a testdata file's non-blank lines.
func lines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, "\r"))
		}
	}
	return out
}

// mooncakeWant is a Mooncake line decoded on its own, as the test's
// reference for what Import made of it.
func mooncakeWant(t *testing.T, line string) Request {
	t.Helper()
	var m struct {
		Timestamp    int64   `json:"timestamp"`
		InputLength  int     `json:"input_length"`
		OutputLength int     `json:"output_length"`
		HashIDs      []int64 `json:"hash_ids"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("testdata line %q: %v", line, err)
	}
	return Request{Timestamp: m.Timestamp, InputLength: m.InputLength, OutputLength: m.OutputLength, HashIDs: m.HashIDs}
}

// burstWant is a BurstGPT row split on its own (the excerpt has no
// quoted fields), timestamp in ms as written.
func burstWant(t *testing.T, line string) Request {
	t.Helper()
	f := strings.Split(line, ",")
	if len(f) != 6 {
		t.Fatalf("testdata row %q: %d fields", line, len(f))
	}
	sec, err1 := strconv.ParseInt(f[0], 10, 64)
	in, err2 := strconv.Atoi(f[2])
	out, err3 := strconv.Atoi(f[3])
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatalf("testdata row %q: %v", line, err)
	}
	q := Request{Timestamp: sec * 1000, Model: f[1], InputLength: in, OutputLength: out}
	if out == 0 {
		q.Error = BurstGPTFailed
	}
	return q
}

// TestImportRealExcerpts imports the public traces' excerpts in
// testdata (SOURCES.md says whence) and checks each against the file's
// own first and last lines, read here apart from Import.
func TestImportRealExcerpts(t *testing.T) {
	conv := lines(t, "mooncake_conversation_1-300.jsonl")
	synth := lines(t, "mooncake_synthetic_1001-1200.jsonl")
	burst := lines(t, "burstgpt_1_head.csv")
	shift := func(q Request, ms int64) Request { q.Timestamp -= ms; return q }
	cases := []struct {
		file        string
		format      Format
		n           int
		first, last Request
		failed      int
		models      map[string]int
	}{
		{
			file: "mooncake_conversation_1-300.jsonl", format: FormatMooncake, n: 300,
			first: mooncakeWant(t, conv[0]), last: mooncakeWant(t, conv[len(conv)-1]),
		},
		{
			// Cut from the middle of the trace: its first request, at
			// 272868 ms in the whole trace, is at 0.
			file: "mooncake_synthetic_1001-1200.jsonl", format: FormatMooncake, n: 200,
			first: shift(mooncakeWant(t, synth[0]), 272868), last: shift(mooncakeWant(t, synth[len(synth)-1]), 272868),
		},
		{
			// 299 rows under the header, 11 of them failed (0 response
			// tokens), 48 GPT-4; the first at 5 s, so all 5000 ms earlier.
			file: "burstgpt_1_head.csv", format: FormatBurstGPT, n: 299,
			first: shift(burstWant(t, burst[1]), 5000), last: shift(burstWant(t, burst[len(burst)-1]), 5000),
			failed: 11, models: map[string]int{"ChatGPT": 251, "GPT-4": 48},
		},
	}
	// Pin the values the excerpts start and end with, so a testdata file
	// swapped for another fails here and not just in the counts.
	pinned := map[string][2]Request{
		"mooncake_conversation_1-300.jsonl": {
			{Timestamp: 0, InputLength: 6758, OutputLength: 500, HashIDs: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}},
			{Timestamp: 102000, InputLength: 979, OutputLength: 140, HashIDs: []int64{0, 7813}},
		},
		"burstgpt_1_head.csv": {
			{Timestamp: 0, Model: "ChatGPT", InputLength: 472, OutputLength: 18},
			{Timestamp: 35515000, Model: "ChatGPT", InputLength: 590, OutputLength: 93},
		},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			// A reader handing one byte at a time: the format's guess
			// must give its reader back every byte it looked at.
			for _, r := range []struct {
				name string
				wrap func(io.Reader) io.Reader
			}{
				{"whole", func(r io.Reader) io.Reader { return r }},
				{"one byte at a time", iotest.OneByteReader},
			} {
				got, err := Import(r.wrap(bytes.NewReader(b)), 0)
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if got.Format != c.format || len(got.Requests) != c.n || got.Failed != c.failed || got.Cut != 0 || got.Rounded != 0 {
					t.Fatalf("%s: got %s, %d requests, %d failed, cut %d, rounded %d; want %s, %d, %d failed, 0, 0",
						r.name, got.Format, len(got.Requests), got.Failed, got.Cut, got.Rounded, c.format, c.n, c.failed)
				}
				if q := got.Requests[0]; !reflect.DeepEqual(q, c.first) {
					t.Errorf("%s: first %+v, want %+v", r.name, q, c.first)
				}
				if q := got.Requests[len(got.Requests)-1]; !reflect.DeepEqual(q, c.last) {
					t.Errorf("%s: last %+v, want %+v", r.name, q, c.last)
				}
				if p, ok := pinned[c.file]; ok && (!reflect.DeepEqual(got.Requests[0], p[0]) || !reflect.DeepEqual(got.Requests[len(got.Requests)-1], p[1])) {
					t.Errorf("%s: first and last %+v, %+v; the excerpt's are %+v, %+v", r.name, got.Requests[0], got.Requests[len(got.Requests)-1], p[0], p[1])
				}
				models := map[string]int{}
				for i, q := range got.Requests {
					if i > 0 && q.Timestamp < got.Requests[i-1].Timestamp {
						t.Fatalf("%s: request %d at %d ms before %d's at %d", r.name, i, q.Timestamp, i-1, got.Requests[i-1].Timestamp)
					}
					if q.PromptBytes != 0 || q.BlockBytes != 0 {
						t.Errorf("%s: request %d has PromptBytes %d, BlockBytes %d; an import says neither", r.name, i, q.PromptBytes, q.BlockBytes)
					}
					// Mooncake's blocks are of 512 tokens: every request
					// has exactly the blocks its input length fills.
					if c.format == FormatMooncake {
						if want := (q.InputLength + MooncakeBlockTokens - 1) / MooncakeBlockTokens; len(q.HashIDs) != want {
							t.Errorf("%s: request %d: %d tokens in %d blocks, want %d", r.name, i, q.InputLength, len(q.HashIDs), want)
						}
					}
					if q.Model != "" {
						models[q.Model]++
					}
				}
				if c.models != nil && !reflect.DeepEqual(models, c.models) {
					t.Errorf("%s: models %v, want %v", r.name, models, c.models)
				}
			}
		})
	}
}

// TestImportOdd feeds Import what a person might give it by mistake, or
// what a trace looks like at its edges. The inputs are made up, each
// shaped as its format is.
func TestImportOdd(t *testing.T) {
	const burstHead = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	long := strings.Repeat("x", MaxLine+10)
	cases := []struct {
		name    string
		in      string
		max     int
		format  Format
		ts      []int64 // the requests' timestamps, in order
		rounded int
		cut     int
		err     string // a part of the error's words; "" for none
		is      error  // what the error wraps, if anything
	}{
		{name: "empty file", in: "", err: "no requests", is: ErrEmpty},
		{name: "blank lines only", in: "\n  \n\r\n", err: "no requests", is: ErrEmpty},
		{name: "neither format", in: "hello, world\n", err: "line 1: not a trace", is: ErrNotTrace},
		{name: "neither format after blank lines", in: "\n\nGET / HTTP/1.1\n", err: "line 3: not a trace", is: ErrNotTrace},
		{name: "JSON of another kind", in: `{"prompt": "hi", "completion": "hello"}` + "\n", err: "line 1: not a trace", is: ErrNotTrace},
		{name: "a huge first line", in: long + "\n", err: "line 1 is longer than"},
		{name: "a huge Mooncake line", in: `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0]}` + "\n" + long + "\n", err: "line 2 is longer than"},
		{name: "a huge CSV line", in: burstHead + "5,ChatGPT,472,18,490,Conversation log\n" + long + "\n", err: "line 3 is longer than"},
		{name: "CSV missing a column", in: "Timestamp,Model,Request tokens,Total tokens,Log Type\n5,ChatGPT,472,490,Conversation log\n", err: `line 1: the CSV has no "Response tokens" column`},
		{name: "CSV header only", in: burstHead, err: "no requests", is: ErrEmpty},
		{name: "CSV row short of a field", in: burstHead + "5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,230,1317\n", err: "line 3: this row has a different number of fields"},
		{name: "CSV token count not a number", in: burstHead + "5,ChatGPT,many,18,490,Conversation log\n", err: `line 2: Request tokens: "many" is not a token count`},
		{name: "CSV negative time", in: burstHead + "-5,ChatGPT,472,18,490,Conversation log\n", err: `line 2: Timestamp "-5"`},
		{
			name: "CSV timestamps out of order", in: burstHead + "118,GPT-4,417,276,693,Conversation log\n5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,230,1317,Conversation log\n",
			format: FormatBurstGPT, ts: []int64{0, 40000, 113000},
		},
		{
			name: "CSV with a byte-order mark, CRLF and fractions of a second", in: "\ufeff" + strings.ReplaceAll(burstHead, "\n", "\r\n") + "5.25,ChatGPT,472,18,490,Conversation log\r\n\r\n6.5,ChatGPT,1,2.0,3,API log\r\n",
			format: FormatBurstGPT, ts: []int64{0, 1250},
		},
		{
			name: "BurstGPT_3's columns", in: "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n7,abc,1.5,GPT-4,10,20,30,Conversation log\n9,,2,ChatGPT,11,21,32,API log\n",
			format: FormatBurstGPT, ts: []int64{0, 2000},
		},
		{
			name: "Mooncake timestamps out of order and as floats", in: `{"timestamp": 3000, "input_length": 600, "output_length": 1, "hash_ids": [0, 1]}
{"timestamp": 1500.0, "input_length": 600, "output_length": 1, "hash_ids": [0, 2]}
{"timestamp": 1000.4, "input_length": 10, "output_length": 1, "hash_ids": [3]}
{"timestamp": 1000.6, "input_length": 10, "output_length": 1}
`,
			format: FormatMooncake, ts: []int64{0, 1, 500, 2000}, rounded: 2,
		},
		{name: "Mooncake line not JSON", in: `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0]}` + "\nnot json\n", err: "line 2: not a trace", is: ErrNotTrace},
		{name: "Mooncake line short of a field", in: `{"timestamp": 0, "input_length": 1}` + "\n", err: "line 1: not a trace: a Mooncake line needs", is: ErrNotTrace},
		{name: "Mooncake negative time", in: `{"timestamp": -1, "input_length": 1, "output_length": 1}` + "\n", err: "line 1: timestamp: -1"},
		{name: "Mooncake half a token", in: `{"timestamp": 0, "input_length": 1.5, "output_length": 1}` + "\n", err: `line 1: input_length: "1.5" is not a token count`},
		{name: "Mooncake hash id a fraction", in: `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0.5]}` + "\n", err: `line 1: hash_ids: "0.5"`},
		{
			name: "more requests than allowed", max: 2, err: "more than 2 requests",
			in: `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 1, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 2, "input_length": 1, "output_length": 1}` + "\n",
		},
		{name: "more CSV rows than allowed", max: 1, err: "more than 1 requests", in: burstHead + "5,ChatGPT,472,18,490,Conversation log\n45,ChatGPT,1087,230,1317,Conversation log\n"},
		{
			// This app's trace keeps its times (they are the recording's),
			// sorted; a last line cut short is passed over.
			name: "this app's trace, out of order, cut", in: `{"timestamp":900,"input_length":5,"output_length":2,"hash_ids":[7],"api":"openai-chat","usage":"server"}
{"timestamp":400,"input_length":5,"output_length":2,"api":"openai-chat","usage":"server"}
{"timestamp":950,"input_len`,
			format: FormatKovara, ts: []int64{400, 900}, cut: 1,
		},
		{name: "this app's trace with a bad line", in: `{"timestamp":400,"input_length":5,"output_length":2,"api":"openai-chat"}` + "\nnot json\n" + `{"timestamp":900,"input_length":5,"output_length":2,"api":"openai-chat"}` + "\n", err: "line 2: not a trace", is: ErrNotTrace},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Import(strings.NewReader(c.in), c.max)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				if c.is != nil && !errors.Is(err, c.is) {
					t.Errorf("error %v does not wrap %v", err, c.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ts []int64
			for _, q := range got.Requests {
				ts = append(ts, q.Timestamp)
			}
			if got.Format != c.format || !reflect.DeepEqual(ts, c.ts) || got.Rounded != c.rounded || got.Cut != c.cut {
				t.Errorf("got %s at %v, rounded %d, cut %d; want %s at %v, rounded %d, cut %d", got.Format, ts, got.Rounded, got.Cut, c.format, c.ts, c.rounded, c.cut)
			}
		})
	}
}

// TestImportBurstGPTFields checks what a BurstGPT row becomes beyond its
// time: the model named, a failed row kept and said failed, Log Type
// and Total tokens passed over.
func TestImportBurstGPTFields(t *testing.T) {
	in := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
		"1106,ChatGPT,0,0,0,Conversation log\n" +
		"28765,GPT-4,930,83,1013,API log\n"
	got, err := Import(strings.NewReader(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{Timestamp: 0, Model: "ChatGPT", Error: BurstGPTFailed},
		{Timestamp: 27659000, Model: "GPT-4", InputLength: 930, OutputLength: 83},
	}
	if !reflect.DeepEqual(got.Requests, want) || got.Failed != 1 {
		t.Errorf("got %+v (%d failed), want %+v (1 failed)", got.Requests, got.Failed, want)
	}
}
