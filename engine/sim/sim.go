// Package sim is Kovara's built-in OpenAI-compatible inference server
// simulator. It serves /v1/models and streaming or non-streaming
// /v1/chat/completions with a simple but exact timing model (a FIFO batch
// queue, a prefill rate, a per-token decode interval that can grow with the
// batch), imitates the details that tell vLLM, llama.cpp, Ollama and the
// OpenAI API apart, injects faults on chosen requests, and optionally records
// the true server-side time of every text-bearing chunk so that a client's
// measured TTFT and inter-token latency can be checked against it.
//
// It is the demo endpoint, the engine's test server and its accuracy
// reference, so the per-chunk path is kept cheap: chunk bytes are assembled
// by appending into a reused buffer, and each stream is paced against
// absolute deadlines by its own handler goroutine.
package sim

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"log"
	"maps"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Personality selects which real server the simulator imitates.
type Personality string

// The personalities. An empty or unknown personality behaves as VLLM.
const (
	VLLM     Personality = "vllm"
	LlamaCpp Personality = "llamacpp"
	Ollama   Personality = "ollama"
	Strict   Personality = "strict" // the OpenAI API: rejects non-standard request fields
	SGLang   Personality = "sglang" // SGLang: vLLM-like streams, its own /metrics names and /get_server_info
)

// Fault is a misbehaviour injected into one request.
type Fault string

// The faults, as seen on a streaming request. "A few chunks" is three token
// chunks (fewer if the completion is shorter). Non-streaming requests get the
// nearest equivalent: reset → the connection is reset after a few tokens'
// time; error_event → a 500 error body; malformed_chunk and no_done → a body
// cut in half; empty_completion → empty content; stall → no answer until the
// client leaves; huge_line → a body padded to HugeLineBytes; buffer_all →
// no change.
const (
	FaultNone       Fault = ""
	Fault429        Fault = "http_429"         // immediate 429 with an OpenAI-style error body
	Fault500        Fault = "http_500"         // immediate 500
	Fault503        Fault = "http_503"         // immediate 503
	FaultReset      Fault = "reset"            // a few chunks, then the TCP connection is reset
	FaultErrorEvent Fault = "error_event"      // a few chunks, then an SSE error event, then the stream ends
	FaultMalformed  Fault = "malformed_chunk"  // a data line that is not valid JSON mid-stream; the rest is normal
	FaultNoDone     Fault = "no_done"          // a few chunks, then a clean close without finish_reason or [DONE]
	FaultEmpty      Fault = "empty_completion" // a normal ending but no text-bearing chunk
	FaultStall      Fault = "stall"            // headers and one token, then silence until the client leaves
	FaultBuffer     Fault = "buffer_all"       // paced as usual but written in one piece at the end
	FaultHugeLine   Fault = "huge_line"        // one text-bearing data line whose JSON is HugeLineBytes long
)

// faultAfter is how many token chunks the truncating faults let through.
const faultAfter = 3

