package stream

import (
	"bytes"
	"encoding/json"
	"testing"
)

// contentOracle is every non-empty delta.content of a chunk, joined, as
// encoding/json reads it.
func contentOracle(t *testing.T, data []byte) string {
	t.Helper()
	var c struct {
		Choices []struct {
			Delta struct {
				Content any `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return ""
	}
	out := ""
	for _, ch := range c.Choices {
		if s, ok := ch.Delta.Content.(string); ok {
			out += s
		}
	}
	return out
}

func TestAppendContentKeepsTheEscapedText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, chunk, want string
	}{
		{"plain", `{"choices":[{"delta":{"content":" world"}}]}`, " world"},
		{"escapes", `{"choices":[{"delta":{"content":"a\"b\\c\n\u00e9\ud83d\ude00"}}]}`, "a\"b\\c\né😀"},
		{"two choices", `{"choices":[{"delta":{"content":"x"}},{"delta":{"content":"y"}}]}`, "xy"},
		{"reasoning is not the answer", `{"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}`, ""},
		{"role chunk", `{"choices":[{"delta":{"role":"assistant","content":null}}]}`, ""},
		{"usage chunk", `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`, ""},
		{"legacy text is not a chat turn", `{"choices":[{"text":"Once"}]}`, ""},
		{"content not a string", `{"choices":[{"delta":{"content":[1,2]}}]}`, ""},
		{"not an object", `[{"choices":[]}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := AppendContent([]byte("kept:"), []byte(tt.chunk))
			if !bytes.HasPrefix(body, []byte("kept:")) {
				t.Fatalf("AppendContent lost dst: %q", body)
			}
			var got string
			if err := json.Unmarshal(append(append([]byte(`"`), body[len("kept:"):]...), '"'), &got); err != nil {
				t.Fatalf("the appended body %q is no JSON string body: %v", body, err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAppendContentRebuildsCapturedAnswers joins every chunk of the real
// llama.cpp streams into one JSON string, as the context plan's follow-up
// sends the answer back, and holds it to encoding/json's reading.
func TestAppendContentRebuildsCapturedAnswers(t *testing.T) {
	t.Parallel()
	var body []byte
	want := ""
	for _, c := range capturedChunks(t) {
		body = AppendContent(body, c)
		want += contentOracle(t, c)
	}
	if want == "" {
		t.Fatal("the captures hold no answer text")
	}
	var got string
	if err := json.Unmarshal(append(append([]byte(`"`), body...), '"'), &got); err != nil {
		t.Fatalf("joined bodies are no JSON string: %v", err)
	}
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDecodeTimings(t *testing.T) {
	t.Parallel()
	final := `{"choices":[],"usage":{"completion_tokens":8,"prompt_tokens":22},"timings":{"cache_n":21,"prompt_n":1,"prompt_ms":2.198,"prompt_per_token_ms":2.198,"prompt_per_second":454.9590536851683,"predicted_n":8,"predicted_ms":12.78,"predicted_per_token_ms":1.5975,"predicted_per_second":625.9780907668232}}`
	got, ok := DecodeTimings([]byte(final))
	want := Timings{PromptN: 1, PredictedN: 8, CacheN: 21, PromptMs: 2.198, PredictedMs: 12.78,
		PromptPerSecond: 454.9590536851683, PredictedPerSecond: 625.9780907668232}
	if !ok || got != want {
		t.Errorf("DecodeTimings = %+v, %v; want %+v, true", got, ok, want)
	}
	for _, in := range []string{
		`{"choices":[{"delta":{"content":"x"}}]}`,
		`{"timings":null}`,
		`not json`,
	} {
		if got, ok := DecodeTimings([]byte(in)); ok || got != (Timings{}) {
			t.Errorf("DecodeTimings(%s) = %+v, %v; want nothing", in, got, ok)
		}
	}
	// Values that are not finite numbers read as 0; the rest still count.
	got, ok = DecodeTimings([]byte(`{"timings":{"prompt_ms":"fast","prompt_n":-3,"predicted_ms":1e400,"predicted_n":4}}`))
	if !ok || got != (Timings{PredictedN: 4}) {
		t.Errorf("odd values: got %+v, %v", got, ok)
	}
}

// TestDecodeTimingsOfCapturedAnswers holds every captured final chunk's
// timings to encoding/json's reading.
func TestDecodeTimingsOfCapturedAnswers(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, c := range capturedChunks(t) {
		var ref struct {
			Timings *struct {
				PromptN            int     `json:"prompt_n"`
				PredictedN         int     `json:"predicted_n"`
				CacheN             int     `json:"cache_n"`
				PromptMs           float64 `json:"prompt_ms"`
				PredictedMs        float64 `json:"predicted_ms"`
				PromptPerSecond    float64 `json:"prompt_per_second"`
				PredictedPerSecond float64 `json:"predicted_per_second"`
			} `json:"timings"`
		}
		if err := json.Unmarshal(c, &ref); err != nil {
			t.Fatal(err)
		}
		got, ok := DecodeTimings(c)
		if ok != (ref.Timings != nil) {
			t.Fatalf("%s: ok %v", c, ok)
		}
		if !ok {
			continue
		}
		seen++
		r := ref.Timings
		want := Timings{r.PromptN, r.PredictedN, r.CacheN, r.PromptMs, r.PredictedMs, r.PromptPerSecond, r.PredictedPerSecond}
		if got != want || got.PredictedPerSecond <= 0 {
			t.Errorf("%s: got %+v, want %+v", c, got, want)
		}
	}
	if seen == 0 {
		t.Fatal("no captured chunk carries timings")
	}
}

func FuzzAppendContent(f *testing.F) {
	f.Add([]byte(`{"choices":[{"delta":{"content":"a\u00e9\"\\"}}]}`))
	f.Add([]byte(`{"choices":[{"delta":{"content":"x","content":"y"}},{"delta":{}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Chunk
		if Decode(data, &c) != nil {
			return
		}
		body := AppendContent(nil, data)
		var got string
		if err := json.Unmarshal(append(append([]byte(`"`), body...), '"'), &got); err != nil {
			t.Fatalf("body %q of %s is no JSON string: %v", body, data, err)
		}
		// encoding/json keeps only the last of repeated keys; the scanner
		// appends each, so compare only where no key can repeat (an
		// escaped key could spell one of them).
		once := !bytes.Contains(data, []byte(`\u`))
		for _, k := range []string{`"choices"`, `"delta"`, `"content"`} {
			once = once && bytes.Count(data, []byte(k)) <= 1
		}
		if once {
			if want := contentOracle(t, data); got != want {
				t.Fatalf("%s: got %q, want %q", data, got, want)
			}
		}
	})
}
