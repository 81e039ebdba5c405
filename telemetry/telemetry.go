// Package telemetry holds what the hardware read during a run, as a
// results file records it in local.telemetry and local.wall: the cards,
// energy per level, host memory, the other programs on the cards, a
// chart-ready series, and the clock event reasons' bits. It is the part of
// the results format that both package hw (which reads the hardware) and
// engine/results (whose documents hold it) use, kept below both so that hw
// imports nothing of the engine; engine/results names these types with
// aliases.
package telemetry

import (
	"fmt"
	"slices"
	"strings"
)

// GPUSourceKind says where GPU readings come from.
type GPUSourceKind string

// The kinds of source ParseSource returns.
const (
	GPUSourceLocal    GPUSourceKind = "local"    // nvidia-smi on this machine
	GPUSourceSSH      GPUSourceKind = "ssh"      // nvidia-smi on another machine through ssh
	GPUSourceExporter GPUSourceKind = "exporter" // a Prometheus GPU exporter's /metrics page
)

// GPU is one card as found at the start of a run. It never holds a serial
// number or a UUID. Pointer fields are nil (JSON null) when the source could
// not say.
type GPU struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	PCIBusID    string `json:"pci_bus_id,omitempty"`    // "0000:41:00.0"
	PCIDeviceID string `json:"pci_device_id,omitempty"` // vendor:device, "10de:2684"
	// PCIDeviceIDFrom says where PCIDeviceID came from: "lspci" or
	// "nvidia-smi" (its pci.device_id, also what nvidia_gpu_exporter shows).
	PCIDeviceIDFrom  string   `json:"pci_device_id_from,omitempty"`
	MemoryTotalMiB   *float64 `json:"memory_total_mib"`
	PCIeGenCurrent   *int     `json:"pcie_gen_current"` // at inventory time; links drop when idle
	PCIeWidthCurrent *int     `json:"pcie_width_current"`
	PCIeGenMax       *int     `json:"pcie_gen_max"`
	PCIeWidthMax     *int     `json:"pcie_width_max"`
	PowerLimitW      *float64 `json:"power_limit_w"`
	DriverVersion    string   `json:"driver_version,omitempty"`
	// SMClockMaxMHz is the SM clock's maximum (nvidia-smi's
	// clocks.max.sm), what each level's sm_clock_share divides by; absent
	// where the source does not say.
	SMClockMaxMHz *float64 `json:"sm_clock_max_mhz,omitempty"`
}

// String is one line for the UI: "GPU 0: NVIDIA GeForce RTX 4090, 24564 MiB,
// PCIe 4 x16 (max 4 x16), 450 W limit, driver 550.54.14".
func (g GPU) String() string {
	parts := []string{fmt.Sprintf("GPU %d: %s", g.Index, g.DisplayName())}
	if g.MemoryTotalMiB != nil {
		parts = append(parts, fmt.Sprintf("%.0f MiB", *g.MemoryTotalMiB))
	}
	if link := linkWords(g.PCIeGenCurrent, g.PCIeWidthCurrent); link != "" {
		if max := linkWords(g.PCIeGenMax, g.PCIeWidthMax); max != "" && max != link {
			link += " (max " + max + ")"
		}
		parts = append(parts, "PCIe "+link)
	}
	if g.PowerLimitW != nil {
		parts = append(parts, fmt.Sprintf("%.0f W limit", *g.PowerLimitW))
	}
	if g.DriverVersion != "" {
		parts = append(parts, "driver "+g.DriverVersion)
	}
	return strings.Join(parts, ", ")
}

// DisplayName is the card's name, or "unknown GPU" when the source did not
// say.
func (g GPU) DisplayName() string {
	if g.Name == "" {
		return "unknown GPU"
	}
	return g.Name
}

func linkWords(gen, width *int) string {
	switch {
	case gen != nil && width != nil:
		return fmt.Sprintf("%d x%d", *gen, *width)
	case gen != nil:
		return fmt.Sprintf("gen %d", *gen)
	case width != nil:
		return fmt.Sprintf("x%d", *width)
	}
	return ""
}

