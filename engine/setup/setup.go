// Package setup holds what a benchmark is given: the plan (what to send)
// and the endpoint (where, with which key), with the method's defaults and
// the address check. It is plain data, so the library and the manifest
// reader can build it without the engine that runs it.
package setup

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Endpoint is an OpenAI-compatible server as the user gave it. The API key
// lives here, in memory, and nowhere else.
type Endpoint struct {
	Name        string // saved endpoint name, if any
	URL         string // server root, with or without /v1
	APIKey      string
	InsecureTLS bool          // accept self-signed certificates
	Timeout     time.Duration // for checks (models, probe); 0 means 15 s
	GPU         string        // GPU telemetry source (hw.ParseSource); "" for none
	// Wall is the smart plug on the server's power lead (hw.ParseWall);
	// "" for none. WallToken is a Home Assistant sensor's token, from the
	// keyring or the environment, never saved with the endpoint.
	Wall, WallToken string
	// Silence is how long requests in flight may go without a byte from
	// the server before the run asks whether the server is still there,
	// and ends when it is not (engine's watchdog); 0 is 10 s, and below 0
	// the silence is said but never ends the run.
	Silence time.Duration
	// KeyHint says where the user gives this endpoint's API key, in the
	// words of whoever runs it (the app's endpoint form, the CLI's
	// environment variable), as a phrase that follows "the key goes": an
	// error asking for the key ends with it. Empty names both places.
	KeyHint string
	// ModelHint says where the user chooses the model when the server
	// serves several and none was named (the app's Model field, the CLI's
	// --model), as a phrase that follows "choose one". Empty names both.
	ModelHint string
}

// Base is a normalised server address: scheme://host[:port][/prefix], with
// any trailing /v1 removed, so API paths are Base + "/v1/...".
type Base struct {
	Root string // e.g. http://10.0.0.5:8000
	Host string // host name or address, without port
}

// ParseBase normalises a user-typed server address. It accepts the root or
// the root with /v1, adds http:// when no scheme is given, and refuses
// anything else with a sentence saying why.
func ParseBase(raw string) (Base, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Base{}, errors.New("the endpoint address is empty: give the server's address, like http://192.168.1.10:8000")
	}
	if !strings.Contains(s, "://") {
		// Without a scheme, a colon can only start a port. "htp:/x" or
		// "http:/x" would otherwise pass as the host "htp" with no port,
		// and "https:10.0.0.5" as a host "https": mistyped schemes,
		// refused here rather than looked up as host names.
		before, rest, ok := strings.Cut(s, ":")
		notPort := rest == "" || rest[0] < '0' || rest[0] > '9'
		if ok && !strings.HasPrefix(s, "[") && (notPort || strings.EqualFold(before, "http") || strings.EqualFold(before, "https")) {
			return Base{}, fmt.Errorf("%q is not a server address: it should start with http:// or https://, like http://192.168.1.10:8000", raw)
		}
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return Base{}, fmt.Errorf("%q is not a valid address: give it like http://192.168.1.10:8000", raw)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Base{}, fmt.Errorf("%q uses %s://: only http:// and https:// servers can be benchmarked", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return Base{}, fmt.Errorf("%q has no host name: give it like http://192.168.1.10:8000", raw)
	}
	if u.User != nil {
		return Base{}, errors.New("the endpoint address contains a user name or password: remove it and give the key as the API key instead")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Base{}, fmt.Errorf("%q has a query or fragment: give only the server's address", raw)
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err != nil || n < 1 || n > 65535 {
			return Base{}, fmt.Errorf("%q has port %q, which is not a port number", raw, p)
		}
	}
	path := strings.TrimRight(u.Path, "/")
	path = strings.TrimSuffix(path, "/v1")
	root := u.Scheme + "://" + u.Host + path
	return Base{Root: root, Host: u.Hostname()}, nil
}

// API returns the full URL of an API path such as "/v1/models".
func (b Base) API(path string) string { return b.Root + path }

