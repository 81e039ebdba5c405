package engine

import "github.com/kovara/desktop/engine/setup"

// What a run is given is plain data in package setup, so the library and
// the manifest reader can build it without this package; the engine uses
// it under these names.
type (
	Plan       = setup.Plan
	Conditions = setup.Conditions
	Endpoint   = setup.Endpoint
	Base       = setup.Base
)

// The Kovara method's defaults (setup.DefaultPlan).
const (
	DefaultInputTokens  = setup.DefaultInputTokens
	DefaultOutputTokens = setup.DefaultOutputTokens
	DefaultRequests     = setup.DefaultRequests
	DefaultWarmup       = setup.DefaultWarmup
	DefaultSeed         = setup.DefaultSeed
	DefaultTimeout      = setup.DefaultTimeout
)
