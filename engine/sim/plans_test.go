package sim

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricValue reads the first sample of name from /metrics.
func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	v := metricNames(t, url)[name]
	if len(v) == 0 {
		t.Fatalf("%s missing", name)
	}
	f := strings.Fields(v[0])
	x, err := strconv.ParseFloat(f[len(f)-1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// Speculative decoding: every drafting step is counted; tokens − 1 per
// request (the first comes from prefill) are split into steps of accepted
// + 1. As llama.cpp, a step drafts no more than the answer has room for,
// and a last token with no room left is a plain step.
func TestSpecDecodeCounters(t *testing.T) {
	t.Parallel()
	sd := SpecDecode{DraftTokens: 3, Acceptance: 0.8}
	_, url := startSim(t, Config{Models: []string{"m"}, TokenInterval: time.Millisecond, SpecDecode: &sd})
	const reqs, tokens = 6, 200
	for i := int64(0); i < reqs; i++ {
		res := mustStream(t, url, chatBody("m", i, 20, streamOpts(tokens, true)))
		if s := summarize(t, res.lines); len(s.texts) != tokens || s.usage.CompletionTokens != tokens {
			t.Fatalf("request %d: %d texts, usage %+v", i, len(s.texts), s.usage)
		}
	}
	drafts := metricValue(t, url, "vllm:spec_decode_num_drafts_total")
	draftTok := metricValue(t, url, "vllm:spec_decode_num_draft_tokens_total")
	acc := metricValue(t, url, "vllm:spec_decode_num_accepted_tokens_total")
	if draftTok > 3*drafts || draftTok < 3*drafts-2*reqs || acc+drafts > reqs*(tokens-1) || acc+drafts < reqs*(tokens-2) {
		t.Fatalf("drafts %v, draft tokens %v, accepted %v: want draft tokens 3 × drafts (less the last steps' room) and accepted + drafts = %d (less a plain last step each)",
			drafts, draftTok, acc, reqs*(tokens-1))
	}
	rate := acc / draftTok
	if math.Abs(rate-sd.ExpectedRate()) > 0.05 {
		t.Errorf("rate %.3f, want %.3f", rate, sd.ExpectedRate())
	}
	if math.Abs(sd.ExpectedLength()-(1+0.8+0.64+0.512)) > 1e-12 {
		t.Errorf("ExpectedLength %v", sd.ExpectedLength())
	}
	perPos := metricNames(t, url)["vllm:spec_decode_num_accepted_tokens_per_pos_total"]
	if len(perPos) != 3 || !strings.Contains(perPos[0], `position="0"`) {
		t.Errorf("per position %v", perPos)
	}
	// Without SpecDecode there are no such counters.
	_, plain := startSim(t, Config{})
	if _, ok := metricNames(t, plain)["vllm:spec_decode_num_drafts_total"]; ok {
		t.Error("spec counters without speculative decoding")
	}
}

func TestRefuseTemplateKwargsAndThinking(t *testing.T) {
	t.Parallel()
	kw := func(on bool) map[string]any {
		m := streamOpts(8, false)
		m["chat_template_kwargs"] = map[string]any{"enable_thinking": on}
		return m
	}
	_, refusing := startSim(t, Config{Models: []string{"m"}, RefuseTemplateKwargs: true, TokenInterval: time.Millisecond})
	res := mustStream(t, refusing, chatBody("m", 1, 10, kw(false)))
	if res.status != 400 || !strings.Contains(decodeError(t, res.body).Error.Message, "chat_template_kwargs") {
		t.Errorf("refusing server: %d %s", res.status, res.body)
	}
	if res := mustStream(t, refusing, chatBody("m", 1, 10, streamOpts(8, false))); res.status != 200 {
		t.Errorf("without the field: %d", res.status)
	}

	_, thinker := startSim(t, Config{Models: []string{"m"}, ReasoningTokens: 3, TokenInterval: time.Millisecond, NaturalStop: func(int64) int { return 100 }})
	reasoning := func(opts map[string]any) (int, int) {
		res := mustStream(t, thinker, chatBody("m", 1, 10, opts))
		r, c := 0, 0
		for _, l := range res.lines {
			var ch struct {
				Choices []struct {
					Delta struct {
						Content   string `json:"content"`
						Reasoning string `json:"reasoning_content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(l.data), &ch) != nil {
				continue
			}
			for _, x := range ch.Choices {
				if x.Delta.Reasoning != "" {
					r++
				}
				if x.Delta.Content != "" {
					c++
				}
			}
		}
		return r, c
	}
	if r, c := reasoning(streamOpts(8, false)); r != 3 || c != 5 {
		t.Errorf("thinking on: %d reasoning, %d content chunks, want 3 and 5", r, c)
	}
	if r, c := reasoning(kw(false)); r != 0 || c != 8 {
		t.Errorf("thinking off: %d reasoning, %d content chunks, want 0 and 8", r, c)
	}
}

func TestSGLangPersonality(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{Personality: SGLang, Models: []string{"m"}, SpecDecode: &SpecDecode{}, TokenInterval: time.Millisecond})
	var info struct {
		Version       string `json:"version"`
		ContextLength int    `json:"context_length"`
		ModelPath     string `json:"model_path"`
	}
	if r := getJSON(t, url+"/get_server_info", &info); r.StatusCode != 200 || info.Version != "0.5.2" || info.ContextLength != 32768 || info.ModelPath != "m" {
		t.Errorf("/get_server_info: %d %+v", r.StatusCode, info)
	}
	res := mustStream(t, url, chatBody("m", 2, 10, streamOpts(30, true)))
	if s := summarize(t, res.lines); len(s.texts) != 30 || !s.done {
		t.Fatalf("stream: %+v", s)
	}
	names := metricNames(t, url)
	for _, n := range []string{"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:spec_accept_length"} {
		if len(names[n]) == 0 {
			t.Errorf("%s missing", n)
		}
	}
	if l := metricValue(t, url, "sglang:spec_accept_length"); l <= 1 || l > 4 {
		t.Errorf("accept length %v", l)
	}
}

// Unnumbered prompts stop at a length that depends on their text: the same
// text always at the same length, different texts at different ones.
func TestNaturalStopByText(t *testing.T) {
	t.Parallel()
	_, url := startSim(t, Config{Models: []string{"m"}, TokenInterval: 100 * time.Microsecond})
	length := func(text string) int {
		body, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": text}},
			"max_tokens": 400, "stream": true, "stream_options": map[string]any{"include_usage": true}})
		return summarize(t, mustStream(t, url, body).lines).usage.CompletionTokens
	}
	seen := map[int]bool{}
	for i := range 6 {
		text := "tell me about item " + strconv.Itoa(i)
		a, b := length(text), length(text)
		if a != b || a < 200 || a >= 400 {
			t.Errorf("%q: %d then %d", text, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 4 {
		t.Errorf("lengths %v: too few distinct", seen)
	}
}
