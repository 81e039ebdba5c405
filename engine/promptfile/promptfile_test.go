package promptfile

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// write puts content in a file of its own and returns its path.
func write(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prompts")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// inOrder is every record of ix, in file order.
func inOrder(t *testing.T, ix *Index) []Prompt {
	t.Helper()
	ps, err := ix.Sample(ix.Records, 1)
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	slices.SortFunc(ps, func(a, b Prompt) int { return a.Line - b.Line })
	return ps
}

func user(s string) []Message { return []Message{{Role: "user", Content: s}} }

func TestScanShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		content   string
		wantShape string
		wantLines int
		want      []Prompt
	}{
		{
			name:      "jsonl prompt",
			content:   `{"prompt":"hello"}` + "\n" + `{"prompt":"world","max_tokens":64}` + "\n",
			wantShape: "jsonl", wantLines: 2,
			want: []Prompt{{Messages: user("hello"), Line: 1}, {Messages: user("world"), MaxTokens: 64, Line: 2}},
		},
		{
			name: "jsonl messages",
			content: `{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},` +
				`{"role":"assistant","content":"Hello."},{"role":"user","content":"Why?"}],"max_tokens":7}` + "\n",
			wantShape: "jsonl", wantLines: 1,
			want: []Prompt{{Messages: []Message{
				{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"},
				{Role: "assistant", Content: "Hello."}, {Role: "user", Content: "Why?"},
			}, MaxTokens: 7, Line: 1}},
		},
		{
			name:      "crlf",
			content:   "{\"prompt\":\"a\"}\r\n{\"prompt\":\"b\"}\r\n",
			wantShape: "jsonl", wantLines: 2,
			want: []Prompt{{Messages: user("a"), Line: 1}, {Messages: user("b"), Line: 2}},
		},
		{
			name:      "blank lines keep their numbers",
			content:   "\n  \n{\"prompt\":\"a\"}\n\r\n\t\n{\"prompt\":\"b\"}\n\n",
			wantShape: "jsonl", wantLines: 7,
			want: []Prompt{{Messages: user("a"), Line: 3}, {Messages: user("b"), Line: 6}},
		},
		{
			name:      "last line without newline",
			content:   "{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}",
			wantShape: "jsonl", wantLines: 2,
			want: []Prompt{{Messages: user("a"), Line: 1}, {Messages: user("b"), Line: 2}},
		},
		{
			name:      "last line without newline, crlf before",
			content:   "{\"prompt\":\"a\"}\r\n{\"prompt\":\"b\"}",
			wantShape: "jsonl", wantLines: 2,
			want: []Prompt{{Messages: user("a"), Line: 1}, {Messages: user("b"), Line: 2}},
		},
		{
			name:      "byte order mark",
			content:   "\ufeff{\"prompt\":\"a\"}\n",
			wantShape: "jsonl", wantLines: 1,
			want: []Prompt{{Messages: user("a"), Line: 1}},
		},
		{
			name:      "utf-8 and escapes",
			content:   `{"prompt":"Grüße, 你好, 🙂 \"q\" \\ \n\t\u2028 \u00e9"}` + "\n",
			wantShape: "jsonl", wantLines: 1,
			want: []Prompt{{Messages: user("Grüße, 你好, 🙂 \"q\" \\ \n\t\u2028 é"), Line: 1}},
		},
		{
			name:      "null max_tokens is none",
			content:   `{"prompt":"a","max_tokens":null}`,
			wantShape: "jsonl", wantLines: 1,
			want: []Prompt{{Messages: user("a"), Line: 1}},
		},
		{
			name: "jsonl conversations",
			content: `{"conversations":[{"from":"human","value":"q1"},{"from":"gpt","value":"a1"}]}` + "\n" +
				`{"prompt":"p"}` + "\n",
			wantShape: "jsonl", wantLines: 2,
			want: []Prompt{{Messages: user("q1"), Line: 1}, {Messages: user("p"), Line: 2}},
		},
		{
			name: "sharegpt",
			content: "  [\n" +
				` {"id":"x1","conversations":[{"from":"system","value":"You help."},{"from":"human","value":"First?"},` +
				`{"from":"gpt","value":"Yes."},{"from":"human","value":"Second?"}]},` + "\n" +
				` {"conversations":[{"from":"gpt","value":"greeting"},{"from":"human","value":"Only this"}],"max_tokens":5},` + "\n" +
				` {"messages":[{"role":"user","content":"m"}]},` + "\n" +
				` {"prompt":"p"}` + "\n]\n",
			wantShape: "sharegpt", wantLines: 4,
			want: []Prompt{
				{Messages: []Message{{Role: "system", Content: "You help."}, {Role: "user", Content: "First?"}}, Line: 1},
				{Messages: user("Only this"), MaxTokens: 5, Line: 2},
				{Messages: user("m"), Line: 3},
				{Messages: user("p"), Line: 4},
			},
		},
		{
			name:      "sharegpt pretty printed with unicode",
			content:   "[\n  {\n    \"conversations\": [\n      {\"from\": \"human\", \"value\": \"ünï 🙂\"}\n    ]\n  }\n]",
			wantShape: "sharegpt", wantLines: 1,
			want: []Prompt{{Messages: user("ünï 🙂"), Line: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ix, err := Scan(context.Background(), write(t, tt.content), Options{})
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if ix.Shape != tt.wantShape || ix.Lines != tt.wantLines || ix.Records != len(tt.want) || ix.Skipped != 0 {
				t.Errorf("got shape %q, %d lines, %d records, %d skipped; want %q, %d, %d, 0",
					ix.Shape, ix.Lines, ix.Records, ix.Skipped, tt.wantShape, tt.wantLines, len(tt.want))
			}
			if ix.Size != int64(len(tt.content)) {
				t.Errorf("got size %d, want %d", ix.Size, len(tt.content))
			}
			if got := inOrder(t, ix); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got prompts\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

// malformed are records refused, each with a sentence that must name why.
var malformed = []struct {
	name   string
	record string
	why    string
}{
	{"invalid json", `{"prompt": x}`, "not valid JSON (invalid character 'x' looking for beginning of value)"},
	{"text after the object", `{"prompt":"a"} x`, "not valid JSON ("},
	{"cut short", `{"prompt":"a"`, "not valid JSON ("},
	{"a list", `[1,2]`, "not a JSON object"},
	{"a string", `"hello"`, "not a JSON object"},
	{"null", `null`, "not a JSON object"},
	{"neither", `{"text":"a"}`, `"messages"`},
	{"both", `{"prompt":"a","messages":[{"role":"user","content":"b"}]}`, "more than one of"},
	{"prompt a number", `{"prompt":5}`, `"prompt" must be text in quotes`},
	{"prompt empty", `{"prompt":""}`, `"prompt" is empty`},
	{"messages not a list", `{"messages":"hi"}`, `"messages" must be a list`},
	{"messages empty", `{"messages":[]}`, `"messages" is empty`},
	{"message not an object", `{"messages":["hi"]}`, `"messages" must be a list`},
	{"role missing", `{"messages":[{"content":"a"}]}`, `message 1 has no "role"`},
	{"role unknown", `{"messages":[{"role":"user","content":"a"},{"role":"tool","content":"b"}]}`, `message 2 has role "tool"`},
	{"role a number", `{"messages":[{"role":1,"content":"a"}]}`, `message 1: "role" must be text`},
	{"content missing", `{"messages":[{"role":"user"}]}`, `message 1 has no "content"`},
	{"content parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}]}`, "only plain text content is read"},
	{"content a number", `{"messages":[{"role":"user","content":3}]}`, `message 1: "content" must be text`},
	{"ends with assistant", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`, `"messages" must end with a user message`},
	{"last user empty", `{"messages":[{"role":"user","content":""}]}`, "the last user message is empty"},
	{"max_tokens zero", `{"prompt":"a","max_tokens":0}`, `"max_tokens" must be a whole number above 0, not 0`},
	{"max_tokens negative", `{"prompt":"a","max_tokens":-3}`, `"max_tokens" must be a whole number above 0, not -3`},
	{"max_tokens fraction", `{"prompt":"a","max_tokens":1.5}`, `"max_tokens" must be a whole number above 0`},
	{"max_tokens text", `{"prompt":"a","max_tokens":"5"}`, `"max_tokens" must be a whole number above 0`},
	{"max_tokens huge", `{"prompt":"a","max_tokens":99999999999}`, `"max_tokens" is far too large`},
	{"no human turn", `{"conversations":[{"from":"gpt","value":"a"}]}`, `no "human" turn`},
	{"conversations not a list", `{"conversations":{"from":"human"}}`, `"conversations" must be a list`},
	{"from a number", `{"conversations":[{"from":1,"value":"a"}]}`, `turn 1: "from" must be text`},
	{"value a list", `{"conversations":[{"from":"human","value":["a"]}]}`, `turn 1: "value" must be text`},
	{"human empty", `{"conversations":[{"from":"human","value":""}]}`, `the first "human" turn is empty`},
}

// TestFastMatchesCareful: the one-decode path may only take a record the
// careful path takes, and must read it the same.
func TestFastMatchesCareful(t *testing.T) {
	t.Parallel()
	records := []string{
		`{"prompt":"a"}`,
		`{"prompt":"a","max_tokens":12}`,
		`{"PROMPT":"upper case keys, as encoding/json matches them"}`,
		`{"messages":[{"role":"system","content":""},{"role":"user","content":"b"}]}`,
		`{"messages":[{"role":"user","content":null},{"role":"user","content":"b"}]}`,
		`{"messages":[{"role":"user","content":"a","name":"x"}],"model":"m","temperature":0.5}`,
		`{"messages":[{"role":"user","content":"a"}],"prompt":null}`,
		`{"messages":null,"prompt":"a"}`,
		`{"conversations":[{"from":"system","value":"s"},{"from":"human","value":"h"},{"from":"gpt","value":"g"}]}`,
		`{"conversations":[{"from":"system","value":""},{"from":"human","value":"h"}]}`,
		`{"conversations":[{"from":"gpt","value":5},{"from":"human","value":"h"}]}`,
		`{"conversations":[{"from":"gpt","value":"g"},{"from":"system","value":"late"},{"from":"user","value":"h"}]}`,
		`{"conversations":[{"from":"human","value":"h"},{"from":"human","value":7}]}`,
		`{"conversations":[{"from":"system","value":null},{"from":"human","value":"h"}]}`,
		`{"conversations":[{"value":"v"},{"from":"human","value":"h"}]}`,
		`{"prompt":"a","max_tokens":1e3}`,
		`{"prompt":"a","max_tokens":2147483648}`,
		`{"prompt":"a","max_tokens":2147483647}`,
	}
	for _, m := range malformed {
		records = append(records, m.record)
	}
	for _, rec := range records {
		careful, why := parseCareful([]byte(rec), false)
		fast, ok := parseFast([]byte(rec))
		if ok && (why != "" || !reflect.DeepEqual(fast, careful)) {
			t.Errorf("%s: the fast path read %+v, the careful one %+v %q", rec, fast, careful, why)
		}
	}
}

func TestMalformedLines(t *testing.T) {
	t.Parallel()
	good := `{"prompt":"good"}`
	for _, tt := range malformed {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The bad record on line 3, after a blank line.
			path := write(t, good+"\n\n"+tt.record+"\n"+good+"\n")

			_, err := Scan(context.Background(), path, Options{})
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a RecordError", err)
			}
			if re.Line != 3 || re.Entry || !strings.Contains(re.Why, tt.why) {
				t.Errorf("got line %d entry %v %q, want line 3 with %q", re.Line, re.Entry, re.Why, tt.why)
			}
			if want := "prompts file line 3: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %q, want it to start %q", err, want)
			}

			ix, err := Scan(context.Background(), path, Options{SkipBad: true})
			if err != nil {
				t.Fatalf("Scan with SkipBad: %v", err)
			}
			if ix.Records != 2 || ix.Skipped != 1 || len(ix.Bad) != 1 || ix.Bad[0].Line != 3 || !strings.Contains(ix.Bad[0].Why, tt.why) {
				t.Errorf("got %d records, %d skipped, bad %+v; want 2, 1, line 3 with %q", ix.Records, ix.Skipped, ix.Bad, tt.why)
			}
			if got := inOrder(t, ix); len(got) != 2 || got[0].Line != 1 || got[1].Line != 4 {
				t.Errorf("got prompts %+v, want lines 1 and 4", got)
			}
		})
	}
}

func TestMalformedEntries(t *testing.T) {
	t.Parallel()
	good := `{"conversations":[{"from":"human","value":"good"}]}`
	for _, tt := range malformed {
		if strings.HasPrefix(tt.why, "not valid JSON") || tt.name == "neither" {
			continue // TestArraySyntax; the wording differs for an entry
		}
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := write(t, "[\n"+good+",\n"+good+",\n"+tt.record+",\n"+good+"\n]\n")

			_, err := Scan(context.Background(), path, Options{})
			var re *RecordError
			if !errors.As(err, &re) {
				t.Fatalf("got %v, want a RecordError", err)
			}
			if re.Line != 3 || !re.Entry || !strings.Contains(re.Why, tt.why) {
				t.Errorf("got entry %d (entry %v) %q, want entry 3 with %q", re.Line, re.Entry, re.Why, tt.why)
			}
			if want := "prompts file entry 3: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %q, want it to start %q", err, want)
			}

			ix, err := Scan(context.Background(), path, Options{SkipBad: true})
			if err != nil {
				t.Fatalf("Scan with SkipBad: %v", err)
			}
			if ix.Records != 3 || ix.Skipped != 1 || ix.Lines != 4 || len(ix.Bad) != 1 || ix.Bad[0].Line != 3 {
				t.Errorf("got %d records, %d skipped, %d entries, bad %+v; want 3, 1, 4, entry 3", ix.Records, ix.Skipped, ix.Lines, ix.Bad)
			}
		})
	}
}

func TestArraySyntax(t *testing.T) {
	t.Parallel()
	good := `{"prompt":"good"}`
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"bad entry", "[" + good + ", {\"prompt\": x}, " + good + "]", "prompts file entry 2: not valid JSON (invalid character 'x'"},
		{"missing comma", "[" + good + " " + good + "]", "prompts file entry 2: not valid JSON ("},
		{"cut short", "[" + good + ", " + good, "ends before its list of prompts does, after entry 2 (cut short?)"},
		{"cut inside an entry", "[" + good + ", {\"prompt\":", "ends before its list of prompts does, after entry 1 (cut short?)"},
		{"text after the list", "[" + good + "] x", "has more after the end of its list"},
		{"a second list", "[" + good + "]\n[" + good + "]", "has more after the end of its list"},
		{"neither", "[" + good + `, {"text":"a"}]`, `prompts file entry 2: has no "conversations"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := write(t, tt.content)
			for _, skip := range []bool{false, true} {
				if tt.name == "neither" && skip {
					continue // skippable, TestMalformedEntries' kind
				}
				_, err := Scan(context.Background(), path, Options{SkipBad: skip})
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("SkipBad %v: got %v, want %q", skip, err, tt.want)
				}
			}
		})
	}
}

func TestTooLong(t *testing.T) {
	t.Parallel()
	rec := func(n int) string { return `{"prompt":"` + strings.Repeat("a", n-13) + `"}` }
	if len(rec(100)) != 100 {
		t.Fatalf("rec(100) is %d bytes", len(rec(100)))
	}
	tests := []struct {
		name      string
		limit     int
		content   string
		wantLine  int
		wantEntry bool
		wantWhy   string
		records   int // with SkipBad
		wantLines int
	}{
		{"line", 64, rec(64) + "\n" + rec(65) + "\n" + rec(20) + "\n", 2, false, "longer than 64 bytes", 2, 3},
		{"line with crlf at the limit", 64, rec(64) + "\r\n" + rec(65) + "\r\n", 2, false, "longer than 64 bytes", 1, 2},
		{"line longer than the reader's buffer", 100 << 10, rec(20) + "\n" + rec(300<<10) + "\n" + rec(100<<10) + "\n", 2, false, "longer than 100 KiB", 2, 3},
		{"last line without newline", 64, rec(20) + "\n" + rec(200<<10), 2, false, "longer than 64 bytes", 1, 2},
		{"entry", 64, "[" + rec(64) + ",\n" + rec(65) + ",\n" + rec(20) + "]", 2, true, "longer than 64 bytes", 2, 3},
		{"entry past the decoder's reads", 100 << 10, "[" + rec(20) + ", " + rec(500<<10) + " , " + rec(100<<10) + "]", 2, true, "longer than 100 KiB", 2, 3},
		{"last entry", 100 << 10, "[" + rec(20) + ",\n" + rec(500<<10) + "\n]\n", 2, true, "longer than 100 KiB", 1, 2},
		{"bare number", 100 << 10, "[" + strings.Repeat("1", 300<<10) + " , " + rec(20) + "]", 1, true, "longer than 100 KiB", 1, 2},
		{"bare number last", 100 << 10, "[" + rec(20) + "," + strings.Repeat("1", 300<<10) + "]", 2, true, "longer than 100 KiB", 1, 2},
		{"first entry, nested", 100 << 10, `[{"messages":[{"role":"user","content":"` + strings.Repeat(`\"]}`, 100<<10) + `"}]}, ` + rec(20) + "]", 1, true, "longer than 100 KiB", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := write(t, tt.content)
			_, err := Scan(context.Background(), path, Options{MaxRecordBytes: tt.limit})
			var re *RecordError
			if !errors.As(err, &re) || re.Line != tt.wantLine || re.Entry != tt.wantEntry || re.Why != tt.wantWhy {
				t.Fatalf("got %v, want line %d (entry %v) %q", err, tt.wantLine, tt.wantEntry, tt.wantWhy)
			}
			ix, err := Scan(context.Background(), path, Options{MaxRecordBytes: tt.limit, SkipBad: true})
			if err != nil {
				t.Fatalf("Scan with SkipBad: %v", err)
			}
			if ix.Records != tt.records || ix.Skipped != 1 || ix.Lines != tt.wantLines {
				t.Errorf("got %d records, %d skipped, %d lines; want %d, 1, %d", ix.Records, ix.Skipped, ix.Lines, tt.records, tt.wantLines)
			}
			checkSum(t, ix, tt.content)
			for _, p := range inOrder(t, ix) {
				if p.Line == tt.wantLine {
					t.Errorf("the long record, line %d, was kept", p.Line)
				}
			}
		})
	}
}

func TestDefaultLimit(t *testing.T) {
	t.Parallel()
	path := write(t, `{"prompt":"`+strings.Repeat("a", 8<<20)+`"}`)
	_, err := Scan(context.Background(), path, Options{})
	if err == nil || err.Error() != "prompts file line 1: longer than 8 MiB" {
		t.Errorf("got %v, want line 1 longer than 8 MiB", err)
	}
}

func checkSum(t *testing.T, ix *Index, content string) {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	if want := hex.EncodeToString(sum[:]); ix.SHA256 != want {
		t.Errorf("got SHA-256 %s, want %s", ix.SHA256, want)
	}
}

func TestSHA256(t *testing.T) {
	t.Parallel()
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "{\"prompt\":\"prompt number %d\"}\n", i)
	}
	tests := []struct {
		name, content string
	}{
		{"jsonl", big.String()},
		{"jsonl without final newline", strings.TrimSuffix(big.String(), "\n")},
		{"byte order mark", "\ufeff" + big.String()},
		{"sharegpt", "[" + strings.ReplaceAll(strings.TrimSuffix(big.String(), "\n"), "\n", ",\n") + "]\n\n  \n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ix, err := Scan(context.Background(), write(t, tt.content), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if ix.Records != 20000 {
				t.Errorf("got %d records, want 20000", ix.Records)
			}
			checkSum(t, ix, tt.content)
		})
	}
}

func TestFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name    string
		path    string
		opt     Options
		want    string
		wantErr error
	}{
		{name: "missing", path: filepath.Join(dir, "nope.jsonl"), want: "open the prompts file", wantErr: fs.ErrNotExist},
		{name: "a folder", path: dir, want: "is not a plain file"},
		{name: "empty", path: write(t, ""), want: "is empty"},
		{name: "only blank lines", path: write(t, "\n \r\n\t\n"), want: "no prompts in it, only blank lines"},
		{name: "an empty list", path: write(t, "[ ]"), want: "no prompts in it"},
		{name: "nothing usable", path: write(t, "{\"prompt\":\"\"}\n\n{}\n"), opt: Options{SkipBad: true},
			want: `has no usable prompt: all 2 were malformed; the first, line 1: "prompt" is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ix, err := Scan(context.Background(), tt.path, tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error with %q", ix, err, tt.want)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("got %v, want it to wrap %v", err, tt.wantErr)
			}
		})
	}
}

func TestBadKeepsTwenty(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "{\"prompt\":\"ok %d\"}\n{\"prompt\":%d}\n", i, i)
	}
	ix, err := Scan(context.Background(), write(t, b.String()), Options{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Records != 50 || ix.Skipped != 50 || len(ix.Bad) != 20 || ix.Bad[0].Line != 2 || ix.Bad[19].Line != 40 {
		t.Errorf("got %d records, %d skipped, %d bad from line %d to %d; want 50, 50, 20 from 2 to 40",
			ix.Records, ix.Skipped, len(ix.Bad), ix.Bad[0].Line, ix.Bad[len(ix.Bad)-1].Line)
	}
}

// TestManyBatches: records decoded in parallel batches are still taken in
// file order: the first bad line is the one refused, the good ones keep
// their lines, and a refusal stops the reading early.
func TestManyBatches(t *testing.T) {
	t.Parallel()
	const n = 5*batchRecords + 123
	bad := map[int]bool{batchRecords + 7: true, 3*batchRecords + 1: true, 3 * batchRecords: true, n: true}
	var b strings.Builder
	for line := 1; line <= n; line++ {
		if bad[line] {
			fmt.Fprintf(&b, "{\"prompt\":%d}\n", line)
		} else {
			fmt.Fprintf(&b, "{\"prompt\":\"p%d\"}\n", line)
		}
	}
	path := write(t, b.String())

	_, err := Scan(context.Background(), path, Options{})
	var re *RecordError
	if !errors.As(err, &re) || re.Line != batchRecords+7 {
		t.Fatalf("got %v, want line %d refused", err, batchRecords+7)
	}

	ix, err := Scan(context.Background(), path, Options{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	var gotBad []int
	for _, b := range ix.Bad {
		gotBad = append(gotBad, b.Line)
	}
	if want := []int{batchRecords + 7, 3 * batchRecords, 3*batchRecords + 1, n}; !slices.Equal(gotBad, want) || ix.Skipped != 4 || ix.Records != n-4 || ix.Lines != n {
		t.Errorf("got bad lines %v, %d skipped, %d records, %d lines; want %v, 4, %d, %d", gotBad, ix.Skipped, ix.Records, ix.Lines, want, n-4, n)
	}
	for i, p := range inOrder(t, ix) {
		if want := fmt.Sprintf("p%d", p.Line); p.Messages[0].Content != want {
			t.Fatalf("prompt %d: line %d has %q, want %q", i, p.Line, p.Messages[0].Content, want)
		}
	}
}

// numbered is an index of n one-line prompts "p<i>".
func numbered(t testing.TB, n int) *Index {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"prompt\":\"p%d\"}\n", i)
	}
	ix, err := Scan(context.Background(), write(t, b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func texts(ps []Prompt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Messages[len(p.Messages)-1].Content
	}
	return out
}

func TestSampleDeterministic(t *testing.T) {
	t.Parallel()
	ix := numbered(t, 100)
	for _, n := range []int{1, 10, 24, 25, 60, 100, 250} { // both ways of picking, and cycling
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			a, err := ix.Sample(n, 7)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ix.Sample(n, 7)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("the same seed gave\n%v\nthen\n%v", texts(a), texts(b))
			}
			if len(a) != n {
				t.Fatalf("got %d prompts, want %d", len(a), n)
			}
			c, err := ix.Sample(n, 8)
			if err != nil {
				t.Fatal(err)
			}
			if n > 1 && slices.Equal(texts(a), texts(c)) {
				t.Errorf("seeds 7 and 8 gave the same prompts in the same order: %v", texts(a))
			}
			// Every record as often as any other, give or take one: each
			// pass through the records uses all of them once.
			count := map[string]int{}
			for _, p := range a {
				count[p.Messages[0].Content]++
				if want := fmt.Sprintf("p%d", p.Line-1); p.Messages[0].Content != want {
					t.Errorf("line %d has %q, want %q", p.Line, p.Messages[0].Content, want)
				}
			}
			lo, hi := n/100, (n+99)/100
			if len(count) != min(n, 100) {
				t.Errorf("got %d different prompts, want %d", len(count), min(n, 100))
			}
			for s, c := range count {
				if c < lo || c > hi {
					t.Errorf("%s picked %d times, want %d to %d", s, c, lo, hi)
				}
			}
		})
	}
}

func TestSampleShuffles(t *testing.T) {
	t.Parallel()
	ix := numbered(t, 1000)
	ps, err := ix.Sample(1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	inPlace := 0
	for i, p := range ps {
		if p.Line == i+1 {
			inPlace++
		}
	}
	// A shuffle leaves about one record in place; file order leaves all.
	if inPlace > 10 {
		t.Errorf("%d of 1000 prompts came in file order, want a shuffle", inPlace)
	}
}

func TestPickSparseMatchesDense(t *testing.T) {
	t.Parallel()
	// Picking few records keeps only the moved slots; it must draw the
	// same records as the full shuffle would.
	for seed := range int64(20) {
		sparse := pick(1000, 200, seed)
		dense := pick(1000, 1000, seed)[:200]
		if !slices.Equal(sparse, dense) {
			t.Fatalf("seed %d: sparse %v, dense %v", seed, sparse[:10], dense[:10])
		}
	}
}

func TestSampleErrors(t *testing.T) {
	t.Parallel()
	content := "{\"prompt\":\"a\"}\n{\"prompt\":\"b\"}\n"
	path := write(t, content)
	ix, err := Scan(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sample(0, 1); err == nil || !strings.Contains(err.Error(), "at least 1") {
		t.Errorf("Sample(0): got %v", err)
	}
	if _, err := (&Index{}).Sample(1, 1); err == nil {
		t.Error("Sample of an empty index: got no error")
	}
	// Same size, other content: noticed when a record no longer reads.
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(content, "prompt", "pr0mpt")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sample(2, 1); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("after a change: got %v", err)
	}
	if err := os.WriteFile(path, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sample(2, 1); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Errorf("after growing: got %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sample(2, 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after removal: got %v, want it to wrap fs.ErrNotExist", err)
	}
}

func TestAppendMessagesJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []Message
		want []Message // nil: as in
	}{
		{name: "none"},
		{name: "plain", in: user("hello")},
		{name: "system and user", in: []Message{{"system", "Be brief."}, {"user", "Hi"}}},
		{name: "quotes and backslashes", in: user(`say "hi" \ \\n \u0041`)},
		{name: "control characters", in: user("a\x00b\x01\x1f\n\r\t\b\f\x7f")},
		{name: "utf-8", in: user("Grüße 你好 🙂 \u2028\u2029 é")},
		{name: "html", in: user("<script>&</script>")},
		{name: "not utf-8", in: user("a\xffb\xc3"), want: user("a\ufffdb\ufffd")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := []byte(`{"messages":[`)
			b := Prompt{Messages: tt.in}.AppendMessagesJSON(prefix)
			if !strings.HasPrefix(string(b), string(prefix)) {
				t.Fatalf("got %q, want it after %q", b, prefix)
			}
			b = append(b, "]}"...)
			if !utf8.Valid(b) {
				t.Errorf("%q is not UTF-8; servers refuse such a body", b)
			}
			var got struct{ Messages []Message }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s is not valid JSON: %v", b, err)
			}
			want := tt.want
			if want == nil {
				want = tt.in
			}
			if len(got.Messages) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got.Messages, want)) {
				t.Errorf("got %q, want %q", got.Messages, want)
			}
			var generic map[string][]map[string]any
			_ = json.Unmarshal(b, &generic)
			for _, m := range generic["messages"] {
				if len(m) != 2 || m["role"] == nil || m["content"] == nil {
					t.Errorf("got object %v, want exactly role and content", m)
				}
			}
		})
	}
}

// writeJSONL writes about size bytes of varied JSONL prompts to path and
// returns how many it wrote.
func writeJSONL(tb testing.TB, path string, size int) int {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, written := 0, 0
	for written < size {
		var line string
		if n%3 == 0 {
			line = fmt.Sprintf(`{"prompt":"Question %d: explain, in a few words, why the sky looks blue at noon and red at dusk. %s"}`+"\n",
				n, strings.Repeat("More context. ", n%7))
		} else {
			line = fmt.Sprintf(`{"messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"Request %d — résumé: %s"}],"max_tokens":%d}`+"\n",
				n, strings.Repeat("words ", 10+n%20), 16+n%100)
		}
		w.WriteString(line)
		written += len(line)
		n++
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return n
}

func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestScanRetainsLittle: the index of a 20 MB file holds where its records
// lie, not the records. Not parallel, so that no other test's allocations
// are counted.
func TestScanRetainsLittle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.jsonl")
	n := writeJSONL(t, path, 20<<20)

	before := heapAfterGC()
	ix, err := Scan(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	after := heapAfterGC()
	runtime.KeepAlive(ix)
	if ix.Records != n {
		t.Fatalf("got %d records, want %d", ix.Records, n)
	}
	grew := int64(after) - int64(before)
	limit := int64(2<<20 + 32*n)
	t.Logf("%d records in %d MB: the index holds %d bytes (%.1f a record)", n, ix.Size>>20, grew, float64(grew)/float64(n))
	if grew > limit {
		t.Errorf("after Scan the heap grew by %d bytes, want under %d (2 MiB + 32 bytes for each of %d records)", grew, limit, n)
	}
}

// TestLongRecordNotHeld: a 40 MB line or entry over a 1 MiB limit is
// read past, never held whole. Not parallel: it counts all allocations.
func TestLongRecordNotHeld(t *testing.T) {
	long := `{"prompt":"` + strings.Repeat("a", 40<<20) + `"}`
	good := `{"prompt":"good"}`
	tests := []struct {
		name, content string
	}{
		{"line", good + "\n" + long + "\n" + good + "\n"},
		{"entry", "[" + good + ",\n" + long + ",\n" + good + "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, tt.content)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			ix, err := Scan(context.Background(), path, Options{MaxRecordBytes: 1 << 20, SkipBad: true})
			runtime.ReadMemStats(&ms)
			if err != nil {
				t.Fatal(err)
			}
			if ix.Records != 2 || ix.Skipped != 1 {
				t.Errorf("got %d records, %d skipped; want 2, 1", ix.Records, ix.Skipped)
			}
			// The limit, the decoder's doubling buffer, and the reads.
			t.Logf("Scan of %d MB allocated %d bytes", len(tt.content)>>20, ms.TotalAlloc-before)
			if got, limit := ms.TotalAlloc-before, uint64(8<<20); got > limit {
				t.Errorf("Scan allocated %d bytes, want under %d: the long record was held", got, limit)
			}
		})
	}
}

// bigFile is the benchmarks' 200 MB file, written once per test binary.
var bigFile struct {
	once    sync.Once
	dir     string
	path    string
	records int
}

func bigJSONL(b *testing.B) string {
	bigFile.once.Do(func() {
		dir, err := os.MkdirTemp("", "promptfile-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bigFile.dir = dir
		bigFile.path = filepath.Join(dir, "big.jsonl")
		bigFile.records = writeJSONL(b, bigFile.path, 200<<20)
	})
	if bigFile.path == "" {
		b.Fatal("the benchmark file could not be written")
	}
	return bigFile.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigFile.dir != "" {
		os.RemoveAll(bigFile.dir)
	}
	os.Exit(code)
}

func BenchmarkScan200MB(b *testing.B) {
	path := bigJSONL(b)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	before := heapAfterGC()
	var ix *Index
	b.ResetTimer()
	for b.Loop() {
		ix, err = Scan(context.Background(), path, Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	after := heapAfterGC()
	runtime.KeepAlive(ix)
	b.ReportMetric(float64(int64(after)-int64(before))/(1<<20), "retained-MiB")
	b.ReportMetric(float64(ix.Records), "records")
}

func BenchmarkSample(b *testing.B) {
	path := filepath.Join(b.TempDir(), "prompts.jsonl")
	writeJSONL(b, path, 20<<20)
	ix, err := Scan(context.Background(), path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ix.Sample(1000, 42); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanShareGPT50MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "sharegpt.json")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("[\n")
	for n := 0; ; n++ {
		if n > 0 {
			w.WriteString(",\n")
		}
		fmt.Fprintf(w, `  {"id": "c%d", "conversations": [{"from": "human", "value": "Question %d: %s"}, {"from": "gpt", "value": "%s"}]}`,
			n, n, strings.Repeat("why is that so? ", 5+n%20), strings.Repeat("Because of this. ", 10+n%30))
		if w.Buffered()+int(must(f.Seek(0, 1))) > 50<<20 {
			break
		}
	}
	w.WriteString("\n]\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	size := must(f.Seek(0, 1))
	f.Close()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Scan(context.Background(), path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func must(n int64, err error) int64 {
	if err != nil {
		panic(err)
	}
	return n
}

// TestScanProgressAndStop: a scan keeps Progress at the bytes it has read
// (all of them at its end), and an ended context ends it with ErrStopped,
// for both shapes, before it has read the file.
func TestScanProgressAndStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "prompts.jsonl")
	writeJSONL(t, jsonl, 4<<20)
	var arr strings.Builder
	arr.WriteString("[\n")
	for n := 0; arr.Len() < 4<<20; n++ {
		if n > 0 {
			arr.WriteString(",\n")
		}
		fmt.Fprintf(&arr, `{"conversations": [{"from": "human", "value": "Question %d: %s"}]}`, n, strings.Repeat("why? ", 10+n%20))
	}
	arr.WriteString("\n]\n")
	sharegpt := filepath.Join(dir, "sharegpt.json")
	if err := os.WriteFile(sharegpt, []byte(arr.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{jsonl, sharegpt} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		var p Progress
		if _, err := Scan(context.Background(), path, Options{Progress: &p}); err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if got, want := p.Read.Load(), st.Size(); got != want || p.Size.Load() != want {
			t.Errorf("%s: progress %d of %d at the end, want %d of %d", filepath.Base(path), got, p.Size.Load(), want, want)
		}

		stopped, cancel := context.WithCancel(context.Background())
		cancel()
		var q Progress
		_, err = Scan(stopped, path, Options{Progress: &q})
		if !errors.Is(err, ErrStopped) {
			t.Errorf("%s stopped: %v, want ErrStopped", filepath.Base(path), err)
		}
		if q.Read.Load() >= st.Size() {
			t.Errorf("%s stopped: read %d of %d, want it stopped before the end", filepath.Base(path), q.Read.Load(), st.Size())
		}
	}
}
