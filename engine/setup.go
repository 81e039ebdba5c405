package engine

import "github.com/kovara/desktop/engine/setup"

// What a run is given is plain data in package setup, so the library and
// the manifest reader can build it without this package. Every plan's
// inputs are setup's (setup.KovaraPlan, setup.RatePlan, …) and named so
// here too; the endpoint's are used under these names.
type (
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
