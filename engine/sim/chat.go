package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// requestNumber finds the number Kovara's prompt generator puts in every
// prompt.
var requestNumber = regexp.MustCompile(`Request (\d+):`)

// openAIChatFields are the request members the OpenAI chat API documents;
// the strict personality refuses anything else.
var openAIChatFields = map[string]bool{
	"messages": true, "model": true, "audio": true, "frequency_penalty": true,
	"function_call": true, "functions": true, "logit_bias": true, "logprobs": true,
	"max_completion_tokens": true, "max_tokens": true, "metadata": true,
	"modalities": true, "n": true, "parallel_tool_calls": true, "prediction": true,
	"presence_penalty": true, "prompt_cache_key": true, "reasoning_effort": true,
	"response_format": true, "safety_identifier": true, "seed": true,
	"service_tier": true, "stop": true, "store": true, "stream": true,
	"stream_options": true, "temperature": true, "tool_choice": true, "tools": true,
	"top_logprobs": true, "top_p": true, "user": true, "verbosity": true,
	"web_search_options": true,
}

type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Stream              bool          `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS          *bool           `json:"ignore_eos"`
	ChatTemplateKwargs json.RawMessage `json:"chat_template_kwargs"`
	// The answers measurement's chat route (answers.go).
	Logprobs             bool `json:"logprobs"`
	TopLogprobs          int  `json:"top_logprobs"`
	ContinueFinalMessage bool `json:"continue_final_message"`
}

type chatMessage struct {
	Role    string      `json:"role"`
	Content textContent `json:"content"`
}

// textContent is a message's text: a plain string, or the text members of
// an array of content parts.
type textContent []string

func (c *textContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = textContent{s}
	case b[0] == '[':
		var parts []struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		*c = (*c)[:0]
		for _, p := range parts {
			if p.Text != nil && (p.Type == "text" || p.Type == "") {
				*c = append(*c, *p.Text)
			}
		}
	default:
		return errors.New("message content must be a string or an array of content parts")
	}
	return nil
}

// countWords counts whitespace-separated words, as strings.Fields would.
func countWords(s string) int {
	n, inWord := 0, false
	for i := 0; i < len(s); {
		var space bool
		if c := s[i]; c < utf8.RuneSelf {
			space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !inWord {
			n++
		}
		inWord = !space
	}
	return n
}

// unknownFields lists the top-level members of body outside the OpenAI set,
// sorted. A body that is not a JSON object yields nothing (the main decode
// reports it).
func unknownFields(body []byte) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var bad []string
	for k := range m {
		if !openAIChatFields[k] {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	return bad
}

// mix64 is the SplitMix64 finaliser: a cheap, well-spread hash.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// job is a validated chat request.
type job struct {
	n         int64
	seq       uint64
	model     string
	prompt    int
	cached    int // prompt tokens served from the prompt cache
	maxTokens int
	total     int    // tokens to generate
	finish    string // "length" or "stop"
	stream    bool
	usage     bool // report usage
	fault     Fault
	key       uint64 // n, or a hash of the last user message when unnumbered
	reasoning int    // leading tokens sent as reasoning
	// probs is the top list asked with logprobs (-1: none), and
	// rendered the messages as the template makes them for the answers
	// model (chatLogprobs).
	probs    int
	rendered string
	// keys goes on hashing the answer's words after the prompt's (with
	// the prompt cache on), so the next turn finds them.
	keys    keyHasher
	caching bool
}

type apiError struct {
	status   int
	msg, typ string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, fmt.Sprintf(format, args...), "invalid_request_error"}
}

func (s *Server) parse(w http.ResponseWriter, r *http.Request) (*job, *apiError) {
	p := s.cfg.Personality
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.bodyLimit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &apiError{http.StatusRequestEntityTooLarge,
				fmt.Sprintf("the request body is larger than %d bytes", tooBig.Limit), "invalid_request_error"}
		}
		return nil, badRequest("could not read the request body: %v", err)
	}
	if p == Strict {
		if bad := unknownFields(body); len(bad) == 1 {
			return nil, badRequest("Unrecognized request argument supplied: %s", bad[0])
		} else if len(bad) > 1 {
			return nil, badRequest("Unrecognized request arguments supplied: %s", strings.Join(bad, ", "))
		}
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("the request body is not a valid chat completion request: %v", err)
	}
	if s.cfg.RefuseTemplateKwargs && len(req.ChatTemplateKwargs) > 0 {
		return nil, badRequest("chat_template_kwargs is not supported by this server")
	}
	if len(req.Messages) == 0 {
		return nil, badRequest("messages must hold at least one message")
	}
	model := req.Model
	switch {
	case model == "" && (p == VLLM || p == LlamaCpp || p == SGLang):
		model = s.cfg.Models[0]
	case model == "":
		return nil, badRequest("you must provide a model parameter")
	case !slices.Contains(s.cfg.Models, model):
		return nil, &apiError{http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", model), "not_found_error"}
	}

	j := &job{n: -1, model: model, stream: req.Stream, probs: -1}
	if req.Logprobs {
		j.probs, j.rendered = req.TopLogprobs, s.cfg.Answers.chatText(req.Messages, p, req.ContinueFinalMessage)
	}
	words, tokens := 0, 0
	for _, m := range req.Messages {
		for _, t := range m.Content {
			words += countWords(t)
			tokens += s.cfg.textTokens(t)
		}
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "user" {
			continue
		}
		j.key = textKey(req.Messages[i].Content)
		for _, t := range req.Messages[i].Content {
			if m := requestNumber.FindStringSubmatch(t); m != nil {
				if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
					j.n = n
				}
				break
			}
		}
		break
	}
	j.prompt = s.cfg.wordTokens(words) + s.cfg.TemplateOverhead
	if s.cfg.WordTokens != nil {
		j.prompt = tokens + s.cfg.TemplateOverhead
	}
	j.prompt += s.cfg.MessageOverhead * (len(req.Messages) - 1)
	if *s.cfg.PromptCache {
		j.caching, j.keys = true, newKeyHasher()
		for _, m := range req.Messages {
			for _, t := range m.Content {
				j.keys.add(t)
				j.keys.end()
			}
		}
		j.cached = s.cfg.cachedTokens(s.cfg.wordTokens(s.cache.take(j.keys.take(), *s.cfg.SlotCache)), j.prompt)
	}

	j.maxTokens = 16
	if req.MaxCompletionTokens != nil {
		j.maxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		j.maxTokens = *req.MaxTokens
	}
	if j.maxTokens < 1 {
		return nil, badRequest("max_tokens must be at least 1, got %d", j.maxTokens)
	}
	if p == Ollama && j.prompt > s.cfg.ContextLength {
		// Ollama cuts the prompt to num_ctx without an error and says
		// so only in its log ("truncating input prompt").
		j.prompt = s.cfg.ContextLength
		j.cached = min(j.cached, j.prompt-1)
	}
	if p == LlamaCpp && j.prompt >= s.cfg.ContextLength {
		// llama-server's own words (b9749, docs/servers.md).
		return nil, badRequest("request (%d tokens) exceeds the available context size (%d tokens), try increasing it",
			j.prompt, s.cfg.ContextLength)
	}
	if need := j.prompt + j.maxTokens; need > s.cfg.ContextLength && p != Ollama {
		return nil, badRequest("this model's context holds %d tokens, but the request needs %d (%d in the messages, %d for the completion)",
			s.cfg.ContextLength, need, j.prompt, j.maxTokens)
	}

	if j.caching {
		s.queriedTotal.Add(int64(j.prompt))
		s.cachedTotal.Add(int64(j.cached))
	}
	if j.n >= 0 {
		j.key = uint64(j.n)
	}
	honoured := req.IgnoreEOS != nil && *req.IgnoreEOS && (p == VLLM || p == LlamaCpp || p == SGLang)
	j.total, j.finish = j.maxTokens, "length"
	if !honoured {
		if nat := s.naturalStop(j.n, j.key, j.maxTokens); nat < j.maxTokens {
			j.total, j.finish = nat, "stop"
		}
	}
	if c := s.cfg.CutAt; c > 0 && j.total > c {
		// The context filled before the answer did.
		j.total, j.finish = c, "length"
	}
	if s.cfg.ReasoningTokens > 0 && !thinkingOff(req.ChatTemplateKwargs) {
		j.reasoning = s.cfg.ReasoningTokens
	}
	j.usage = !s.cfg.NoUsage && (!j.stream || (req.StreamOptions != nil && req.StreamOptions.IncludeUsage))
	if j.n >= 0 && s.cfg.Faults != nil {
		j.fault = s.cfg.Faults(j.n)
	}
	return j, nil
}

// word is token i of the answer. A numbered request's words run through
// the vocabulary from base; an unnumbered prompt (the plans' fixed ones)
// is answered as a model at temperature 0 would: the same words for the
// same prompt and model, other words for another model.
func (j *job) word(base, i int) []byte {
	if j.n >= 0 {
		return vocabulary[(base+i)%len(vocabulary)]
	}
	k := mix64(j.key^textKey(textContent{j.model})) + uint64(i)
	return vocabulary[mix64(k)%uint64(len(vocabulary))]
}

// naturalStop is the completion length of request n when the model is
// allowed to stop by itself. key is n for numbered requests and a hash of
// the prompt otherwise, so different unnumbered prompts stop at different
// lengths and the same prompt always at the same one.
func (s *Server) naturalStop(n int64, key uint64, maxTokens int) int {
	if f := s.cfg.NaturalStop; f != nil {
		return min(max(f(n), 1), maxTokens)
	}
	if maxTokens < 2 {
		return maxTokens
	}
	lo, hi := maxTokens/2, maxTokens-1
	h := mix64(uint64(s.cfg.Seed)*0x9e3779b97f4a7c15 ^ key)
	return lo + int(h%uint64(hi-lo+1))
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request, arrived time.Time) {
	if r.Method != http.MethodPost {
		s.methodNotAllowed(w, "POST")
		return
	}
	if !s.enter() {
		panic(http.ErrAbortHandler) // a killed server answers nothing
	}
	defer s.leave()

	tr := &Truth{N: -1, Arrived: arrived}
	if s.cfg.RecordTruth {
		defer func() {
			tr.Ended = time.Now()
			s.store(*tr)
		}()
	}
	j, aerr := s.parse(w, r)
	if aerr != nil {
		tr.Status = aerr.status
		s.writeError(w, aerr.status, aerr.msg, aerr.typ)
		return
	}
	j.seq = s.seq.Add(1)
	tr.N, tr.Model, tr.Stream, tr.PromptTokens, tr.CachedTokens, tr.Fault = j.n, j.model, j.stream, j.prompt, j.cached, j.fault

	switch j.fault {
	case Fault429:
		tr.Status, tr.Completed = http.StatusTooManyRequests, true
		s.writeError(w, tr.Status, "simulated rate limit: too many requests, retry later", "rate_limit_error")
		return
	case Fault500:
		tr.Status, tr.Completed = http.StatusInternalServerError, true
		s.writeError(w, tr.Status, "simulated internal server error", "server_error")
		return
	case Fault503:
		tr.Status, tr.Completed = http.StatusServiceUnavailable, true
		s.writeError(w, tr.Status, "simulated overload: the service is unavailable", "service_unavailable")
		return
	}

	if j.probs >= 0 && !j.stream {
		s.chatLogprobs(w, j)
		return
	}
	ctx := r.Context()
	if d := s.cfg.RequestOverhead; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			s.aborted.Add(1)
			return
		}
	}
	if err := s.loadModel(ctx); err != nil {
		s.aborted.Add(1)
		return
	}
	defer s.keepLoaded()
	if err := s.sched.acquire(ctx, s.shutdown); err != nil {
		s.aborted.Add(1)
		if errors.Is(err, errShutdown) {
			panic(http.ErrAbortHandler)
		}
		return
	}
	ru := &run{
		s: s, w: w, rc: http.NewResponseController(w), ctx: ctx, j: j, tr: tr,
		held: true, record: s.cfg.RecordTruth, admitted: time.Now(), sock: stampOf(r),
		buffered: j.stream && j.fault == FaultBuffer,
		cold:     s.answers.Add(1) <= int64(s.cfg.ColdAnswers),
	}
	ru.timer = time.NewTimer(time.Hour)
	ru.timer.Stop()
	defer ru.cleanup()
	tr.Admitted = ru.admitted
	ru.kv = int64(j.prompt)
	s.kvTokens.Add(ru.kv)
	if s.cfg.Jitter > 0 {
		ru.rng = rand.New(rand.NewPCG(uint64(s.cfg.Seed), uint64(j.n)))
	}
	if s.cfg.SpecDecode != nil {
		ru.spec = rand.New(rand.NewPCG(uint64(s.cfg.Seed)^0x5bd1e995, j.key))
	}
	if ru.record {
		tr.Chunks = make([]time.Time, 0, min(j.total, 4096))
	}
	if j.stream {
		ru.enc = s.newEncoder(j)
		ru.stream()
	} else {
		ru.whole()
	}
}

func (s *Server) newEncoder(j *job) *encoder {
	id := fmt.Sprintf("chatcmpl-%016x%016x", mix64(j.seq), mix64(j.seq^uint64(s.cfg.Seed)))
	if s.cfg.Personality == Ollama {
		id = "chatcmpl-" + strconv.FormatUint(j.seq%1000, 10)
	}
	e := newEncoder(s.cfg.Personality, id, j.model, time.Now().Unix(), s.buildInfo(), j.usage)
	e.cacheReport = s.cfg.CacheReport
	return e
}

// run is one admitted request on its way through prefill and decode.
type run struct {
	s        *Server
	w        http.ResponseWriter
	rc       *http.ResponseController
	ctx      context.Context
	j        *job
	tr       *Truth
	enc      *encoder
	timer    *time.Timer
	rng      *rand.Rand // nil without jitter
	admitted time.Time
	record   bool

	spec  *rand.Rand // draws accepted drafts; nil without SpecDecode
	burst int        // tokens left in the current speculative step
	// draftN and draftAccepted count this request's draft tokens
	// proposed and accepted (llama.cpp's timings.draft_n and
	// draft_n_accepted).
	draftN, draftAccepted int
	sock                  *stampConn // the connection's stamps; nil when mounted elsewhere
	held                  bool       // owns a batch slot
	decoding              bool       // counted in Server.decoding
	kv                    int64      // tokens this request holds in the KV cache
	wrote                 bool       // response bytes have gone out
	buffered              bool       // FaultBuffer: collect the stream in out
	out                   []byte
	thought               []byte // non-streaming: the reasoning text
	remembered            bool   // the answer's words are in the prompt cache
	cold                  bool   // one of the server's first answers (Config.ColdAnswers)
}

func (ru *run) cleanup() {
	ru.rememberAnswer()
	ru.releaseSlot()
	ru.stopDecoding()
	ru.s.kvTokens.Add(-ru.kv)
	ru.timer.Stop()
}

// produced hashes token i of the answer, word, for the prompt cache. The
// reasoning is a message of its own in the server's context (its think
// markup), so a next turn that sends back only the answer's text shares
// the history up to the reasoning, as it would on llama.cpp.
func (ru *run) produced(i int, word []byte) {
	if !ru.j.caching {
		return
	}
	if i == ru.j.reasoning && i > 0 {
		ru.j.keys.end()
	}
	ru.j.keys.addBytes(word)
}

// rememberAnswer puts the answer's words, as far as they were produced,
// into the prompt cache after the prompt's, once: before the answer's
// end leaves, so that a client's next turn finds them. An answer cut
// short by a fault or by the client leaving is remembered as far as it
// went, as llama.cpp's slot keeps every token it generated until the
// request ended.
func (ru *run) rememberAnswer() {
	if !ru.j.caching || ru.remembered {
		return
	}
	ru.remembered = true
	ru.j.keys.end()
	ru.s.cache.remember(ru.j.keys.take())
}

func (ru *run) releaseSlot() {
	if ru.held {
		ru.held = false
		ru.s.sched.release()
	}
}

func (ru *run) startDecoding() {
	if !ru.decoding {
		ru.decoding = true
		ru.s.decoding.Add(1)
	}
}

func (ru *run) stopDecoding() {
	if ru.decoding {
		ru.decoding = false
		ru.s.decoding.Add(-1)
	}
}

// timings is llama.cpp's timings member for this request, with its draft
// counts when decoding is speculative.
func (ru *run) timings(firstAt, lastAt time.Time) []byte {
	draftN, draftAccepted := -1, -1
	if ru.spec != nil {
		draftN, draftAccepted = ru.draftN, ru.draftAccepted
	}
	return appendTimings(nil, ru.j.prompt, ru.j.cached, msBetween(ru.admitted, firstAt),
		ru.tr.CompletionTokens, msBetween(firstAt, lastAt), draftN, draftAccepted)
}

// promptCounted is what the server's prompt-token counter adds for this
// request: llama.cpp counts only the tokens it evaluated.
func (ru *run) promptCounted() int {
	if ru.s.cfg.Personality == LlamaCpp {
		return ru.j.prompt - ru.j.cached
	}
	return ru.j.prompt
}

func (ru *run) prefillTime() time.Duration {
	return ru.s.cfg.prefill(ru.j.prompt, ru.j.cached)
}

// interval is the gap to the next token of this sequence, given how many
// sequences are decoding now.
func (ru *run) interval() time.Duration {
	f := 1.0
	if sd := ru.s.cfg.BatchSlowdown; sd > 0 {
		if b := ru.s.decoding.Load(); b > 1 {
			f += sd * float64(b-1)
		}
	}
	if ru.rng != nil {
		f *= 1 + ru.s.cfg.Jitter*(2*ru.rng.Float64()-1)
	}
	if ru.s.cfg.DecodeDepthTokens > 0 {
		// The token about to come is computed with the prompt and every
		// token so far in the context.
		f *= ru.s.cfg.decodeDepth(ru.j.prompt + ru.tr.CompletionTokens)
	}
	if m, ok := ru.s.cfg.ModelSlowdown[ru.model()]; ok && m > 0 {
		f *= m
	}
	if c := ru.s.cfg.CPUShare; c > 0 && c < 1 {
		f *= 1 + 9*c // a split model: part of it in system memory
	}
	if ru.cold && ru.s.cfg.ColdSlowdown > 0 {
		f *= ru.s.cfg.ColdSlowdown
	}
	return time.Duration(float64(ru.s.cfg.TokenInterval) * f)
}

func (ru *run) model() string {
	if ru.j == nil {
		return ""
	}
	return ru.j.model
}

// sleepUntil waits for an absolute deadline, the client leaving, or Close.
func (ru *run) sleepUntil(t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		select {
		case <-ru.ctx.Done():
			return ru.ctx.Err()
		case <-ru.s.shutdown:
			return errShutdown
		default:
			return nil
		}
	}
	ru.timer.Reset(d)
	select {
	case <-ru.timer.C:
		return nil
	case <-ru.ctx.Done():
		ru.timer.Stop()
		return ru.ctx.Err()
	case <-ru.s.shutdown:
		ru.timer.Stop()
		return errShutdown
	}
}

// abandon ends a request whose wait was cut short. On Close it is
// aborted, answered or not, as a killed server's would be (it once wrote
// 503s, and a run that met a "killed" simulator counted them); a client
// that left needs no answer.
func (ru *run) abandon(err error) {
	ru.s.aborted.Add(1)
	if !errors.Is(err, errShutdown) {
		return
	}
	panic(http.ErrAbortHandler)
}

// send writes and flushes b (or keeps it, for FaultBuffer).
func (ru *run) send(b []byte) error {
	if ru.buffered {
		ru.out = append(ru.out, b...)
		return nil
	}
	if !ru.wrote {
		ru.wrote = true
		ru.tr.Status = http.StatusOK
	}
	if _, err := ru.w.Write(b); err != nil {
		return err
	}
	if err := ru.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// resetConn drops the connection with a TCP reset (or, where the
// connection cannot be taken over, lets net/http abort it).
func (ru *run) resetConn() {
	conn, _, err := ru.rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// tokenDone records a chunk that left at now, by a write call that had
// returned at done.
func (ru *run) tokenDone(now, done time.Time) {
	if ru.record {
		ru.tr.Chunks = append(ru.tr.Chunks, now)
		ru.tr.Returned = append(ru.tr.Returned, done)
	}
	ru.tr.CompletionTokens++
	ru.kv++
	ru.s.genTotal.Add(1)
	ru.s.kvTokens.Add(1)
}

func msBetween(a, b time.Time) float64 { return float64(b.Sub(a)) / float64(time.Millisecond) }

// stream serves a streaming request.
func (ru *run) stream() {
	s, j, e := ru.s, ru.j, ru.enc
	if *s.cfg.CloseAfterStream && ru.sock != nil {
		ru.sock.closeWhenIdle.Store(true)
	}
	h := ru.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if s.cfg.HeadersFirst && !ru.buffered {
		ru.w.WriteHeader(http.StatusOK)
		if err := ru.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			s.aborted.Add(1)
			return
		}
	}
	deadline := ru.admitted.Add(ru.prefillTime())
	if err := ru.sleepUntil(deadline); err != nil {
		ru.abandon(err)
		return
	}
	s.promptTotal.Add(int64(ru.promptCounted()))

	line := make([]byte, 0, 1024)
	line = e.chunk(line, deltaRole, nil, "", nil)
	if j.fault == FaultEmpty {
		now := time.Now()
		ru.end(line, now, now)
		return
	}

	cut := j.fault == FaultReset || j.fault == FaultErrorEvent || j.fault == FaultNoDone || j.fault == FaultStall
	cutAt := min(faultAfter, j.total) - 1
	if j.fault == FaultStall {
		cutAt = 0
	}
	hugeAt := min(2, j.total-1)
	base := int(mix64(uint64(j.n)) % uint64(len(vocabulary)))

	ru.startDecoding()
	var firstAt, lastAt time.Time
	for i := 0; i < j.total; i++ {
		if i > 0 {
			deadline = ru.nextDeadline(deadline, j.total-i)
			if err := ru.sleepUntil(deadline); err != nil {
				ru.abandon(err)
				return
			}
		}
		word := j.word(base, i)
		finish := ""
		if i == j.total-1 && !cut && e.finishOnLastToken() {
			finish = j.finish
		}
		kind := deltaText
		if i < j.reasoning {
			kind = deltaReasoning
		}
		start := len(line)
		if j.fault == FaultHugeLine && i == hugeAt {
			line = e.hugeChunk(line, word, finish, s.cfg.HugeLineBytes)
		} else {
			line = e.chunk(line, kind, word, finish, nil)
		}
		if j.fault == FaultMalformed && i == cutAt {
			line = malformed(line, line[start:])
		}
		ru.produced(i, word)
		if i == j.total-1 {
			ru.rememberAnswer()
		}
		before := time.Now()
		if err := ru.send(line); err != nil {
			s.aborted.Add(1)
			return
		}
		now, done := before, before
		if !ru.buffered {
			now, done = sentAt(ru.sock, before), time.Now()
		}
		ru.tokenDone(now, done)
		if i == 0 {
			firstAt = now
			// A first token that left after its time (the prefill's timer
			// fired late on a busy machine) paces the answer from when it
			// left, as a server decodes from the end of its prefill: the
			// tokens after it do not catch up.
			if before.After(deadline) {
				deadline = before
			}
		}
		lastAt = now
		line = line[:0]
		if cut && i == cutAt {
			ru.cut(deadline)
			return
		}
	}
	ru.end(line, firstAt, lastAt)
}

// end closes a stream normally: the closing chunk where the personality
// uses one, usage when asked for, [DONE].
func (ru *run) end(line []byte, firstAt, lastAt time.Time) {
	j, e := ru.j, ru.enc
	ru.rememberAnswer()
	finish := j.finish
	if j.fault == FaultEmpty {
		finish = "stop"
	}
	// llama-server sends its timings with the usage when asked for usage,
	// else with the finish_reason.
	var timings []byte
	if e.p == LlamaCpp {
		timings = ru.timings(firstAt, lastAt)
	}
	if !e.finishOnLastToken() || j.fault == FaultEmpty {
		var extra []byte
		if !j.usage {
			extra = timings
		}
		line = e.chunk(line, deltaEnd, nil, finish, extra)
	}
	if j.usage {
		line = e.usage(line, j.prompt, j.cached, ru.tr.CompletionTokens, timings)
	}
	line = append(line, doneLine...)
	if err := ru.send(line); err != nil {
		ru.s.aborted.Add(1)
		return
	}
	if ru.buffered {
		ru.buffered = false
		if err := ru.send(ru.out); err != nil {
			ru.s.aborted.Add(1)
			return
		}
	}
	ru.tr.FinishReason, ru.tr.Completed = finish, true
	ru.s.finished(finish)
}

func (s *Server) finished(reason string) {
	if reason == "stop" {
		s.finishedStop.Add(1)
	} else {
		s.finishedLen.Add(1)
	}
}

// cut delivers a truncating fault after the last token it lets through.
func (ru *run) cut(deadline time.Time) {
	ru.s.aborted.Add(1)
	ru.rememberAnswer()
	switch ru.j.fault {
	case FaultNoDone:
		ru.tr.Completed = true // the handler returns: net/http closes the body cleanly
	case FaultErrorEvent:
		if err := ru.sleepUntil(deadline.Add(ru.interval())); err != nil {
			ru.abandon(err)
			return
		}
		if ru.send([]byte(errorEvent)) == nil {
			ru.tr.Completed = true
		}
	case FaultReset:
		if err := ru.sleepUntil(deadline.Add(ru.interval())); err != nil {
			ru.abandon(err)
			return
		}
		ru.tr.Completed = true
		ru.resetConn()
	case FaultStall:
		// A hung sequence should not hold up everybody else.
		ru.releaseSlot()
		ru.stopDecoding()
		select {
		case <-ru.ctx.Done():
			ru.tr.Completed = true
		case <-ru.s.shutdown:
			panic(http.ErrAbortHandler)
		}
	}
}

// whole serves a non-streaming request: the same schedule, one JSON body
// at the end (see the Fault constants for how faults map onto it).
func (ru *run) whole() {
	s, j := ru.s, ru.j
	deadline := ru.admitted.Add(ru.prefillTime())
	if err := ru.sleepUntil(deadline); err != nil {
		ru.abandon(err)
		return
	}
	s.promptTotal.Add(int64(ru.promptCounted()))
	if j.fault == FaultStall {
		ru.releaseSlot()
		select {
		case <-ru.ctx.Done():
			ru.tr.Completed = true
		case <-s.shutdown:
			ru.abandon(errShutdown)
		}
		return
	}
	n := j.total
	if j.fault == FaultEmpty {
		n = 0
	}
	cutAt := -1
	if j.fault == FaultReset || j.fault == FaultErrorEvent {
		cutAt = min(faultAfter, n) - 1
	}
	base := int(mix64(uint64(j.n)) % uint64(len(vocabulary)))
	ru.startDecoding()
	var text []byte
	firstAt := time.Now()
	lastAt := firstAt
	for i := 0; i < n; i++ {
		if i > 0 {
			deadline = ru.nextDeadline(deadline, n-i)
			if err := ru.sleepUntil(deadline); err != nil {
				ru.abandon(err)
				return
			}
		}
		now := time.Now()
		ru.tokenDone(now, now)
		if i == 0 {
			firstAt = now
		}
		lastAt = now
		word := j.word(base, i)
		if i < j.reasoning {
			ru.thought = append(ru.thought, word...)
		} else {
			text = append(text, word...)
		}
		ru.produced(i, word)
		if i == cutAt {
			s.aborted.Add(1)
			ru.rememberAnswer()
			if err := ru.sleepUntil(deadline.Add(ru.interval())); err != nil {
				ru.abandon(err)
				return
			}
			ru.tr.Completed = true
			if j.fault == FaultReset {
				ru.resetConn()
				return
			}
			ru.tr.Status = http.StatusInternalServerError
			s.writeError(ru.w, ru.tr.Status, "simulated engine failure: the request was aborted mid-generation", "server_error")
			return
		}
	}
	finish := j.finish
	if j.fault == FaultEmpty {
		finish = "stop"
	}
	body := ru.completion(string(text), finish, firstAt, lastAt, -1)
	switch j.fault {
	case FaultMalformed, FaultNoDone:
		body = body[:len(body)/2]
		s.aborted.Add(1)
	case FaultHugeLine:
		body = ru.completion(string(text), finish, firstAt, lastAt, s.cfg.HugeLineBytes-len(body))
		s.finished(finish)
	default:
		s.finished(finish)
	}
	ru.rememberAnswer()
	ru.w.Header().Set("Content-Type", "application/json")
	ru.tr.Status = http.StatusOK
	ru.w.Write(body)
	ru.tr.FinishReason, ru.tr.Completed = finish, true
}

// completion renders a chat.completion body. grow > 0 adds a padding
// member that lengthens the body by exactly grow bytes when grow is at
// least the member's own overhead.
func (ru *run) completion(text, finish string, firstAt, lastAt time.Time, grow int) []byte {
	s, j := ru.s, ru.j
	type message struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		Reasoning string `json:"reasoning_content,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		Logprobs     any     `json:"logprobs"`
		FinishReason string  `json:"finish_reason"`
	}
	type details struct {
		CachedTokens int  `json:"cached_tokens"`
		AudioTokens  *int `json:"audio_tokens,omitempty"` // the OpenAI API's
	}
	type usage struct {
		PromptTokens     int      `json:"prompt_tokens"`
		CompletionTokens int      `json:"completion_tokens"`
		TotalTokens      int      `json:"total_tokens"`
		Details          *details `json:"prompt_tokens_details,omitempty"`
	}
	type body struct {
		ID      string          `json:"id"`
		Object  string          `json:"object"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Choices []choice        `json:"choices"`
		Usage   *usage          `json:"usage,omitempty"`
		Timings json.RawMessage `json:"timings,omitempty"`
		Padding string          `json:"padding,omitempty"`
	}
	b := body{
		ID:      fmt.Sprintf("chatcmpl-%016x%016x", mix64(j.seq), mix64(j.seq^uint64(s.cfg.Seed))),
		Object:  "chat.completion",
		Created: ru.tr.Arrived.Unix(),
		Model:   j.model,
		Choices: []choice{{Message: message{Role: "assistant", Content: text, Reasoning: string(ru.thought)}, FinishReason: finish}},
	}
	if j.usage {
		c := ru.tr.CompletionTokens
		b.Usage = &usage{j.prompt, c, j.prompt + c, nil}
		switch p := s.cfg.Personality; {
		case p == LlamaCpp, s.cfg.CacheReport && j.cached > 0 && (p == VLLM || p == SGLang):
			b.Usage.Details = &details{CachedTokens: j.cached}
		case p == Strict:
			b.Usage.Details = &details{CachedTokens: j.cached, AudioTokens: new(int)}
		}
	}
	if s.cfg.Personality == LlamaCpp {
		t := ru.timings(firstAt, lastAt)
		b.Timings = t[len(`,"timings":`):]
	}
	const wrap = len(`,"padding":""`)
	if grow > wrap {
		b.Padding = strings.Repeat("x", grow-wrap)
	}
	return jsonBytes(b)
}

// tokenize is llama-server's POST /tokenize: {"content": text} answered
// with its tokens (ids that say nothing here: only their count is read),
// counted by WordTokens, else by TokensPerWord over the words. No chat
// template: that is the chat request's own.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Content *string `json:"content"`
	}
	if !s.readJSON(w, r, &req) {
		return
	}
	n := 0
	if req.Content != nil {
		n = s.cfg.wordTokens(countWords(*req.Content))
		if s.cfg.WordTokens != nil {
			n = s.cfg.textTokens(*req.Content)
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = 1 + i%31000
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(jsonBytes(map[string]any{"tokens": out}))
}

// readJSON reads a small POST body (llama-server's side routes) into v,
// answering 400 and false when it cannot.
func (s *Server) readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.bodyLimit))
	if err != nil {
		s.writeError(w, http.StatusBadRequest, "the request body could not be read", "invalid_request_error")
		return false
	}
	if json.Unmarshal(body, v) != nil {
		s.writeError(w, http.StatusBadRequest, "invalid JSON", "invalid_request_error")
		return false
	}
	return true
}