// Config shapes a simulator. The zero value is a usable vLLM-like server.
type Config struct {
	Personality Personality // default VLLM
	Models      []string    // served model ids; default ["kovara-sim-8b"]

	// TemplateOverhead is added to the prompt's word count to give
	// prompt_tokens, standing in for a chat template. 0 means the default
	// of 11; a negative value means no overhead.
	TemplateOverhead int
	// MessageOverhead is the tokens each message of a chat adds beyond
	// its words (a real template's role header and end marks: phi-3's
	// "<|end|>\n<|user|>\n", 6 on llama-server b4748); 0: none.
	MessageOverhead int
	// TokensPerWord is how many tokens each word of a prompt costs, as a
	// real tokenizer makes more tokens than words (1.29 for the method's
	// words on a phi-3 vocabulary): prompt_tokens is the words times it,
	// rounded, plus the template. 0 means 1.
	TokensPerWord float64
	// WordTokens, when set, is how many tokens one word of a prompt costs,
	// in place of TokensPerWord: on a real tokenizer "the" is one token
	// and "lighthouse" two, so prompts of one word count differ by a few
	// tokens from one request to the next (±2 % at 512 tokens on
	// llama-server and Ollama with the method's words). The llama.cpp
	// personality's /tokenize counts with it too.
	WordTokens func(word string) int

	PrefillRate   float64       // prompt tokens per second; default 40000
	TokenInterval time.Duration // decode interval of one sequence at batch size 1; default 20ms
	// CutAt, when set, ends every answer longer than it after that many
	// tokens with finish_reason "length", as a server does whose context
	// (or a slot's share of it) fills before the max_tokens asked (vLLM
	// at max_model_len; the OpenAI API's meaning of "length").
	CutAt int
	// CPUShare is the share of the model an Ollama ran on the CPU, as its
	// /api/ps says it (size_vram = size × (1 − CPUShare)): 0 all in GPU
	// memory, 1 all on the CPU (a machine without a GPU, as the real
	// Ollama 0.24.0 here reports). A split model (between 0 and 1) is
	// slower for it: every decode interval is 1 + 9 × CPUShare times as
	// long, as a model partly in system memory runs three to ten times
	// slower (issue #50).
	CPUShare float64
	// ModelSlowdown multiplies the decode interval of the models it names
	// (1.2: a fifth slower), so two models of one simulator differ as a
	// smaller and a larger quantisation would.
	ModelSlowdown map[string]float64
	// RequestOverhead is what every chat request spends before it waits
	// for a slot: parsing its body, the chat template, tokenizing.
	// llama-server took 2.5 ms for a short prompt and 6 to 30 ms from 1k
	// to 8k tokens on two CPU cores (docs/plans.md, "The context plan").
	// It is inside a client's TTFT and outside llama.cpp's prompt timer
	// (timings.prompt_ms). 0, the default, adds nothing.
	RequestOverhead time.Duration
	// BatchSlowdown stretches the interval with b sequences decoding:
	// TokenInterval * (1 + BatchSlowdown*(b-1)). Default 0.
	BatchSlowdown float64
	// ModelLoad is how long a request waits for the model to load when
	// the model is not loaded (Ollama loads on demand and unloads after
	// ModelKeepAlive idle, 5 minutes by default); 0 never loads.
	ModelLoad      time.Duration
	ModelKeepAlive time.Duration
	// ColdAnswers is how many of the server's first chat requests
	// decode ColdSlowdown times slower: a model file mapped into memory
	// is read from disk by its first passes, and a backend sets up its
	// buffers on its first answers, so a server's first answers after
	// it starts (or loads its model) are slower than every later one.
	// An estimate made from them is wrong by that much. 0: none.
	ColdAnswers  int
	ColdSlowdown float64

	// PrefillDepthTokens and DecodeDepthTokens are the depth model
	// (depth.go): with PrefillDepthTokens > 0, reading the first n tokens
	// of a context takes n/PrefillRate × (1 + n/PrefillDepthTokens); with
	// DecodeDepthTokens > 0, a token computed with ctx tokens in the
	// context comes TokenInterval × (1 + ctx/DecodeDepthTokens) after the
	// one before. 0, the default, leaves each as it is.
	PrefillDepthTokens int
	DecodeDepthTokens  int

	// BatchCapacity is how many requests are admitted at once; the rest
	// wait in a FIFO queue. 0 means 256.
	BatchCapacity int
	// Jitter is the ± fraction of uniform random jitter applied to every
	// decode interval (0 to 0.95), drawn from a generator seeded by Seed and
	// the request number.
	Jitter float64
	Seed   int64

	NoUsage bool // never report usage (clients must count stream chunks)

	// Answers is the llama.cpp personality's next-token model for
	// /completion with n_probs (answers.go): the answers measurement's
	// token route.
	Answers Distribution

	// NaturalStop gives the completion length of request n when ignore_eos
	// is not honoured; the result is clamped to [1, max_tokens]. It and
	// Faults are called from concurrent handlers. When nil,
	// a deterministic length in [max/2, max-1] derived from Seed and n is
	// used (max when max_tokens is 1), so a natural stop is always shorter
	// than a length cut.
	NaturalStop func(n int64) int
	// Faults gives the fault for request number n. It is consulted only for
	// requests that carry a number (n >= 0). Nil means no faults.
	Faults func(n int64) Fault

	// CloseAfterStream closes the connection after every streamed answer,
	// once the answer is complete, without a Connection: close header
	// (llama.cpp's llama-server does this, and answers with Keep-Alive:
	// timeout=5, max=100 all the same; docs/servers.md). Nil means on for
	// the llamacpp personality and off for the others. Only a simulator
	// run with Start can close connections.
	CloseAfterStream *bool
	// Nagle leaves Nagle's algorithm on for the served connections, as
	// llama-server does (cpp-httplib's CPPHTTPLIB_TCP_NODELAY is false):
	// a chunk written while the previous one is not yet acknowledged waits
	// in the kernel for the client's ACK. A client that delays its ACKs
	// then reads a whole answer at once, late. Each chunk's truth is then
	// the moment its write began, not when the kernel let it go. Off by
	// default, for every personality: at hundreds of streams on a small
	// machine the client's own late reads delay its ACKs and so the
	// chunks, which the other truth tests are not about. Only with Start.
	Nagle bool
	// HeadersFirst sends a streamed answer's status and headers as soon as
	// the request is taken, before its prompt is processed, as
	// llama-server does; with Nagle on, the first chunk then always
	// follows a segment the client has not yet acknowledged. Off by
	// default.
	HeadersFirst bool
	// KeepAliveIdle closes a kept-alive connection that has waited this
	// long for its next request (http.Server's IdleTimeout; llama-server's
	// is 5 s). 0 keeps idle connections open.
	KeepAliveIdle time.Duration
	// HTTPThreads serves at most this many connections at once, as
	// llama-server answers HTTP from a pool of max(-np + 2, cores − 1)
	// threads: a connection holds its thread from when it is taken until
	// it closes, its kept-alive idle time (KeepAliveIdle) included, and the
	// others wait in the listen queue. 0: no limit. Only with Start.
	HTTPThreads int

	// PromptCache serves the leading words of a prompt that an earlier
	// request already sent from a cache (see cache.go): they are not
	// prefilled again, and the server says so where the real one does
	// (llama.cpp: usage.prompt_tokens_details.cached_tokens and
	// timings.cache_n; vLLM and SGLang: their /metrics counters, and
	// usage with CacheReport). Each answer is remembered after its
	// prompt, so a conversation's next turn is served its history,
	// answers included (cache.go). Nil
	// means on for the llamacpp personality and off for the others.
	PromptCache *bool
	// SlotCache makes the prompt cache also match a prompt's start word
	// by word, as llama.cpp's slots match to the token: every prompt of
	// the method is served its shared start (template, instruction,
	// "Request") from cache. Nil means on for the llamacpp personality
	// and off for the others (vLLM caches whole blocks only).
	SlotCache *bool
	// CacheReport plays vLLM with --enable-prompt-tokens-details and
	// SGLang with --enable-cache-report: their usage carries
	// prompt_tokens_details.cached_tokens, and only when some prompt
	// tokens came from cache (both leave the member out at 0). Off, as
	// both are by default, they say it only in /metrics. llama.cpp always
	// says it; Ollama (0.24) never does, and its prompt_tokens counts the
	// cached tokens too.
	CacheReport bool

	RecordTruth   bool // keep per-request ground truth (tests); off keeps memory flat
	HugeLineBytes int  // JSON length of the FaultHugeLine line; default 20 MiB

	// Version is the engine version reported by /version, /props or
	// /api/version. Default: "0.11.0" (vLLM), "b6000" (llama.cpp),
	// "0.12.0" (Ollama), none (strict).
	Version string

	// ContextLength is max_model_len / n_ctx: default 32768, and 4096
	// for the Ollama personality (its default num_ctx), which truncates
	// a longer prompt to it without an error where the others refuse.
	ContextLength int
	KVCacheTokens int // KV-cache size behind kv_cache_usage_perc; default 262144

	// SpecDecode, when set, makes decoding speculative: each decode step
	// proposes DraftTokens tokens, accepts a prefix of them and emits the
	// accepted tokens plus one more in the same step (see plans.go). The
	// vLLM personality counts drafts in its /metrics counters.
	SpecDecode *SpecDecode
	// RefuseTemplateKwargs answers 400 to any request that carries
	// chat_template_kwargs, like a server without that extension (the
	// strict personality refuses it anyway, with every other extra field).
	RefuseTemplateKwargs bool
	// ReasoningTokens makes the first tokens of every completion
	// reasoning (delta.reasoning_content) unless the request turned
	// thinking off with chat_template_kwargs {"enable_thinking": false}.
	ReasoningTokens int

	// APIKey, when set, is what llama-server's --api-key does: the model
	// list and /health answer anyone, every other path (chat, /props,
	// /metrics…) answers 401 "Invalid API Key" unless the request carries
	// "Authorization: Bearer APIKey" (engine/testdata/llamacpp-b9749/apikey-*).
	APIKey string

	// NoMetrics plays llama-server without --metrics: /metrics answers
	// 501. Slots plays it with --slots: GET /slots lists its
	// BatchCapacity slots, each with is_processing, busy ones first.
	NoMetrics, Slots bool

	bodyLimit int64 // request body limit; tests lower it
}

