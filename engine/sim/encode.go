package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// vocabulary is what the simulated model says: one token per entry, each
// with its leading space and nothing that needs JSON escaping.
var vocabulary = func() [][]byte {
	list := []string{
		" the", " server", " answers", " every", " request", " with", " a",
		" steady", " stream", " of", " small", " words", " while", " the",
		" clock", " keeps", " time", " and", " each", " token", " lands",
		" on", " its", " own", " line", " so", " that", " latency", " can",
		" be", " measured", " fairly", " hello", " world", " again",
	}
	out := make([][]byte, len(list))
	for i, w := range list {
		out[i] = []byte(w)
	}
	return out
}()

// Delta kinds of a streamed chunk.
const (
	deltaRole      = iota // the opening chunk: role, empty content
	deltaText             // one token of text
	deltaEnd              // a closing chunk without text
	deltaReasoning        // one token of reasoning text
)

// encoder builds one request's SSE lines by appending into a caller's
// buffer; everything that does not change per token is rendered once.
type encoder struct {
	p Personality
	// top is `data: {` plus the identity fields, without a trailing comma
	// (all but llama.cpp, which puts the identity after "choices").
	top []byte
	// head is top plus the opening of choices[0].delta.
	head []byte
	// tail is llama.cpp's identity fields, starting with a comma.
	tail      []byte
	usageNull bool // OpenAI sends "usage":null on every chunk when usage was asked for
	// cacheReport: vLLM's and SGLang's usage says the cached tokens
	// (Config.CacheReport).
	cacheReport bool
}

func newEncoder(p Personality, id, model string, created int64, fingerprint string, usageNull bool) *encoder {
	if p == SGLang {
		p = VLLM // the same chunk shapes
	}
	e := &encoder{p: p, usageNull: usageNull && p == Strict}
	m := jsonBytes(model)
	ts := strconv.FormatInt(created, 10)
	if p == LlamaCpp {
		e.tail = fmt.Appendf(nil, `,"created":%s,"id":"%s","model":%s,"system_fingerprint":"%s","object":"chat.completion.chunk"`, ts, id, m, fingerprint)
		return e
	}
	e.top = fmt.Appendf(nil, `data: {"id":"%s","object":"chat.completion.chunk","created":%s,"model":%s`, id, ts, m)
	switch p {
	case Ollama:
		e.top = append(e.top, `,"system_fingerprint":"fp_ollama"`...)
	case Strict:
		e.top = append(e.top, `,"service_tier":"default","system_fingerprint":null`...)
	}
	e.head = append(append([]byte(nil), e.top...), `,"choices":[{"index":0,"delta":{`...)
	return e
}

// finishOnLastToken reports whether the last token's chunk carries
// finish_reason (vLLM) instead of a separate closing chunk (the rest).
func (e *encoder) finishOnLastToken() bool { return e.p == VLLM }

func (e *encoder) delta(b []byte, kind int, word []byte) []byte {
	switch kind {
	case deltaRole:
		if e.p == Strict {
			return append(b, `"role":"assistant","content":"","refusal":null`...)
		}
		return append(b, `"role":"assistant","content":""`...)
	case deltaReasoning:
		if e.p == Ollama {
			b = append(b, `"role":"assistant","content":"","reasoning":"`...)
		} else {
			b = append(b, `"reasoning_content":"`...)
		}
		b = append(b, word...)
		return append(b, '"')
	case deltaText:
		if e.p == Ollama {
			b = append(b, `"role":"assistant","content":"`...)
		} else {
			b = append(b, `"content":"`...)
		}
		b = append(b, word...)
		return append(b, '"')
	default:
		switch e.p {
		case VLLM:
			return append(b, `"content":""`...)
		case Ollama:
			return append(b, `"role":"assistant","content":""`...)
		}
		return b
	}
}