// HostPort is the address to dial, with the scheme's default port filled in.
func (b Base) HostPort() string {
	u, _ := url.Parse(b.Root)
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// TLS reports whether the base uses https.
func (b Base) TLS() bool { return strings.HasPrefix(b.Root, "https://") }

// Method defaults (the Kovara method); a manifest profile overrides them
// and flags override both.
const (
	DefaultInputTokens  = 1024
	DefaultOutputTokens = 256
	DefaultRequests     = 100
	DefaultWarmup       = 4
	DefaultSeed         = 7
	DefaultTimeout      = 120 * time.Second
	// PlanTimeout bounds each request of the plans beyond the Kovara
	// method: a 1,024-token answer on a CPU-only server decoding 6 tok/s
	// takes nearly three minutes.
	PlanTimeout = 900 * time.Second
)

// DefaultConcurrency is the default list of levels.
func DefaultConcurrency() []int { return []int{1, 8, 32} }

// Conditions are what a manifest says the endpoint runs: they make a run a
// hardware run. Nil conditions make a protocol test.
type Conditions struct {
	ModelID       string
	ModelRevision string
	Engine        string
	EngineVersion string
	Accelerator   string
	GPUCount      int
	Precision     string
	Profile       string
	// Manifest identity, recorded at the top of the results file.
	Revision     string
	ContentHash  string
	ManifestPath string
	ManifestName string
}

// KovaraPlan is everything that decides what a benchmark sends.
type KovaraPlan struct {
	Model        string // --model; for hardware runs an alias of Conditions.ModelID
	InputTokens  int
	OutputTokens int
	Concurrency  []int
	Requests     int
	Warmup       int
	// Seed is the prompt generator's seed. Unless FixedSeed is set, Run
	// replaces it with a fresh one: servers keep prompt caches across runs
	// (llama.cpp, vLLM, SGLang), and a repeated run with the same prompts
	// would measure cache hits, not prefill (docs/method.md). A fixed seed
	// reproduces someone's run exactly.
	Seed       int64
	FixedSeed  bool
	Timeout    time.Duration
	Conditions *Conditions
	Simulated  bool // the endpoint is the built-in simulator
	// MetricsInterval is how often the server's /metrics is read beside
	// the run (local.server_metrics and the live view): 0 means
	// DefaultMetricsInterval, negative means never.
	MetricsInterval time.Duration
	// SLO is the service level each request is judged by for goodput
	// (--slo-ttft-p95, --slo-tpot, --slo-user-tps); zero: none.
	SLO RateSLO
	// Workload is what the levels' requests ask beyond the synthetic
	// prompt: a shared prefix or turns (a prompts file is the rate
	// plan's). Such a run is never publishable.
	Workload Workload
}

// DefaultPlan is the Kovara method's default plan.
func DefaultPlan() KovaraPlan {
	return KovaraPlan{
		InputTokens:  DefaultInputTokens,
		OutputTokens: DefaultOutputTokens,
		Concurrency:  DefaultConcurrency(),
		Requests:     DefaultRequests,
		Warmup:       DefaultWarmup,
		Seed:         DefaultSeed,
		Timeout:      DefaultTimeout,
	}
}

// Validate refuses a plan that cannot be run, saying why in one sentence
// per problem.
func (p KovaraPlan) Validate() error {
	var errs []error
	if len(p.Concurrency) == 0 {
		errs = append(errs, errors.New("no concurrency levels given"))
	}
	for _, c := range p.Concurrency {
		if c < 1 {
			errs = append(errs, fmt.Errorf("concurrency %d is not allowed: each level needs at least 1 request in flight", c))
		}
	}
	if p.Requests < 1 {
		errs = append(errs, fmt.Errorf("requests %d is not allowed: each level needs at least 1 request", p.Requests))
	} else if m := MinRequests(p.Concurrency); m > p.Requests {
		errs = append(errs, fmt.Errorf("requests per level (%d) is less than concurrency %d: every slot needs at least one request, so use %d or more requests per level", p.Requests, m, m))
	}
	if p.InputTokens < 1 {
		errs = append(errs, fmt.Errorf("input tokens %d is not allowed: it must be at least 1", p.InputTokens))
	}
	if p.OutputTokens < 1 {
		errs = append(errs, fmt.Errorf("output tokens %d is not allowed: it must be at least 1", p.OutputTokens))
	}
	if p.Warmup < 0 {
		errs = append(errs, fmt.Errorf("warmup %d is not allowed: it must be 0 or more", p.Warmup))
	}
	if p.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %s is not allowed: it must be more than 0", p.Timeout))
	}
	if p.Conditions != nil && p.Conditions.ModelID == "" {
		errs = append(errs, errors.New("the manifest names no model id"))
	}
	if p.Workload.PromptsFile != "" {
		errs = append(errs, errors.New("your own prompts file is for the rate plan: the Kovara plan takes a shared prefix and turns only"))
	}
	if err := p.Workload.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// MinRequests is the fewest requests per level that levels can run with:
// every in-flight slot of the highest level needs at least one. The plan
// and the manifest checker both hold a profile to it.
func MinRequests(levels []int) int {
	return slices.Max(append([]int{1}, levels...))
}