func (c Config) withDefaults() Config {
	switch c.Personality {
	case VLLM, LlamaCpp, Ollama, Strict, SGLang:
	default:
		c.Personality = VLLM
	}
	if len(c.Models) == 0 {
		c.Models = []string{"kovara-sim-8b"}
	} else {
		c.Models = append([]string(nil), c.Models...)
	}
	c.ModelSlowdown = maps.Clone(c.ModelSlowdown)
	if c.TemplateOverhead == 0 {
		c.TemplateOverhead = 11
	} else if c.TemplateOverhead < 0 {
		c.TemplateOverhead = 0
	}
	if c.PrefillRate <= 0 {
		c.PrefillRate = 40000
	}
	if c.TokenInterval <= 0 {
		c.TokenInterval = 20 * time.Millisecond
	}
	if c.BatchSlowdown < 0 {
		c.BatchSlowdown = 0
	}
	if c.BatchCapacity <= 0 {
		c.BatchCapacity = 256
		if c.Personality == Ollama {
			c.BatchCapacity = 1 // OLLAMA_NUM_PARALLEL's default
		}
	}
	if c.ModelKeepAlive <= 0 {
		c.ModelKeepAlive = 5 * time.Minute
	}
	if c.Jitter < 0 {
		c.Jitter = 0
	} else if c.Jitter > 0.95 {
		c.Jitter = 0.95
	}
	if c.HugeLineBytes <= 0 {
		c.HugeLineBytes = 20 << 20
	}
	if c.Version == "" {
		switch c.Personality {
		case VLLM:
			c.Version = "0.11.0"
		case LlamaCpp:
			c.Version = "b6000"
		case Ollama:
			c.Version = "0.12.0"
		case SGLang:
			c.Version = "0.5.2"
		}
	}
	if c.ContextLength <= 0 {
		c.ContextLength = 32768
		if c.Personality == Ollama {
			c.ContextLength = 4096 // OLLAMA_CONTEXT_LENGTH's default on a small machine
		}
	}
	if c.KVCacheTokens <= 0 {
		c.KVCacheTokens = 262144
	}
	c.CloseAfterStream = personalityDefault(c.CloseAfterStream, c.Personality == LlamaCpp)
	c.PromptCache = personalityDefault(c.PromptCache, c.Personality == LlamaCpp)
	c.SlotCache = personalityDefault(c.SlotCache, c.Personality == LlamaCpp)
	c.SpecDecode = c.SpecDecode.withDefaults()
	if c.ReasoningTokens < 0 {
		c.ReasoningTokens = 0
	}
	if c.bodyLimit <= 0 {
		c.bodyLimit = 8 << 20
	}
	return c
}