// LevelEnergy is what the GPUs did during one level's window. Pointer
// fields are nil (JSON null) when the readings could not support them.
type LevelEnergy struct {
	DurationS float64 `json:"duration_s"` // the window's length
	// Samples is the number of ticks (one reading of every GPU) inside the
	// window.
	Samples int `json:"samples"`
	// MaxGapS is the longest stretch of the window without a power reading
	// from some chosen GPU, edges included. Compare it with the sampling
	// interval: much larger means the energy leans on interpolation.
	MaxGapS float64 `json:"max_gap_s"`
	// EnergyJ is the trapezoidal integral of total power over the window.
	EnergyJ    *float64 `json:"energy_j"`
	MeanPowerW *float64 `json:"mean_power_w"` // EnergyJ / DurationS
	PeakPowerW *float64 `json:"peak_power_w"` // highest total over the window's ticks
	// MeanUtilPct is the mean of the GPUs' mean utilisation.
	MeanUtilPct *float64    `json:"mean_util_pct"`
	GPUs        []GPUEnergy `json:"gpus"`

	// What the cards did beside drawing power (issue #50). Absent where the
	// source does not say: only nvidia-smi gives clock event reasons.
	//
	// ClockEventS is, by reason (ClockEventReasons' names: "sw_power_cap",
	// "hw_thermal_slowdown", "gpu_idle", …), the seconds of the window in
	// which any chosen GPU reported it. Each GPU's reading holds from its
	// time to its next reading, the first held back to the window's start
	// and the last on to its end (the rule Energy uses at the edges); a
	// level whose readings stop more than five intervals short of either
	// edge has none. Reasons never active are left out; an empty map (or
	// none) with ThrottledShare 0 means no reason was reported.
	ClockEventS map[string]float64 `json:"clock_event_s,omitempty"`
	// ThrottledShare is the share of the window (0 to 1) in which any
	// chosen GPU reported a slowdown reason: its power cap, a thermal
	// slowdown, a hardware slowdown or a power brake (ClockEventReason.
	// Slowdown). Idle, application clocks, sync boost and display clocks
	// are not throttling. nil where the source gives no reasons.
	ThrottledShare *float64 `json:"throttled_share,omitempty"`
	// SMClockShare is the mean over the GPUs of their SMClockShare.
	SMClockShare *float64 `json:"sm_clock_share,omitempty"`
	// PeakTempC is the hottest reading of any chosen GPU in the window.
	PeakTempC *float64 `json:"peak_temp_c,omitempty"`
}

// GPUEnergy is one GPU's share of a level.
type GPUEnergy struct {
	Index       int      `json:"index"`
	EnergyJ     *float64 `json:"energy_j"`
	MeanPowerW  *float64 `json:"mean_power_w"`
	PeakPowerW  *float64 `json:"peak_power_w"`
	MeanUtilPct *float64 `json:"mean_util_pct"`
	// The PCIe link under load: links train down when idle, so the peak
	// inside the level is what the card really ran at.
	PCIeGenPeak   *int     `json:"pcie_gen_peak"`
	PCIeWidthPeak *int     `json:"pcie_width_peak"`
	PeakTempC     *float64 `json:"peak_temp_c"`
	PeakMemMiB    *float64 `json:"peak_mem_used_mib"`

	// ClockEventS and ThrottledShare are LevelEnergy's, for this GPU
	// alone.
	ClockEventS    map[string]float64 `json:"clock_event_s,omitempty"`
	ThrottledShare *float64           `json:"throttled_share,omitempty"`
	// MeanSMClockMHz is the plain mean of the SM clock readings inside the
	// window; SMClockShare is it against the card's maximum
	// (GPU.SMClockMaxMHz), 0 to 1 — below 1 while busy means the card ran
	// slower than it can, for a reason in ClockEventS or one not reported.
	MeanSMClockMHz *float64 `json:"mean_sm_clock_mhz,omitempty"`
	SMClockShare   *float64 `json:"sm_clock_share,omitempty"`
}

