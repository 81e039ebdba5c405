package hw

import "github.com/kovara/desktop/engine/results"

// The JSON types of local.telemetry belong to the results format
// (engine/results/telemetry.go); hw measures them under these names.
type (
	GPU            = results.GPU
	LevelEnergy    = results.LevelEnergy
	GPUEnergy      = results.GPUEnergy
	LevelTelemetry = results.LevelTelemetry
	Telemetry      = results.Telemetry
	Series         = results.Series
	Kind           = results.GPUSourceKind
)

// The kinds of source ParseSource returns.
const (
	KindLocal    = results.GPUSourceLocal    // nvidia-smi on this machine
	KindSSH      = results.GPUSourceSSH      // nvidia-smi on another machine through ssh
	KindExporter = results.GPUSourceExporter // a Prometheus GPU exporter's /metrics page
)