var errShutdown = errors.New("sim: server closed")

// personalityDefault is a copy of an optional switch, or def when unset.
func personalityDefault(v *bool, def bool) *bool {
	if v != nil {
		def = *v
	}
	return &def
}

// Server is a simulator. It implements http.Handler and can be mounted
// anywhere, or run on its own listener with Start.
type Server struct {
	cfg     Config
	created time.Time

	shutdown  chan struct{}
	closeOnce sync.Once
	inflight  atomic.Int64 // chat handlers running

	hs       *http.Server
	serveErr chan error

	sched    scheduler
	decoding atomic.Int64 // sequences past their first token
	answers  atomic.Int64 // chat requests admitted (ColdAnswers)
	seq      atomic.Uint64

	cache        promptCache
	cachedTotal  atomic.Int64 // prompt tokens served from the cache
	queriedTotal atomic.Int64 // prompt tokens looked up in the cache
	promptTotal  atomic.Int64
	genTotal     atomic.Int64
	kvTokens     atomic.Int64
	finishedStop atomic.Int64
	finishedLen  atomic.Int64
	aborted      atomic.Int64
	spec         specCounters

	modelsJSON []byte
	propsJSON  []byte

	// The model's load state (ModelLoad): loaded until loadedUntil; a
	// request that finds it unloaded loads it, and others wait.
	loadMu      sync.Mutex
	loadedUntil time.Time

	truthMu  sync.Mutex
	truths   []Truth
	truthIdx map[int64]int
}