// TokensPerJoule is output tokens per joule of GPU energy; 0 when the
// energy is unknown or zero or there were no tokens.
func (e LevelEnergy) TokensPerJoule(outputTokens int64) float64 {
	if e.EnergyJ == nil || *e.EnergyJ <= 0 || outputTokens <= 0 {
		return 0
	}
	return float64(outputTokens) / *e.EnergyJ
}

// JoulesPerToken is GPU energy per output token; 0 when unknown.
func (e LevelEnergy) JoulesPerToken(outputTokens int64) float64 {
	if e.EnergyJ == nil || *e.EnergyJ <= 0 || outputTokens <= 0 {
		return 0
	}
	return *e.EnergyJ / float64(outputTokens)
}

// LevelTelemetry is one level's entry in Telemetry.Levels.
type LevelTelemetry struct {
	Concurrency int `json:"concurrency"`
	// StartS and EndS are the level's window in seconds from the run's
	// start, where the power chart marks it; 0 in older files.
	StartS float64 `json:"start_s,omitempty"`
	EndS   float64 `json:"end_s,omitempty"`
	LevelEnergy
	OutputTokens   int64    `json:"output_tokens"`
	TokensPerJoule *float64 `json:"tokens_per_joule"`
	JoulesPerToken *float64 `json:"joules_per_token"`
	// Host is what the server's machine's memory did during the level
	// (issue #50): read from its /proc by a local or ssh source; absent
	// for an exporter, a machine without /proc (a Mac) or a level the
	// readings do not cover.
	Host *HostLevel `json:"host,omitempty"`
}

// HostLevel is the server machine's memory over one level's window, from
// /proc/vmstat's pswpin and pswpout and /proc/meminfo, read once per
// sampling interval.
type HostLevel struct {
	// Samples is the number of readings inside the window.
	Samples int `json:"samples"`
	// SwapInBytes and SwapOutBytes are the bytes the kernel swapped in
	// (read back from swap) and out during the window: the counters
	// interpolated at the window's edges, held flat before the first
	// reading and after the last. nil where the machine's vmstat has no
	// such counter.
	SwapInBytes  *int64 `json:"swap_in_bytes,omitempty"`
	SwapOutBytes *int64 `json:"swap_out_bytes,omitempty"`
	// MinMemAvailableMiB is the least MemAvailable read inside the window
	// (the kernel's estimate of what can be had without swapping).
	MinMemAvailableMiB *float64 `json:"min_mem_available_mib,omitempty"`
	// PeakSwapUsedMiB is the most swap in use (SwapTotal − SwapFree) read
	// inside the window; nil without swap.
	PeakSwapUsedMiB *float64 `json:"peak_swap_used_mib,omitempty"`
}

// HostMemory is the server machine's memory as first read in a run.
type HostMemory struct {
	MemTotalMiB  *float64 `json:"mem_total_mib,omitempty"`
	SwapTotalMiB *float64 `json:"swap_total_mib,omitempty"`
}

// GPUProcesses are the programs holding memory on the chosen GPUs, as
// nvidia-smi --query-compute-apps listed them at the start and at the end
// of a run (compute programs only: a desktop's Xorg is listed where it
// uses CUDA, not for drawing). nil Start or End: that reading failed; an
// empty list: none. Local only: the names are the person's programs, and
// a shared report must blank them (the findings then say "programs"
// without names).
type GPUProcesses struct {
	Start []GPUProcess `json:"start"`
	End   []GPUProcess `json:"end"`
}

// GPUProcess is one program on one GPU.
type GPUProcess struct {
	GPU int `json:"gpu"`
	PID int `json:"pid"`
	// Name is the program as nvidia-smi names it ("/usr/bin/python3",
	// "ollama.exe"); "" where it could not say ([Not Found]: a program in
	// another PID namespace, such as a container).
	Name string `json:"name"`
	// UsedMiB is its memory on the card; nil where nvidia-smi gives
	// [N/A] (Windows' WDDM driver model).
	UsedMiB *float64 `json:"used_mib"`
}

