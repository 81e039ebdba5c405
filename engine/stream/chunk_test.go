package stream

import (
	"errors"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want Chunk
	}{
		// vLLM
		{"vllm role chunk",
			`{"id":"chatcmpl-8f1","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
			Chunk{}},
		{"vllm content",
			`{"id":"chatcmpl-8f1","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}`,
			Chunk{Content: true}},
		{"vllm finish",
			`{"id":"chatcmpl-8f1","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length","stop_reason":null}]}`,
			Chunk{FinishReason: true, FinishLength: true}},
		{"vllm usage only",
			`{"id":"chatcmpl-8f1","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256}}`,
			Chunk{HasUsage: true, PromptTokens: 1024, CompletionTokens: 256}},
		{"vllm continuous usage",
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":7,"total_tokens":8,"completion_tokens":1}}`,
			Chunk{Content: true, HasUsage: true, PromptTokens: 7, CompletionTokens: 1}},
		{"vllm reasoning_content",
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"Qwen/QwQ-32B","choices":[{"index":0,"delta":{"reasoning_content":"Let me think"},"logprobs":null,"finish_reason":null}]}`,
			Chunk{Reasoning: true}},
		{"vllm reasoning",
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"openai/gpt-oss-20b","choices":[{"index":0,"delta":{"reasoning":"step"},"finish_reason":null}]}`,
			Chunk{Reasoning: true}},
		{"vllm error object", `{"object":"error","message":"The model does not exist.","type":"NotFoundError","param":null,"code":404}`,
			Chunk{Error: true, ErrorMessage: "The model does not exist."}},
		{"vllm streamed error",
			`{"error":{"object":"error","message":"Request timed out","type":"InternalServerError","param":null,"code":500}}`,
			Chunk{Error: true, ErrorMessage: "Request timed out"}},
		// SGLang
		{"sglang content",
			`{"id":"e1","object":"chat.completion.chunk","created":1718000000,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":"Hello","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
			Chunk{Content: true}},
		{"sglang reasoning",
			`{"id":"e1","object":"chat.completion.chunk","created":1,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":"Hmm","tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}`,
			Chunk{Reasoning: true}},
		{"sglang finish with usage",
			`{"id":"e1","object":"chat.completion.chunk","created":1,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":null,"reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":"length","matched_stop":null}],"usage":{"prompt_tokens":12,"total_tokens":268,"completion_tokens":256,"prompt_tokens_details":null}}`,
			Chunk{FinishReason: true, FinishLength: true, HasUsage: true, PromptTokens: 12, CompletionTokens: 256}},
		// llama.cpp
		{"llama.cpp role chunk",
			`{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1718000000,"id":"chatcmpl-Ab","model":"gpt-3.5-turbo","system_fingerprint":"b5900-abcdef","object":"chat.completion.chunk"}`,
			Chunk{}},
		{"llama.cpp content",
			`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":" world"}}],"created":1718000000,"id":"chatcmpl-Ab","model":"gpt-3.5-turbo","system_fingerprint":"b5900-abcdef","object":"chat.completion.chunk"}`,
			Chunk{Content: true}},
		{"llama.cpp final with timings",
			`{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1718000000,"id":"chatcmpl-Ab","model":"gpt-3.5-turbo","system_fingerprint":"b5900-abcdef","object":"chat.completion.chunk","usage":{"completion_tokens":256,"prompt_tokens":1030,"total_tokens":1286},"timings":{"prompt_n":1030,"prompt_ms":412.5,"prompt_per_token_ms":0.4,"prompt_per_second":2496.9,"predicted_n":256,"predicted_ms":2980.1,"predicted_per_token_ms":11.64,"predicted_per_second":85.9}}`,
			Chunk{FinishReason: true, FinishLength: true, HasUsage: true, PromptTokens: 1030, CompletionTokens: 256, HasTimings: true, TimingsPredictedN: 256, TimingsPromptN: 1030}},
		{"llama.cpp legacy completion text",
			`{"choices":[{"text":"Once","index":0,"logprobs":null,"finish_reason":null}],"created":1,"model":"m","object":"text_completion","id":"cmpl-1"}`,
			Chunk{Content: true}},
		{"llama.cpp error", `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
			Chunk{Error: true, ErrorMessage: "the request exceeds the available context size"}},
		// Ollama
		{"ollama content",
			`{"id":"chatcmpl-305","object":"chat.completion.chunk","created":1718000000,"model":"llama3.1:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Sure"},"finish_reason":null}]}`,
			Chunk{Content: true}},
		{"ollama thinking",
			`{"id":"chatcmpl-305","object":"chat.completion.chunk","created":1,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Okay, the user"},"finish_reason":null}]}`,
			Chunk{Reasoning: true}},
		{"ollama final with usage",
			`{"id":"chatcmpl-305","object":"chat.completion.chunk","created":1,"model":"llama3.1:8b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":26,"completion_tokens":256,"total_tokens":282}}`,
			Chunk{HasUsage: true, PromptTokens: 26, CompletionTokens: 256}},
		{"ollama error", `{"error":{"message":"model \"nope\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
			Chunk{Error: true, ErrorMessage: `model "nope" not found, try pulling it first`}},
		// OpenAI
		{"openai content",
			`{"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}],"usage":null}`,
			Chunk{Content: true}},
		{"openai finish", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"g","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
			Chunk{FinishReason: true}},
		{"openai usage", `{"id":"c","object":"chat.completion.chunk","created":1,"model":"g","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
			Chunk{HasUsage: true, PromptTokens: 9, CompletionTokens: 12, HasCached: true}},
		{"cached tokens", `{"choices":[],"usage":{"prompt_tokens":700,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":688}}}`,
			Chunk{HasUsage: true, PromptTokens: 700, CompletionTokens: 3, HasCached: true, CachedTokens: 688}},
		{"cached tokens null", `{"usage":{"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":null}}}`,
			Chunk{HasUsage: true, CompletionTokens: 3}},
		{"prompt details not an object", `{"usage":{"completion_tokens":3,"prompt_tokens_details":null}}`,
			Chunk{HasUsage: true, CompletionTokens: 3}},
		{"later usage replaces cached", `{"usage":{"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":5}},"usage":{"completion_tokens":4}}`,
			Chunk{HasUsage: true, CompletionTokens: 4}},
		{"llama.cpp cache and drafts", `{"timings":{"cache_n":632,"prompt_n":6,"predicted_n":64,"draft_n":47,"draft_n_accepted":45}}`,
			Chunk{HasTimings: true, TimingsCacheN: 632, HasCacheN: true, TimingsPromptN: 6, TimingsPredictedN: 64,
				HasDraft: true, TimingsDraftN: 47, TimingsDraftAccepted: 45}},
		// Edges
		{"escaped newline is content", `{"choices":[{"delta":{"content":"\n"}}]}`, Chunk{Content: true}},
		{"unicode escape is content", `{"choices":[{"delta":{"content":"\u00e9"}}]}`, Chunk{Content: true}},
		{"non-string content", `{"choices":[{"delta":{"content":[{"type":"text","text":"x"}]}}]}`, Chunk{}},
		{"content in second choice", `{"choices":[{"delta":{"content":""}},{"delta":{"content":"b"}}]}`, Chunk{Content: true}},
		{"non-object choice ignored", `{"choices":[1,"x",null,{"delta":{"content":"b"}}]}`, Chunk{Content: true}},
		{"choices null", `{"choices":null}`, Chunk{}},
		{"delta null", `{"choices":[{"delta":null,"finish_reason":null}]}`, Chunk{}},
		{"escaped key", `{"ch\u006fices":[{"d\u0065lta":{"cont\u0065nt":"x"}}]}`, Chunk{Content: true}},
		{"key case matters", `{"Choices":[{"delta":{"content":"x"}}]}`, Chunk{}},
		{"nested content not top-level", `{"data":{"choices":[{"delta":{"content":"x"}}]}}`, Chunk{}},
		{"last duplicate key wins", `{"choices":[{"delta":{"content":"x","content":""}}]}`, Chunk{}},
		{"last duplicate choices wins", `{"choices":[{"delta":{"content":"x"}}],"choices":[]}`, Chunk{}},
		{"empty finish reason", `{"choices":[{"finish_reason":""}]}`, Chunk{}},
		{"non-string finish reason", `{"choices":[{"finish_reason":1}]}`, Chunk{FinishReason: true}},
		{"escaped length", `{"choices":[{"finish_reason":"\u006cength"}]}`, Chunk{FinishReason: true, FinishLength: true}},
		{"length, then stop", `{"choices":[{"finish_reason":"length","finish_reason":"stop"}]}`, Chunk{FinishReason: true}},
		{"usage null", `{"usage":null}`, Chunk{}},
		{"usage without completion tokens", `{"usage":{"prompt_tokens":5}}`, Chunk{PromptTokens: 5}},
		{"usage completion null", `{"usage":{"prompt_tokens":5,"completion_tokens":null}}`, Chunk{PromptTokens: 5}},
		{"usage float count", `{"usage":{"prompt_tokens":12.0,"completion_tokens":2.56e2}}`,
			Chunk{HasUsage: true, PromptTokens: 12, CompletionTokens: 256}},
		{"usage zero", `{"usage":{"prompt_tokens":0,"completion_tokens":-0}}`, Chunk{HasUsage: true}},
		{"usage max int", `{"usage":{"completion_tokens":9223372036854775807}}`,
			Chunk{HasUsage: true, CompletionTokens: 9223372036854775807}},
		{"error string", `{"error":"upstream timed out"}`, Chunk{Error: true, ErrorMessage: "upstream timed out"}},
		{"error null", `{"error":null,"choices":[{"delta":{"content":"a"}}]}`, Chunk{Content: true}},
		{"error false", `{"error":false}`, Chunk{}},
		{"error without message", `{"error":{"code":500}}`, Chunk{Error: true}},
		{"error number", `{"error":500}`, Chunk{Error: true}},
		{"error message escapes", `{"error":{"message":"line\none \u263a"}}`, Chunk{Error: true, ErrorMessage: "line\none ☺"}},
		{"object error escaped", `{"object":"err\u006fr","message":"m"}`, Chunk{Error: true, ErrorMessage: "m"}},
		{"object chunk", `{"object":"chat.completion.chunk","message":"m"}`, Chunk{}},
		{"timings null", `{"timings":null}`, Chunk{}},
		{"timings empty", `{"timings":{}}`, Chunk{HasTimings: true}},
		{"whitespace everywhere", " \t\r\n{ \"choices\" : [ { \"delta\" : { \"content\" : \"x\" } } ] } \n", Chunk{Content: true}},
		{"deep nesting skipped", `{"x":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, Chunk{}},
		{"empty object", `{}`, Chunk{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Chunk{Content: true, ErrorMessage: "stale", TimingsPromptN: 9} // must be overwritten
			if err := Decode([]byte(tt.in), &got); err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("Decode() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeErrorMessageTruncated(t *testing.T) {
	t.Parallel()
	// 199 ASCII bytes then a 3-byte rune: the cut must not split the rune.
	msg := strings.Repeat("a", 199) + "☺☺"
	var c Chunk
	if err := Decode([]byte(`{"error":{"message":"`+msg+`"}}`), &c); err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if want := strings.Repeat("a", 199); c.ErrorMessage != want {
		t.Errorf("ErrorMessage = %q (%d bytes), want the first 199 bytes", c.ErrorMessage, len(c.ErrorMessage))
	}
	long := strings.Repeat("b", 5000)
	if err := Decode([]byte(`{"error":"`+long+`"}`), &c); err != nil {
		t.Fatalf("Decode() error = %v", err)
	}
	if len(c.ErrorMessage) != maxErrorMessage {
		t.Errorf("len(ErrorMessage) = %d, want %d", len(c.ErrorMessage), maxErrorMessage)
	}
}

func TestDecodeMalformed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{"empty", ``},
		{"whitespace", " \n"},
		{"truncated", `{"choices":[{"delta":{"content":"x"}}]`},
		{"truncated string", `{"choices":[{"delta":{"content":"x`},
		{"truncated key", `{"cho`},
		{"truncated after colon", `{"a":`},
		{"bad escape", `{"choices":[{"delta":{"content":"\x"}}]}`},
		{"short unicode escape", `{"a":"\u12"}`},
		{"bad unicode escape", `{"a":"\u12g4"}`},
		{"raw control char", "{\"a\":\"x\ty\"}"},
		{"trailing comma object", `{"a":1,}`},
		{"trailing comma array", `{"a":[1,]}`},
		{"extra close", `{"a":1}}`},
		{"trailing garbage", `{"a":1} x`},
		{"two objects", `{}{}`},
		{"bare array", `[{"choices":[]}]`},
		{"bare string", `"data"`},
		{"bare number", `12`},
		{"done marker", `[DONE]`},
		{"single quotes", `{'a':1}`},
		{"unquoted key", `{a:1}`},
		{"missing colon", `{"a" 1}`},
		{"missing comma", `{"a":1 "b":2}`},
		{"leading zero", `{"a":01}`},
		{"bare minus", `{"a":-}`},
		{"dot without digits", `{"a":1.}`},
		{"exponent without digits", `{"a":1e}`},
		{"plus sign", `{"a":+1}`},
		{"bad literal", `{"a":tru}`},
		{"capital literal", `{"a":True}`},
		{"nan", `{"a":NaN}`},
		{"comment", `{"a":1 /* x */}`},
		{"too deep", `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`},
		{"bad in usage", `{"usage":{"completion_tokens":12x}}`},
		{"bad in skipped field", `{"model":"m","id":[1,2,,3],"choices":[]}`},
		{"nul byte", "{\"a\":1}\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Chunk{Content: true}
			err := Decode([]byte(tt.in), &c)
			if !errors.Is(err, ErrMalformedChunk) {
				t.Fatalf("Decode(%.40q) error = %v, want ErrMalformedChunk", tt.in, err)
			}
			if c != (Chunk{}) {
				t.Errorf("chunk after error = %+v, want zero", c)
			}
		})
	}
}

func TestDecodeBadCount(t *testing.T) {
	t.Parallel()
	tests := []string{
		`{"usage":{"completion_tokens":-1}}`,
		`{"usage":{"completion_tokens":12.5}}`,
		`{"usage":{"prompt_tokens":"12","completion_tokens":1}}`,
		`{"usage":{"completion_tokens":9223372036854775808}}`,
		`{"usage":{"completion_tokens":1e400}}`,
		`{"usage":{"completion_tokens":true}}`,
		`{"timings":{"predicted_n":-5}}`,
		`{"timings":{"prompt_n":{}}}`,
		`{"timings":{"cache_n":-1}}`,
		`{"timings":{"draft_n_accepted":1.5}}`,
		`{"usage":{"prompt_tokens_details":{"cached_tokens":"7"}}}`,
	}
	for _, in := range tests {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			var c Chunk
			if err := Decode([]byte(in), &c); !errors.Is(err, ErrBadCount) {
				t.Errorf("Decode() error = %v, want ErrBadCount", err)
			}
		})
	}
	// A syntax error later in the document wins over a bad count.
	var c Chunk
	if err := Decode([]byte(`{"usage":{"completion_tokens":-1},}`), &c); !errors.Is(err, ErrMalformedChunk) {
		t.Errorf("Decode() error = %v, want ErrMalformedChunk", err)
	}
}

func TestDecodeAllocs(t *testing.T) {
	chunks := []string{
		`{"id":"chatcmpl-8f1","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[{"index":0,"delta":{"content":" the \"quoted\" \u00e9"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256}}`,
		`{"choices":[{"finish_reason":"length","index":0,"delta":{}}],"timings":{"prompt_n":10,"predicted_n":256,"predicted_ms":12.5}}`,
		`{"ch\u006fices":[{"delta":{"reasoning":"x"}}]}`,
	}
	for _, in := range chunks {
		data := []byte(in)
		var c Chunk
		allocs := testing.AllocsPerRun(100, func() {
			if err := Decode(data, &c); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Decode(%.40s…) allocates %v times, want 0", in, allocs)
		}
	}
}