// New builds a simulator from cfg (zero fields take their defaults).
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:      cfg,
		created:  time.Now(),
		shutdown: make(chan struct{}),
		truthIdx: make(map[int64]int),
	}
	s.sched.limit = cfg.BatchCapacity
	s.modelsJSON = s.buildModels()
	s.propsJSON = s.buildProps()
	return s
}

// Config returns the effective configuration, defaults filled in.
func (s *Server) Config() Config {
	c := s.cfg
	c.Models = append([]string(nil), c.Models...)
	return c
}

// Start builds a simulator and serves it on addr ("127.0.0.1:0" picks a free
// port) in the background. It returns the base URL, e.g.
// "http://127.0.0.1:41234" (an unspecified listen host is reported as
// 127.0.0.1).
func Start(cfg Config, addr string) (*Server, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	s := New(cfg)
	sl := stampListener{Listener: ln, nagle: s.cfg.Nagle}
	if cfg.HTTPThreads > 0 {
		sl.threads = make(chan struct{}, cfg.HTTPThreads)
	}
	ln = sl
	s.hs = &http.Server{
		ConnContext:       connContext,
		ConnState:         connState,
		IdleTimeout:       cfg.KeepAliveIdle,
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	s.serveErr = make(chan error, 1)
	go func() { s.serveErr <- s.hs.Serve(ln) }()
	return s, baseURL(ln.Addr()), nil
}

func baseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Close stops the listener (when started with Start), drops every
// connection, and makes every in-flight handler return, as a killed
// server's: every request not yet finished, and any that arrives
// meanwhile, is aborted (the client sees a broken connection, never a
// clean [DONE] or an answer). It waits up to five seconds for the
// handlers to finish. Calling it again does nothing.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.shutdown)
		if s.hs != nil {
			err = s.hs.Close()
			if e := <-s.serveErr; e != nil && !errors.Is(e, http.ErrServerClosed) && err == nil {
				err = e
			}
		}
		limit := time.Now().Add(5 * time.Second)
		for s.inflight.Load() > 0 && time.Now().Before(limit) {
			time.Sleep(time.Millisecond)
		}
	})
	return err
}

func (s *Server) closed() bool {
	select {
	case <-s.shutdown:
		return true
	default:
		return false
	}
}

// enter registers an in-flight handler; false once Close has begun.
func (s *Server) enter() bool {
	s.inflight.Add(1)
	if s.closed() {
		s.inflight.Add(-1)
		return false
	}
	return true
}

func (s *Server) leave() { s.inflight.Add(-1) }

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived, clearArrival := arrival(r, time.Now())
	defer clearArrival()
	p := s.cfg.Personality
	switch p {
	case VLLM, SGLang:
		w.Header().Set("Server", "uvicorn")
	case LlamaCpp:
		w.Header().Set("Server", "llama.cpp")
		w.Header().Set("Keep-Alive", "timeout=5, max=100")
	}
	path := r.URL.Path
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	if !s.authorized(r, path) {
		s.invalidKey(w)
		return
	}
	switch {
	case path == "/v1/chat/completions" || path == "/chat/completions":
		s.handleChat(w, r, arrived)
	case path == "/v1/models" || path == "/models":
		s.get(w, r, "application/json", s.modelsJSON)
	case path == "/version" && p == VLLM:
		s.get(w, r, "application/json", jsonBytes(map[string]string{"version": s.cfg.Version}))
	case path == "/api/version" && p == Ollama:
		s.get(w, r, "application/json; charset=utf-8", jsonBytes(map[string]string{"version": s.cfg.Version}))
	case path == "/api/ps" && p == Ollama:
		s.get(w, r, "application/json; charset=utf-8", s.psJSON())
	case path == "/" && p == Ollama:
		s.get(w, r, "text/plain; charset=utf-8", []byte("Ollama is running"))
	case path == "/props" && p == LlamaCpp:
		s.get(w, r, "application/json; charset=utf-8", s.propsJSON)
	case path == "/tokenize" && p == LlamaCpp && r.Method == http.MethodPost:
		s.tokenize(w, r)
	case path == "/apply-template" && p == LlamaCpp && r.Method == http.MethodPost:
		s.applyTemplate(w, r)
	case path == "/completion" && p == LlamaCpp && r.Method == http.MethodPost:
		s.completion(w, r)
	case path == "/api/chat" && p == Ollama && r.Method == http.MethodPost:
		s.ollamaChat(w, r)
	case path == "/api/generate" && p == Ollama && r.Method == http.MethodPost:
		s.ollamaGenerate(w, r)
	case path == "/get_server_info" && p == SGLang:
		s.get(w, r, "application/json", s.serverInfo())
	case path == "/health" && (p == VLLM || p == SGLang):
		s.get(w, r, "application/json", nil)
	case path == "/health" && p == LlamaCpp:
		s.get(w, r, "application/json; charset=utf-8", []byte(`{"status":"ok"}`))
	case path == "/debug/truth" && s.cfg.RecordTruth:
		// Ground truth for a client in another process (accuracy checks).
		s.get(w, r, "application/json", jsonBytes(s.Timings()))
	case path == "/slots" && p == LlamaCpp && s.cfg.Slots:
		s.get(w, r, "application/json; charset=utf-8", s.slotsJSON())
	case path == "/metrics" && p == LlamaCpp && s.cfg.NoMetrics:
		s.writeError(w, http.StatusNotImplemented, "This server does not support metrics endpoint. Start it with `--metrics`", "not_supported_error")
	case path == "/metrics" && (p == VLLM || p == LlamaCpp || p == SGLang):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			s.methodNotAllowed(w, "GET")
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(s.metricsText())
	default:
		s.writeError(w, http.StatusNotFound, "Not Found: "+r.URL.Path, "not_found_error")
	}
}