// Telemetry is the results file's local.telemetry: where the readings came
// from (never with credentials), the cards, energy per level keyed by
// concurrency, what went wrong, and a thinned series for charts.
type Telemetry struct {
	Source GPUSourceKind `json:"source"` // local, ssh or exporter
	// Tool is what a local or ssh source found and read: nvidia-smi,
	// amd-smi, amdgpu (the driver's sysfs files), macmon or xpu-smi.
	Tool       string                 `json:"tool,omitempty"`
	Host       string                 `json:"host"` // no user, password or path
	GPUs       []int                  `json:"gpus,omitempty"`
	IntervalMS int64                  `json:"interval_ms"`
	Inventory  []GPU                  `json:"inventory"`
	Levels     map[int]LevelTelemetry `json:"levels"`
	Warnings   []string               `json:"warnings"`
	Series     Series                 `json:"series"`
	// HostMemory is the server machine's memory and swap (local and ssh
	// sources on a machine with /proc); GPUProcesses the programs on its
	// cards (nvidia-smi). Both absent where the source cannot say.
	HostMemory   *HostMemory   `json:"host_memory,omitempty"`
	GPUProcesses *GPUProcesses `json:"gpu_processes,omitempty"`
}

// Series is a compact, chart-ready record: one column per reading, one row
// per bucket, null where a bucket had no such reading. Power is the total
// over the chosen GPUs, utilisation and SM clock their mean, memory their
// sum, temperature the hottest.
type Series struct {
	BucketS float64 `json:"bucket_s"`
	// ZeroS is where t_s 0 falls in seconds from the run's start (the
	// sampler starts after the inventory is read); 0 in older files.
	ZeroS      float64    `json:"zero_s,omitempty"`
	TS         []float64  `json:"t_s"` // mean time of the bucket's ticks, since the sampler started
	PowerW     []*float64 `json:"power_w"`
	UtilPct    []*float64 `json:"util_pct"`
	MemUsedMiB []*float64 `json:"mem_used_mib"`
	TempC      []*float64 `json:"temp_c"`
	SMClockMHz []*float64 `json:"sm_clock_mhz"`
}

// WallTelemetry is what the smart plug on the server's lead saw during a
// run (hw.Wall): what the electricity bill sees, the whole machine.
type WallTelemetry struct {
	Family     string `json:"family"` // hw.WallFamily
	Host       string `json:"host"`
	IntervalMS int64  `json:"interval_ms"`
	// IdleW is the plug's mean power over IdleS seconds read before
	// anything was sent; nil when it read nothing then.
	IdleS float64  `json:"idle_s"`
	IdleW *float64 `json:"idle_w"`
	// Levels by the same key as Telemetry.Levels.
	Levels   map[int]WallLevel `json:"levels"`
	Warnings []string          `json:"warnings"`
	// Series is every reading, for the power-over-time chart; nil in
	// files written before it was kept.
	Series *WallSeries `json:"series,omitempty"`
}

// WallSeries is the plug's readings over the run: times in seconds from
// the run's start (the same zero as each level's start_s and end_s).
type WallSeries struct {
	TS     []float64 `json:"t_s"`
	PowerW []float64 `json:"power_w"`
}

