package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCountWords(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", " ", "one", " two  words ", "tab\tnew\nline\r\nend", "ünï cödé\u00a0nbsp", "a\u3000b"} {
		if got, want := countWords(s), len(strings.Fields(s)); got != want {
			t.Errorf("countWords(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestPromptTokens(t *testing.T) {
	t.Parallel()
	s, url := startSim(t, Config{RecordTruth: true, TokenInterval: 2e6})

	// Calibration-style: max_tokens 1, usage asked for.
	for _, words := range []int{10, 500, 1013} {
		res := mustStream(t, url, chatBody("kovara-sim-8b", int64(words), words, streamOpts(1, true)))
		sum := summarize(t, res.lines)
		if res.status != 200 || len(sum.texts) != 1 || sum.usage == nil {
			t.Fatalf("words %d: status %d, %+v", words, res.status, sum)
		}
		if u := *sum.usage; u.PromptTokens != words+11 || u.CompletionTokens != 1 || u.TotalTokens != words+12 {
			t.Errorf("words %d: usage %+v", words, u)
		}
		if tr, ok := s.Truth(int64(words)); !ok || tr.PromptTokens != words+11 || tr.CompletionTokens != 1 || len(tr.Chunks) != 1 {
			t.Errorf("words %d: truth %+v", words, tr)
		}
	}

	// Every message counts, array content counts its text parts, and the
	// request number comes from the last user message.
	body, _ := json.Marshal(map[string]any{
		"model": "kovara-sim-8b",
		"messages": []map[string]any{
			{"role": "system", "content": "be brief please"},
			{"role": "user", "content": "Request 1: earlier turn"},
			{"role": "assistant", "content": nil},
			{"role": "user", "content": []map[string]any{
				{"type": "text", "text": "Request 77: two\tmore"},
				{"type": "image_url", "image_url": map[string]string{"url": "data:x"}},
				{"type": "text", "text": "  last  "},
			}},
		},
		"max_tokens": 2, "ignore_eos": true,
	})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage *usageJSON
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	// 3 + 4 + 0 + (4 + 1) words
	if out.Usage == nil || out.Usage.PromptTokens != 12+11 || out.Usage.CompletionTokens != 2 {
		t.Errorf("usage %+v", out.Usage)
	}
	if _, ok := s.Truth(77); !ok {
		t.Error("request number 77 not found in the last user message")
	}

	// No request number: N is -1. A custom overhead is honoured.
	s2, url2 := startSim(t, Config{RecordTruth: true, TemplateOverhead: -1, TokenInterval: 2e6})
	body, _ = json.Marshal(map[string]any{
		"model": "kovara-sim-8b", "max_tokens": 1,
		"messages": []map[string]any{{"role": "user", "content": "no number here"}},
	})
	resp, err = http.Post(url2+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if out.Usage == nil || out.Usage.PromptTokens != 3 {
		t.Errorf("usage without overhead %+v", out.Usage)
	}
	if tr, ok := s2.Truth(-1); !ok || tr.N != -1 || tr.Stream {
		t.Errorf("unnumbered truth %+v %v", tr, ok)
	}
}

func TestStreamShape(t *testing.T) {
	t.Parallel()
	for _, p := range []Personality{VLLM, LlamaCpp, Ollama, Strict} {
		t.Run(string(p), func(t *testing.T) {
			t.Parallel()
			s, url := startSim(t, Config{Personality: p, RecordTruth: true, TokenInterval: 2e6})
			opts := streamOpts(8, p != Strict)
			res := mustStream(t, url, chatBody("kovara-sim-8b", 5, 40, opts))
			if res.status != 200 || res.err != nil {
				t.Fatalf("status %d err %v body %s", res.status, res.err, res.body)
			}
			if ct := res.header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			sum := summarize(t, res.lines)
			// Ollama ignores ignore_eos, so it stops naturally.
			want, reason := 8, "length"
			if p == Ollama || p == Strict {
				want, reason = len(sum.texts), "stop"
				if want < 4 || want > 7 {
					t.Errorf("natural stop gave %d tokens, want 4..7", want)
				}
			}
			if sum.roleChunks != 1 || len(sum.texts) != want || sum.badJSON != 0 || sum.errorEvents != 0 {
				t.Errorf("summary %+v", sum)
			}
			if first := res.lines[0].data; !strings.Contains(first, `"role":"assistant"`) || !strings.Contains(first, `"content":""`) {
				t.Errorf("first chunk is not role-only: %s", first)
			}
			if len(sum.finish) != 1 || sum.finish[0] != reason {
				t.Errorf("finish reasons %v, want [%s]", sum.finish, reason)
			}
			if sum.usageChunks != 1 || sum.usage.CompletionTokens != want || sum.usage.PromptTokens != 51 {
				t.Errorf("usage %+v (%d usage chunks)", sum.usage, sum.usageChunks)
			}
			if !sum.done || sum.afterDone != 0 || res.lines[len(res.lines)-1].data != "[DONE]" {
				t.Errorf("[DONE] missing or not last")
			}
			if p == LlamaCpp {
				if sum.timings == nil || sum.timings["predicted_n"] != 8 || sum.timings["prompt_n"] != 51 || sum.timings["predicted_per_second"] <= 0 {
					t.Errorf("timings %v", sum.timings)
				}
			}
			if p == Strict && !strings.Contains(res.lines[1].data, `"usage":null`) {
				t.Errorf("strict chunks should carry usage:null when usage was asked for: %s", res.lines[1].data)
			}
			for _, l := range res.lines {
				if l.data != "[DONE]" && !strings.Contains(l.data, `"object":"chat.completion.chunk"`) {
					t.Errorf("chunk without object: %s", l.data)
				}
			}
			tr, ok := s.Truth(5)
			if !ok || len(tr.Chunks) != want || tr.CompletionTokens != want || !tr.Completed || tr.FinishReason != reason || tr.Status != 200 {
				t.Errorf("truth %+v", tr)
			}
		})
	}
}

func TestOutputLength(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{TokenInterval: 1e6, NoUsage: true})

	// No usage ever with NoUsage, even when asked for.
	sum := summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", 1, 10, streamOpts(12, true))).lines)
	if sum.usage != nil || sum.usageChunks != 0 || len(sum.texts) != 12 || !sum.done {
		t.Errorf("NoUsage: %+v", sum)
	}
	// Without include_usage, no usage chunk either.
	sum = summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", 2, 10, map[string]any{"stream": true, "max_tokens": 3, "ignore_eos": true})).lines)
	if sum.usage != nil || len(sum.texts) != 3 {
		t.Errorf("no include_usage: %+v", sum)
	}
	// Without ignore_eos the default natural stop is shorter than max and
	// deterministic.
	for n := int64(10); n < 16; n++ {
		a := summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", n, 10, streamOpts(20, false))).lines)
		b := summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", n, 10, streamOpts(20, false))).lines)
		if len(a.texts) < 10 || len(a.texts) > 19 || len(a.texts) != len(b.texts) || a.finish[0] != "stop" {
			t.Errorf("request %d: natural stop %d then %d (%v)", n, len(a.texts), len(b.texts), a.finish)
		}
	}
	// max_tokens absent: 16.
	sum = summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", 3, 10, map[string]any{"stream": true, "ignore_eos": true})).lines)
	if len(sum.texts) != 16 {
		t.Errorf("default max_tokens gave %d", len(sum.texts))
	}
	// max_completion_tokens wins over max_tokens.
	sum = summarize(t, mustStream(t, url, chatBody("kovara-sim-8b", 4, 10, map[string]any{"stream": true, "ignore_eos": true, "max_tokens": 9, "max_completion_tokens": 2})).lines)
	if len(sum.texts) != 2 {
		t.Errorf("max_completion_tokens gave %d", len(sum.texts))
	}

	// A configured natural stop.
	_, url2 := startSim(t, Config{TokenInterval: 1e6, NaturalStop: func(n int64) int { return int(n) }})
	sum = summarize(t, mustStream(t, url2, chatBody("kovara-sim-8b", 3, 10, streamOpts(10, false))).lines)
	if len(sum.texts) != 3 || sum.finish[0] != "stop" || sum.usage.CompletionTokens != 3 {
		t.Errorf("NaturalStop(3): %+v", sum)
	}
	sum = summarize(t, mustStream(t, url2, chatBody("kovara-sim-8b", 30, 10, streamOpts(10, false))).lines)
	if len(sum.texts) != 10 || sum.finish[0] != "length" {
		t.Errorf("NaturalStop beyond max: %+v", sum)
	}
}

func TestStrictPersonality(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{Personality: Strict, TokenInterval: 1e6})
	res := mustStream(t, url, chatBody("kovara-sim-8b", 1, 10, streamOpts(4, true)))
	if res.status != 400 {
		t.Fatalf("ignore_eos: status %d", res.status)
	}
	if e := decodeError(t, res.body); e.Error.Message != "Unrecognized request argument supplied: ignore_eos" || e.Error.Type != "invalid_request_error" {
		t.Errorf("error %+v", e)
	}
	opts := streamOpts(4, true)
	opts["chat_template_kwargs"] = map[string]any{"enable_thinking": false}
	res = mustStream(t, url, chatBody("kovara-sim-8b", 1, 10, opts))
	if e := decodeError(t, res.body); res.status != 400 || e.Error.Message != "Unrecognized request arguments supplied: chat_template_kwargs, ignore_eos" {
		t.Errorf("two unknown fields: %d %+v", res.status, e)
	}
	res = mustStream(t, url, chatBody("kovara-sim-8b", 1, 10, streamOpts(4, false)))
	if sum := summarize(t, res.lines); res.status != 200 || !sum.done || sum.usage == nil {
		t.Errorf("without ignore_eos: %d %+v", res.status, sum)
	}
	// The strict server wants a model.
	res = mustStream(t, url, chatBody("", 1, 10, streamOpts(4, false)))
	if res.status != 400 {
		t.Errorf("missing model: %d", res.status)
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	s, url := startSim(t, Config{Personality: LlamaCpp, RecordTruth: true, TokenInterval: 1e6})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json",
		bytes.NewReader(chatBody("kovara-sim-8b", 9, 20, map[string]any{"max_tokens": 6, "ignore_eos": true})))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Message      struct{ Role, Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage   *usageJSON
		Timings map[string]float64
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	if out.Object != "chat.completion" || len(out.Choices) != 1 || out.Choices[0].Message.Role != "assistant" ||
		len(strings.Fields(out.Choices[0].Message.Content)) != 6 || out.Choices[0].FinishReason != "length" {
		t.Errorf("body %+v", out)
	}
	if out.Usage == nil || out.Usage.PromptTokens != 31 || out.Usage.CompletionTokens != 6 || out.Timings["predicted_n"] != 6 {
		t.Errorf("usage %+v timings %v", out.Usage, out.Timings)
	}
	if tr, _ := s.Truth(9); len(tr.Chunks) != 6 || tr.Stream || !tr.Completed {
		t.Errorf("truth %+v", tr)
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{Models: []string{"a", "b"}, TokenInterval: 1e6, bodyLimit: 4096})
	post := func(body string) (int, errorBody) {
		t.Helper()
		resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, decodeError(t, b)
	}
	if code, e := post(string(chatBody("nope", 1, 5, nil))); code != 404 || !strings.Contains(e.Error.Message, "nope") {
		t.Errorf("unknown model: %d %+v", code, e)
	}
	if code, _ := post(`{"model":"a","messages":[`); code != 400 {
		t.Errorf("broken JSON: %d", code)
	}
	if code, _ := post(`{"model":"a","messages":[]}`); code != 400 {
		t.Errorf("no messages: %d", code)
	}
	if code, _ := post(string(chatBody("a", 1, 5, map[string]any{"max_tokens": 0}))); code != 400 {
		t.Errorf("max_tokens 0: %d", code)
	}
	if code, _ := post(string(chatBody("a", 1, 5, map[string]any{"max_tokens": 40000}))); code != 400 {
		t.Errorf("beyond the context: %d", code)
	}
	if code, _ := post(`{"model":"a","messages":[{"role":"user","content":5}]}`); code != 400 {
		t.Errorf("numeric content: %d", code)
	}
	big := `{"model":"a","messages":[{"role":"user","content":"` + strings.Repeat("w ", 4096) + `"}]}`
	if code, _ := post(big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("body over the limit: %d", code)
	}
	resp, err := http.Get(url + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET chat: %d", resp.StatusCode)
	}
	// vLLM falls back to the first model when none is named.
	if res := mustStream(t, url, chatBody("", 1, 5, streamOpts(2, true))); res.status != 200 || !strings.Contains(res.lines[0].data, `"model":"a"`) {
		t.Errorf("no model: %d %v", res.status, res.lines)
	}
}
