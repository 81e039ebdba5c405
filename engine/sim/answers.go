package sim

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Distribution is the simulator's model of what it would say next, for
// the answers measurement (engine/drift): llama-server's /apply-template
// and /completion with n_probs, a prompt as text or as text and token ids
// mixed. At each context its next-token distribution over Vocab tokens
// puts Peak (a logit) on one token the context picks and a normal logit
// of standard deviation 2.5 less 4 on every other, all from a hash of the
// context: the same context always gets the same distribution. The
// spread makes a language model's shape, a likely token and a few dozen
// plausible ones holding nearly all the rest (the top token about 0.9,
// the next twenty about half the remainder); a flat tail of thousands of
// near-equal tokens held most of the mass outside any top list, and no
// server's list would see it. Drift adds to every logit a
// normal of that standard deviation, drawn from the context and
// DriftSeed, as a quantised model's weights move its logits: the same
// Drift and DriftSeed make the same "quantisation", another seed another
// one, and TrueKL says how far it is from the model without drift.
type Distribution struct {
	Vocab     int     // tokens; default 4096
	Peak      float64 // the favourite's logit; default 10
	Drift     float64 // the standard deviation added to every logit; 0: the model itself
	DriftSeed int64
	// MaxProbs caps the top list a request gets (a server that lists
	// fewer than asked); 0: as many as asked.
	MaxProbs int
	// NoProbs answers without completion_probabilities (a server that
	// returns no log-probabilities).
	NoProbs bool
	// Retokenise, when set, is how many of its own answer's tokens the
	// tokenizer reads back as themselves: the next one it reads as part
	// of the one before (a real tokenizer merges pieces a greedy answer
	// chose apart), so an answer sent back as text is other tokens from
	// there on.
	Retokenise int
	// ModelDrift is the Drift of each model a request names, for a
	// server of several models (a settings comparison of two models of
	// one server); a model not in it has Drift.
	ModelDrift map[string]float64
	// ChatRestarts answers a chat's final assistant message again from
	// its start, as llama-server b4748 does (testdata/answers): the
	// template closes the message and opens another. vLLM and SGLang
	// do so unless asked continue_final_message; Ollama 0.24 continues.
	ChatRestarts bool
}

func (d Distribution) vocab() int {
	if d.Vocab <= 1 {
		return 4096
	}
	return d.Vocab
}

func (d Distribution) peak() float64 {
	if d.Peak == 0 {
		return 10
	}
	return d.Peak
}

// Template is the simulator's chat template of one user message
// (phi-3's shape), as its /apply-template answers.
func Template(content string) string {
	return "<|user|>\n" + content + "<|end|>\n<|assistant|>\n"
}

// Tokens tokenises text as the simulator's completion route does: a
// begin-of-text token (1), then each word an id from its hash, or a
// token's own text (TokenText) that id.
func (d Distribution) Tokens(text string) []int {
	out := []int{1}
	own := 0
	for w := range strings.FieldsSeq(text) {
		if id, err := strconv.Atoi(strings.TrimPrefix(w, "t")); err == nil && strings.HasPrefix(w, "t") && id > 1 && id < d.vocab() {
			own++
			if d.Retokenise > 0 && own == d.Retokenise+1 {
				continue // read as part of the token before
			}
			out = append(out, id) // a token of its own answers (TokenText)
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		out = append(out, 2+int(h.Sum32()%uint32(d.vocab()-2)))
	}
	return out
}

// Logits is the distribution's logits after context (token ids).
func (d Distribution) Logits(context []int) []float64 {
	h := fnv.New64a()
	var b [8]byte
	for _, t := range context {
		for i := range b {
			b[i] = byte(uint64(t) >> (8 * i))
		}
		h.Write(b[:])
	}
	sum := h.Sum64()
	n := d.vocab()
	r := rand.New(rand.NewPCG(sum, 0x9e3779b97f4a7c15))
	z := make([]float64, n)
	for i := range z {
		z[i] = 2.5*r.NormFloat64() - 4
	}
	z[2+int(sum%uint64(n-2))] = d.peak()
	z[0], z[1] = math.Inf(-1), math.Inf(-1) // never padding or begin-of-text
	if d.Drift > 0 {
		dr := rand.New(rand.NewPCG(sum, uint64(d.DriftSeed)))
		for i := range z {
			z[i] += d.Drift * dr.NormFloat64()
		}
	}
	return z
}

// logSoftmax turns logits into natural-log probabilities.
func logSoftmax(z []float64) []float64 {
	m := slices.Max(z)
	s := 0.0
	for _, v := range z {
		s += math.Exp(v - m)
	}
	ls := m + math.Log(s)
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = v - ls
	}
	return out
}

// TrueKL is the whole distributions' KL(P‖Q) of b from a after context,
// in nats: the ground truth a measurement from top lists is held to.
func TrueKL(a, b Distribution, context []int) float64 {
	p, q := logSoftmax(a.Logits(context)), logSoftmax(b.Logits(context))
	kl := 0.0
	for i := range p {
		if math.IsInf(p[i], -1) {
			continue
		}
		kl += math.Exp(p[i]) * (p[i] - q[i])
	}
	return kl
}

