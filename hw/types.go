package hw

import "github.com/kovara/desktop/telemetry"

// The JSON types of local.telemetry belong to the results format, in
// its part below this package (package telemetry); hw measures them
// under these names.
type (
	GPU            = telemetry.GPU
	LevelEnergy    = telemetry.LevelEnergy
	GPUEnergy      = telemetry.GPUEnergy
	LevelTelemetry = telemetry.LevelTelemetry
	Telemetry      = telemetry.Telemetry
	Series         = telemetry.Series
	Kind           = telemetry.GPUSourceKind
)

// The kinds of source ParseSource returns.
const (
	KindLocal    = telemetry.GPUSourceLocal    // nvidia-smi on this machine
	KindSSH      = telemetry.GPUSourceSSH      // nvidia-smi on another machine through ssh
	KindExporter = telemetry.GPUSourceExporter // a Prometheus GPU exporter's /metrics page
)