// authorized says whether a request may have path: with Config.APIKey,
// only the model list and /health answer without the key.
func (s *Server) authorized(r *http.Request, path string) bool {
	switch {
	case s.cfg.APIKey == "":
		return true
	case path == "/v1/models" || path == "/models" || path == "/health" || path == "/v1/health":
		return true
	}
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.cfg.APIKey)) == 1
}

// invalidKey answers a request without the right key as llama-server
// b9749 does: 401, its error body, and the connection closed.
func (s *Server) invalidKey(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte(`{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}`))
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, ctype string, body []byte) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.methodNotAllowed(w, "GET")
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

func (s *Server) methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	s.writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed", "invalid_request_error")
}

// loadModel waits for the model to load when it is not loaded (the
// Ollama personality's ModelLoad), and keeps it loaded ModelKeepAlive
// past now.
func (s *Server) loadModel(ctx context.Context) error {
	if s.cfg.ModelLoad <= 0 {
		return nil
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if time.Now().After(s.loadedUntil) {
		t := time.NewTimer(s.cfg.ModelLoad)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.shutdown:
			return errShutdown
		case <-t.C:
		}
	}
	s.loadedUntil = time.Now().Add(s.cfg.ModelKeepAlive)
	return nil
}

// keepLoaded extends the model's stay after a request ends.
func (s *Server) keepLoaded() {
	if s.cfg.ModelLoad <= 0 {
		return
	}
	s.loadMu.Lock()
	s.loadedUntil = time.Now().Add(s.cfg.ModelKeepAlive)
	s.loadMu.Unlock()
}

// psJSON is Ollama's /api/ps: the loaded models, with the context each
// was loaded with; empty while none is loaded.
func (s *Server) psJSON() []byte {
	type model struct {
		Name          string    `json:"name"`
		Model         string    `json:"model"`
		Size          int64     `json:"size"`
		ExpiresAt     time.Time `json:"expires_at"`
		SizeVRAM      int64     `json:"size_vram"`
		ContextLength int       `json:"context_length"`
	}
	out := struct {
		Models []model `json:"models"`
	}{Models: []model{}}
	s.loadMu.Lock()
	until := s.loadedUntil
	s.loadMu.Unlock()
	if s.cfg.ModelLoad <= 0 || time.Now().Before(until) {
		if s.cfg.ModelLoad <= 0 {
			until = time.Now().Add(s.cfg.ModelKeepAlive)
		}
		for _, m := range s.cfg.Models {
			const size = 80036000
			vram := int64(math.Round(size * (1 - min(max(s.cfg.CPUShare, 0), 1))))
			out.Models = append(out.Models, model{Name: m, Model: m, Size: size, SizeVRAM: vram, ExpiresAt: until.UTC(), ContextLength: s.cfg.ContextLength})
		}
	}
	return jsonBytes(out)
}