// applyTemplate is llama-server's POST /apply-template: the chat
// messages as the prompt text the template makes of them.
func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []templateMessage `json:"messages"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		s.writeError(w, http.StatusBadRequest, "'messages' is required", "invalid_request_error")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(jsonBytes(map[string]string{"prompt": rendered(req.Messages)}))
}

// templateMessage is one message of a chat the template renders (the
// side routes' plain text; the chat route's chatMessage takes parts).
type templateMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// rendered is the messages in the simulator's template, one after
// another.
func rendered(msgs []templateMessage) string {
	var text strings.Builder
	for _, m := range msgs {
		text.WriteString(Template(m.Content))
	}
	return text.String()
}

// completion is llama-server's POST /completion, not streamed: the
// prompt (text, token ids, or both mixed), n_predict tokens chosen
// greedily, and with n_probs each one's top list
// (completion_probabilities, as b4748 sends it).
func (s *Server) completion(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt   json.RawMessage `json:"prompt"`
		NPredict int             `json:"n_predict"`
		NProbs   int             `json:"n_probs"`
		Model    string          `json:"model"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	d := s.answersOf(req.Model)
	context, err := d.promptTokens(req.Prompt)
	if err != nil {
		s.writeError(w, http.StatusBadRequest, err.Error(), "invalid_request_error")
		return
	}
	n := max(req.NPredict, 1)
	k := d.listed(req.NProbs)
	promptN := len(context)
	probs, text := d.generate(context, n, k)
	out := map[string]any{
		"content": text, "stop": true, "stop_type": "limit", "tokens_predicted": n,
		"tokens_evaluated": promptN, "model": s.cfg.Models[0],
	}
	if k > 0 && !d.NoProbs {
		out["completion_probabilities"] = probs
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(jsonBytes(out))
}

// tokenAlt is one token of a list as both servers send it: llama-server
// with its id, Ollama without (and each with the token's bytes).
type tokenAlt struct {
	ID      *int    `json:"id,omitempty"`
	Token   string  `json:"token"`
	Bytes   []int   `json:"bytes"`
	LogProb float64 `json:"logprob"`
}

// tokenProb is a token chosen, with its top list.
type tokenProb struct {
	tokenAlt
	Top []tokenAlt `json:"top_logprobs"`
}

// TokenText is a token's text: " t" and its id, which Tokens reads back
// as that id (the simulator's tokenizer is invertible on its answers,
// as a real one is on most greedy answers).
func TokenText(id int) string { return fmt.Sprintf(" t%d", id) }

func altOf(id int, lp float64) tokenAlt {
	text := TokenText(id)
	b := make([]int, len(text))
	for i := range len(text) {
		b[i] = int(text[i])
	}
	return tokenAlt{ID: &id, Token: text, Bytes: b, LogProb: lp}
}

// answersOf is the answers model a request naming model gets: the
// server's, with that model's drift where ModelDrift names it.
func (s *Server) answersOf(model string) Distribution {
	d := s.cfg.Answers
	if v, ok := d.ModelDrift[model]; ok {
		d.Drift = v
	}
	return d
}

// listed is the top list a request asking k gets (MaxProbs caps it).
func (d Distribution) listed(k int) int {
	if d.MaxProbs > 0 {
		return min(k, d.MaxProbs)
	}
	return k
}

// withoutIDs is probs as a server that says no token ids sends them.
func withoutIDs(probs []tokenProb) []tokenProb {
	for i := range probs {
		probs[i].ID = nil
		for j := range probs[i].Top {
			probs[i].Top[j].ID = nil
		}
	}
	return probs
}

// generate chooses n tokens greedily after context, each with its top
// list of k, and returns them with the answer's text.
func (d Distribution) generate(context []int, n, k int) ([]tokenProb, string) {
	context = slices.Clone(context)
	var probs []tokenProb
	var text strings.Builder
	for range n {
		lp := logSoftmax(d.Logits(context))
		order := make([]int, len(lp))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			switch {
			case lp[a] > lp[b]:
				return -1
			case lp[a] < lp[b]:
				return 1
			}
			return 0
		})
		pick := order[0]
		p := tokenProb{tokenAlt: altOf(pick, lp[pick])}
		for _, id := range order[:min(k, len(order))] {
			p.Top = append(p.Top, altOf(id, lp[id]))
		}
		probs = append(probs, p)
		text.WriteString(p.Token)
		context = append(context, pick)
	}
	return probs, text.String()
}

