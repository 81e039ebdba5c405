package results

import "github.com/kovara/desktop/telemetry"

// The GPU telemetry a results file records in local.telemetry and the wall
// plug's in local.wall are part of this format; their types live in
// package telemetry, below both this package and hw (which measures them),
// and are named here as the documents' other fields are.
type (
	GPUSourceKind    = telemetry.GPUSourceKind
	GPU              = telemetry.GPU
	LevelEnergy      = telemetry.LevelEnergy
	GPUEnergy        = telemetry.GPUEnergy
	LevelTelemetry   = telemetry.LevelTelemetry
	HostLevel        = telemetry.HostLevel
	HostMemory       = telemetry.HostMemory
	GPUProcesses     = telemetry.GPUProcesses
	GPUProcess       = telemetry.GPUProcess
	Telemetry        = telemetry.Telemetry
	Series           = telemetry.Series
	WallTelemetry    = telemetry.WallTelemetry
	WallSeries       = telemetry.WallSeries
	WallLevel        = telemetry.WallLevel
	ClockEventReason = telemetry.ClockEventReason
)

// The kinds of GPU source.
const (
	GPUSourceLocal    = telemetry.GPUSourceLocal
	GPUSourceSSH      = telemetry.GPUSourceSSH
	GPUSourceExporter = telemetry.GPUSourceExporter
	ClockEventOther   = telemetry.ClockEventOther
)
