package engine

import (
	"errors"
	"fmt"
	"github.com/kovara/desktop/engine/prompt"
	"slices"
	"time"
)

// Method defaults (the Kovara method); a manifest profile overrides them
// and flags override both.
const (
	DefaultInputTokens  = 1024
	DefaultOutputTokens = 256
	DefaultRequests     = 100
	DefaultWarmup       = 4
	DefaultSeed         = 7
	DefaultTimeout      = 120 * time.Second
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

// Plan is everything that decides what a benchmark sends.
type Plan struct {
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
}

// DefaultPlan is the Kovara method's default plan.
func DefaultPlan() Plan {
	return Plan{
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
func (p Plan) Validate() error {
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
	} else if m := slices.Max(append([]int{0}, p.Concurrency...)); m > p.Requests {
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
	return errors.Join(errs...)
}

// levelFirstNumber is the request number of a level's first measured
// request (docs/method.md): numbers depend only on the plan.
func (p Plan) levelFirstNumber(level int) int64 {
	return prompt.MeasuredRequest(p.Warmup, p.Requests, level, 0)
}

func (p Plan) maxConcurrency() int { return slices.Max(p.Concurrency) }