// WallLevel is one level's wall power and energy, whole (the bill) and
// above idle (the load's own cost), with output tokens per joule of
// each. Pointers are nil where the readings could not support them.
type WallLevel struct {
	// StartS and EndS are the level's window in seconds from the run's
	// start, where the power chart marks it.
	StartS    float64 `json:"start_s,omitempty"`
	EndS      float64 `json:"end_s,omitempty"`
	DurationS float64 `json:"duration_s"`
	// OutputTokens are the window's output tokens, what tokens per joule
	// divides.
	OutputTokens int64    `json:"output_tokens,omitempty"`
	Samples      int      `json:"samples"`
	MeanPowerW   *float64 `json:"mean_power_w"`
	EnergyJ      *float64 `json:"energy_j"`
	AboveIdleW   *float64 `json:"above_idle_w"`
	AboveIdleJ   *float64 `json:"above_idle_j"`
	// TokensPerJoule is output tokens per joule at the wall;
	// TokensPerJouleAboveIdle per joule above idle (nil where the level
	// drew nothing above it).
	TokensPerJoule          *float64 `json:"tokens_per_joule"`
	TokensPerJouleAboveIdle *float64 `json:"tokens_per_joule_above_idle"`
	// Short: fewer than three of the plug's readings fell in the level,
	// so its figure leans on the line between them.
	Short bool `json:"short,omitempty"`
}

// ClockEventReason is one bit of NVML's clock event reasons, the bitmask
// nvidia-smi gives as clocks_event_reasons.active (clocks_throttle_reasons.
// active before driver R535) and dcgm as DCGM_FI_DEV_CLOCKS_EVENT_REASONS.
type ClockEventReason struct {
	Bit uint64
	// Name is its key in LevelEnergy.ClockEventS: nvidia-smi's own name for
	// the field (clocks_event_reasons.<name>).
	Name string
	// Slowdown: the card lowered its clocks below what the work asked for
	// (power cap, heat, a hardware slowdown or power brake). The others are
	// settings or rest — idle, application clocks, sync boost, display
	// clocks — and are not throttling.
	Slowdown bool
	// Words finish "the GPU slowed itself for …".
	Words string
	// Short names it in a table's cell and a chart's legend ("power cap").
	Short string
}

// ClockEventReasons are NVML's documented bits (nvml.h,
// nvmlClocksEventReasons; the same values in every driver since the
// reasons were named "throttle"). Bits outside them count under
// ClockEventOther.
var ClockEventReasons = []ClockEventReason{
	{0x1, "gpu_idle", false, "having nothing to run", "idle"},
	{0x2, "applications_clocks_setting", false, "its application clocks setting", "application clocks"},
	{0x4, "sw_power_cap", true, "its power cap", "power cap"},
	{0x8, "hw_slowdown", true, "a hardware slowdown (heat or the power supply)", "hardware slowdown"},
	{0x10, "sync_boost", false, "its sync boost group", "sync boost"},
	{0x20, "sw_thermal_slowdown", true, "heat", "heat"},
	{0x40, "hw_thermal_slowdown", true, "heat at its hardware limit", "heat (hardware limit)"},
	{0x80, "hw_power_brake_slowdown", true, "the power supply's brake", "power brake"},
	{0x100, "display_clock_setting", false, "its display clocks setting", "display clocks"},
}

// ClockEventOther is the key of bits ClockEventReasons does not name
// (newer drivers add some); they are not counted as throttling.
const ClockEventOther = "other"

// ClockEventNames are the names of the bits set in mask, in
// ClockEventReasons' order, ClockEventOther last.
func ClockEventNames(mask uint64) []string {
	var out []string
	for _, r := range ClockEventReasons {
		if mask&r.Bit != 0 {
			out = append(out, r.Name)
			mask &^= r.Bit
		}
	}
	if mask != 0 {
		out = append(out, ClockEventOther)
	}
	return out
}

// SlowdownMask is the bits of ClockEventReasons that are throttling.
func SlowdownMask() uint64 {
	var m uint64
	for _, r := range ClockEventReasons {
		if r.Slowdown {
			m |= r.Bit
		}
	}
	return m
}

// ReasonNamed is the reason of this name (ClockEventReasons' names).
func ReasonNamed(name string) (ClockEventReason, bool) {
	i := slices.IndexFunc(ClockEventReasons, func(r ClockEventReason) bool { return r.Name == name })
	if i < 0 {
		return ClockEventReason{}, false
	}
	return ClockEventReasons[i], true
}