// ollamaChat is Ollama's POST /api/chat as far as the answers measurement
// asks it: with _debug_render_only, the template's text of the messages
// (rendered_template), nothing generated; the simulator's Ollama chats
// on /v1 only.
func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string            `json:"model"`
		Messages []templateMessage `json:"messages"`
		Render   bool              `json:"_debug_render_only"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	if !req.Render {
		s.writeError(w, http.StatusNotImplemented, "the simulator's /api/chat only renders the template (_debug_render_only); chat on /v1/chat/completions", "not_supported_error")
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(jsonBytes(map[string]any{"model": req.Model, "message": map[string]string{"role": "", "content": ""}, "done": false,
		"_debug_info": map[string]string{"rendered_template": rendered(req.Messages)}}))
}

// ollamaGenerate is Ollama's POST /api/generate, not streamed, as
// Ollama 0.24 answers it: the prompt's text (raw: as given; else in the
// template), options.num_predict tokens chosen greedily, with logprobs
// each one's token, bytes and top_logprobs, no ids; prompt_eval_count
// the prompt's tokens.
func (s *Server) ollamaGenerate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Prompt   string `json:"prompt"`
		Raw      bool   `json:"raw"`
		Logprobs bool   `json:"logprobs"`
		Top      int    `json:"top_logprobs"`
		Options  struct {
			NumPredict int `json:"num_predict"`
		} `json:"options"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	d := s.answersOf(req.Model)
	prompt := req.Prompt
	if !req.Raw {
		prompt = Template(prompt)
	}
	context := d.Tokens(prompt)
	n := req.Options.NumPredict
	if n <= 0 {
		n = 16
	}
	k := d.listed(req.Top)
	probs, text := d.generate(context, n, k)
	out := map[string]any{"model": req.Model, "response": text, "done": true, "done_reason": "length",
		"prompt_eval_count": len(context) * max(1, int(s.cfg.TokensPerWord)), "eval_count": n}
	if req.Logprobs && !d.NoProbs {
		out["logprobs"] = withoutIDs(probs) // Ollama says no token ids
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(jsonBytes(out))
}

// chatText is a chat's messages as the template makes them for the
// model: a final assistant message continued, or (ChatRestarts, or vLLM
// and SGLang not asked to continue it) closed and another begun.
func (d Distribution) chatText(msgs []chatMessage, p Personality, cont bool) string {
	var text strings.Builder
	for i, m := range msgs {
		content := strings.Join(m.Content, "")
		switch {
		case m.Role != "assistant":
			text.WriteString(Template(content))
		case i < len(msgs)-1 || d.ChatRestarts || (p == VLLM || p == SGLang) && !cont:
			text.WriteString(content + " <|end|>\n<|assistant|>\n")
		default:
			text.WriteString(content)
		}
	}
	return text.String()
}

// chatLogprobs answers a chat completion asked with logprobs, not
// streamed, from the answers model: max_tokens tokens chosen greedily
// after the rendered messages, each with its top list (OpenAI's
// choices[].logprobs.content; ids as llama-server gives them, none from
// the others), usage counting the rendered prompt.
func (s *Server) chatLogprobs(w http.ResponseWriter, j *job) {
	d := s.answersOf(j.model)
	context := d.Tokens(j.rendered)
	k := d.listed(j.probs)
	probs, text := d.generate(context, j.maxTokens, k)
	if s.cfg.Personality != LlamaCpp {
		probs = withoutIDs(probs)
	}
	var logprobs any
	if !d.NoProbs {
		logprobs = map[string]any{"content": probs}
	}
	out := map[string]any{
		"id": fmt.Sprintf("chatcmpl-%016x", mix64(j.seq)), "object": "chat.completion", "model": j.model,
		"choices": []map[string]any{{"index": 0, "message": map[string]string{"role": "assistant", "content": text}, "logprobs": logprobs, "finish_reason": "length"}},
	}
	if !s.cfg.NoUsage {
		promptN := len(context) * max(1, int(s.cfg.TokensPerWord))
		out["usage"] = map[string]int{"prompt_tokens": promptN, "completion_tokens": j.maxTokens, "total_tokens": promptN + j.maxTokens}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(jsonBytes(out))
}

// promptTokens reads a /completion prompt: a string, or an array of
// strings and token ids, each string tokenised in its place (a
// begin-of-text token only at the start).
func (d Distribution) promptTokens(raw json.RawMessage) ([]int, error) {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return d.Tokens(text), nil
	}
	var parts []any
	if json.Unmarshal(raw, &parts) != nil || len(parts) == 0 {
		return nil, fmt.Errorf("\"prompt\" must be a string or an array of strings and token ids")
	}
	var out []int
	for i, p := range parts {
		switch v := p.(type) {
		case string:
			toks := d.Tokens(v)
			if i > 0 {
				toks = toks[1:]
			}
			out = append(out, toks...)
		case float64:
			if v < 0 || v >= float64(d.vocab()) || v != math.Trunc(v) {
				return nil, fmt.Errorf("token id %v is out of the vocabulary", v)
			}
			if i == 0 {
				out = append(out, 1)
			}
			out = append(out, int(v))
		default:
			return nil, fmt.Errorf("\"prompt\" holds a %T", p)
		}
	}
	return out, nil
}