func appendFinish(b []byte, finish string) []byte {
	if finish == "" {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = append(b, finish...)
	return append(b, '"')
}

// chunk appends one complete `data: {...}\n\n` line. extra, if any, is
// raw JSON members (starting with a comma) added at the top level.
func (e *encoder) chunk(b []byte, kind int, word []byte, finish string, extra []byte) []byte {
	if e.p == LlamaCpp {
		b = append(b, `data: {"choices":[{"finish_reason":`...)
		b = appendFinish(b, finish)
		b = append(b, `,"index":0,"delta":{`...)
		b = e.delta(b, kind, word)
		b = append(b, "}}]"...)
		b = append(b, e.tail...)
		b = append(b, extra...)
		return append(b, "}\n\n"...)
	}
	b = append(b, e.head...)
	b = e.delta(b, kind, word)
	b = append(b, "},"...)
	if e.p != Ollama {
		b = append(b, `"logprobs":null,`...)
	}
	b = append(b, `"finish_reason":`...)
	b = appendFinish(b, finish)
	if e.p == VLLM && finish != "" {
		b = append(b, `,"stop_reason":null`...)
	}
	b = append(b, "}]"...)
	if e.usageNull {
		b = append(b, `,"usage":null`...)
	}
	b = append(b, extra...)
	return append(b, "}\n\n"...)
}

// usage appends the usage-only chunk (empty choices).
func (e *encoder) usage(b []byte, prompt, cached, completion int, extra []byte) []byte {
	if e.p == LlamaCpp {
		b = append(b, `data: {"choices":[]`...)
		b = append(b, e.tail...)
	} else {
		b = append(b, e.top...)
		b = append(b, `,"choices":[]`...)
	}
	b = append(b, `,"usage":`...)
	if e.p == VLLM && !e.cacheReport {
		cached = 0 // vLLM and SGLang say nothing of it then
	}
	b = appendUsage(b, e.p, prompt, cached, completion)
	b = append(b, extra...)
	return append(b, "}\n\n"...)
}

func appendUsage(b []byte, p Personality, prompt, cached, completion int) []byte {
	total := prompt + completion
	switch p {
	case LlamaCpp: // as llama-server b9749 writes it
		b = append(b, `{"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(completion), 10)
		b = append(b, `,"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(cached), 10)
		return append(b, "}}"...)
	case VLLM:
		b = append(b, `{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(completion), 10)
		if cached > 0 {
			// vLLM and SGLang leave the member out when nothing came
			// from cache, even with the report on.
			b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
			b = strconv.AppendInt(b, int64(cached), 10)
			b = append(b, '}')
		}
		return append(b, '}')
	default:
		// Ollama (0.24) counts the cached tokens in prompt_tokens and
		// says nowhere how many there were (ollama/ollama#8008); the
		// OpenAI API says it in prompt_tokens_details.
		b = append(b, `{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(prompt), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(completion), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(total), 10)
		if p == Strict {
			b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
			b = strconv.AppendInt(b, int64(cached), 10)
			b = append(b, `,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}`...)
		}
		return append(b, '}')
	}
}

// appendTimings appends llama.cpp's `,"timings":{...}` member: cache_n
// prompt tokens came from its cache and prompt_n were evaluated; draft_n
// and draft_n_accepted follow when draftN is not negative (speculative
// decoding).
func appendTimings(b []byte, prompt, cached int, promptMS float64, predicted int, predictedMS float64, draftN, draftAccepted int) []byte {
	evaluated := prompt - cached
	per := func(n int, ms float64) (perToken, perSecond float64) {
		if n > 0 {
			perToken = ms / float64(n)
		}
		if ms > 0 {
			perSecond = float64(n) * 1000 / ms
		}
		return
	}
	f := func(b []byte, v float64) []byte { return strconv.AppendFloat(b, v, 'f', 3, 64) }
	ppt, pps := per(evaluated, promptMS)
	gpt, gps := per(predicted, predictedMS)
	b = append(b, `,"timings":{"cache_n":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	b = append(b, `,"prompt_n":`...)
	b = strconv.AppendInt(b, int64(evaluated), 10)
	b = append(b, `,"prompt_ms":`...)
	b = f(b, promptMS)
	b = append(b, `,"prompt_per_token_ms":`...)
	b = f(b, ppt)
	b = append(b, `,"prompt_per_second":`...)
	b = f(b, pps)
	b = append(b, `,"predicted_n":`...)
	b = strconv.AppendInt(b, int64(predicted), 10)
	b = append(b, `,"predicted_ms":`...)
	b = f(b, predictedMS)
	b = append(b, `,"predicted_per_token_ms":`...)
	b = f(b, gpt)
	b = append(b, `,"predicted_per_second":`...)
	b = f(b, gps)
	if draftN >= 0 {
		b = append(b, `,"draft_n":`...)
		b = strconv.AppendInt(b, int64(draftN), 10)
		b = append(b, `,"draft_n_accepted":`...)
		b = strconv.AppendInt(b, int64(draftAccepted), 10)
	}
	return append(b, '}')
}

// errorEvent is the SSE line of FaultErrorEvent.
const errorEvent = "data: {\"error\":{\"message\":\"simulated engine failure: the request was aborted mid-generation\",\"type\":\"server_error\",\"param\":null,\"code\":500}}\n\n"

const doneLine = "data: [DONE]\n\n"

// malformed appends a broken copy of a chunk line: its JSON cut in half.
func malformed(b, chunkLine []byte) []byte {
	body := bytes.TrimSuffix(chunkLine, []byte("\n\n"))
	b = append(b, body[:len(body)/2]...)
	return append(b, "\n\n"...)
}

// hugeChunk appends a text-bearing chunk padded with a "padding" member so
// that its JSON (after "data: ") is exactly size bytes, or as small as it
// can be when size is smaller than the plain chunk.
func (e *encoder) hugeChunk(b []byte, word []byte, finish string, size int) []byte {
	plain := e.chunk(nil, deltaText, word, finish, nil)
	const wrap = len(`,"padding":""`)
	n := size - (len(plain) - len("data: ") - len("\n\n")) - wrap
	if n < 0 {
		n = 0
	}
	extra := make([]byte, 0, n+wrap)
	extra = append(extra, `,"padding":"`...)
	extra = append(extra, bytes.Repeat([]byte{'x'}, n)...)
	extra = append(extra, '"')
	return e.chunk(b, deltaText, word, finish, extra)
}

// ---- JSON documents other than chunks ----

func jsonBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// writeError sends an OpenAI-style error body.
func (s *Server) writeError(w http.ResponseWriter, status int, msg, typ string) {
	var code any = status
	if s.cfg.Personality == Strict {
		code = nil
	}
	body := map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": code,
	}}
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	w.Write(jsonBytes(body))
}

func (s *Server) buildModels() []byte {
	type entry struct {
		ID          string         `json:"id"`
		Object      string         `json:"object"`
		Created     int64          `json:"created"`
		OwnedBy     string         `json:"owned_by"`
		Root        string         `json:"root,omitempty"`
		Parent      *string        `json:"parent,omitempty"`
		MaxModelLen int            `json:"max_model_len,omitempty"`
		Meta        map[string]any `json:"meta,omitempty"`
	}
	created := s.created.Unix()
	var data []entry
	for _, m := range s.cfg.Models {
		e := entry{ID: m, Object: "model", Created: created}
		switch s.cfg.Personality {
		case VLLM:
			e.OwnedBy, e.Root, e.MaxModelLen = "vllm", m, s.cfg.ContextLength
		case LlamaCpp:
			e.OwnedBy = "llamacpp"
			e.Meta = map[string]any{
				"vocab_type": 2, "n_vocab": 128256, "n_ctx_train": s.cfg.ContextLength,
				"n_embd": 4096, "n_params": 8030261248, "size": 4920733696,
			}
		case SGLang:
			e.OwnedBy, e.Root, e.MaxModelLen = "sglang", m, s.cfg.ContextLength
		case Ollama:
			e.OwnedBy = "library"
		default:
			e.OwnedBy = "system"
		}
		data = append(data, e)
	}
	return jsonBytes(map[string]any{"object": "list", "data": data})
}

func (s *Server) buildProps() []byte {
	if s.cfg.Personality != LlamaCpp {
		return nil
	}
	return jsonBytes(map[string]any{
		"default_generation_settings": map[string]any{
			"n_ctx": s.cfg.ContextLength,
			"model": s.cfg.Models[0],
			"params": map[string]any{
				"n_predict": -1, "temperature": 0.8, "top_k": 40, "top_p": 0.95, "ignore_eos": false,
			},
		},
		"total_slots": s.cfg.BatchCapacity,
		"model_path":  "/models/" + s.cfg.Models[0] + ".gguf",
		"build_info":  s.buildInfo(),
		"modalities":  map[string]bool{"vision": false, "audio": false},
	})
}

func (s *Server) buildInfo() string { return s.cfg.Version + "-5eed5ee" }

// metricsText renders /metrics in the Prometheus text format, with vLLM's
// or llama.cpp's names.
// slotsJSON is llama-server's /slots: one entry a slot, the admitted
// requests' slots busy (is_processing), across every client.
func (s *Server) slotsJSON() []byte {
	running, _ := s.sched.counts()
	type slot struct {
		ID           int  `json:"id"`
		IsProcessing bool `json:"is_processing"`
	}
	slots := make([]slot, s.cfg.BatchCapacity)
	for i := range slots {
		slots[i] = slot{ID: i, IsProcessing: i < running}
	}
	return jsonBytes(slots)
}

func (s *Server) metricsText() []byte {
	running, waiting := s.sched.counts()
	kv := float64(s.kvTokens.Load()) / float64(s.cfg.KVCacheTokens)
	kv = min(max(kv, 0), 1)
	var b bytes.Buffer
	metric := func(name, typ, help, labels string, v float64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		fmt.Fprintf(&b, "%s%s %s\n", name, labels, strconv.FormatFloat(v, 'g', -1, 64))
	}
	if s.cfg.Personality == SGLang {
		s.sglangMetrics(metric, running, waiting, kv)
		return b.Bytes()
	}
	if s.cfg.Personality == LlamaCpp {
		// prompt_tokens_total counts the prompt tokens evaluated, so
		// the ones served from the prompt cache are left out.
		metric("llamacpp:prompt_tokens_total", "counter", "Prompt tokens processed in total.", "", float64(s.promptTotal.Load()))
		metric("llamacpp:tokens_predicted_total", "counter", "Tokens generated in total.", "", float64(s.genTotal.Load()))
		metric("llamacpp:kv_cache_usage_ratio", "gauge", "Share of the KV cache in use (1 = full).", "", kv)
		metric("llamacpp:kv_cache_tokens", "gauge", "Tokens held in the KV cache.", "", float64(max(s.kvTokens.Load(), 0)))
		metric("llamacpp:requests_processing", "gauge", "Requests being processed.", "", float64(running))
		metric("llamacpp:requests_deferred", "gauge", "Requests waiting for a slot.", "", float64(waiting))
		s.specMetrics(&b, "llamacpp:", "")
		return b.Bytes()
	}
	lab := `{engine="0",model_name=` + strconv.Quote(s.cfg.Models[0]) + `}`
	metric("vllm:num_requests_running", "gauge", "Requests admitted to the batch (prefill or decode).", lab, float64(running))
	metric("vllm:num_requests_waiting", "gauge", "Requests queued for a batch slot.", lab, float64(waiting))
	metric("vllm:kv_cache_usage_perc", "gauge", "Share of the KV cache in use (1 = full).", lab, kv)
	metric("vllm:prompt_tokens_total", "counter", "Prompt tokens prefilled in total.", lab, float64(s.promptTotal.Load()))
	metric("vllm:generation_tokens_total", "counter", "Tokens generated in total.", lab, float64(s.genTotal.Load()))
	metric("vllm:prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.", lab, float64(s.queriedTotal.Load()))
	metric("vllm:prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.", lab, float64(s.cachedTotal.Load()))
	name := "vllm:request_success_total"
	fmt.Fprintf(&b, "# HELP %s Requests that finished, by reason.\n# TYPE %s counter\n", name, name)
	for _, fr := range []struct {
		reason string
		n      int64
	}{{"stop", s.finishedStop.Load()}, {"length", s.finishedLen.Load()}, {"abort", s.aborted.Load()}} {
		fmt.Fprintf(&b, "%s{engine=\"0\",finished_reason=%q,model_name=%s} %d\n", name, fr.reason, strconv.Quote(s.cfg.Models[0]), fr.n)
	}
	s.specMetrics(&b, "vllm:", lab)
	return b.Bytes()
}
