package results

import (
	"fmt"
	"slices"
	"testing"
)

func TestHardwareFindings(t *testing.T) {
	t.Parallel()
	share := func(v float64) *float64 { return &v }
	level := func(dur float64, le LevelEnergy) *Telemetry {
		le.DurationS = dur
		return &Telemetry{Levels: map[int]LevelTelemetry{8: {Concurrency: 8, LevelEnergy: le}}}
	}
	tests := []struct {
		name string
		tel  *Telemetry
		want []string // "severity GPU reason share: text"
	}{
		{name: "nil telemetry", tel: nil},
		{name: "a level not measured", tel: &Telemetry{Levels: map[int]LevelTelemetry{}}},
		{name: "a source without reasons", tel: level(60, LevelEnergy{GPUs: []GPUEnergy{{Index: 0}}})},
		{name: "no slowdown", tel: level(60, LevelEnergy{ThrottledShare: share(0), ClockEventS: map[string]float64{"gpu_idle": 3},
			GPUs: []GPUEnergy{{Index: 0, ThrottledShare: share(0)}}})},
		{name: "power cap for 42 %", tel: level(100, LevelEnergy{ThrottledShare: share(0.42), ClockEventS: map[string]float64{"sw_power_cap": 42, "gpu_idle": 1},
			GPUs: []GPUEnergy{{Index: 0, ThrottledShare: share(0.42), ClockEventS: map[string]float64{"sw_power_cap": 42, "gpu_idle": 1}}}}),
			want: []string{"problem -1 sw_power_cap 0.42: the GPU slowed itself for its power cap for 42 % of this level: this level and later ones may read slower for that, not for the load"}},
		{name: "exactly 10 % is a note", tel: level(60, LevelEnergy{ThrottledShare: share(0.1), ClockEventS: map[string]float64{"sw_thermal_slowdown": 6}}),
			want: []string{"note -1 sw_thermal_slowdown 0.10: the GPU slowed itself for heat for 10 % of this level, too little to move its figures much"}},
		{name: "a moment of power brake", tel: level(120, LevelEnergy{ThrottledShare: share(0.004), ClockEventS: map[string]float64{"hw_power_brake_slowdown": 0.5}}),
			want: []string{"note -1 hw_power_brake_slowdown 0.00: the GPU slowed itself for the power supply's brake for 0.4 % of this level, too little to move its figures much"}},
		{name: "two GPUs named, problems first", tel: level(50, LevelEnergy{ThrottledShare: share(0.9), ClockEventS: map[string]float64{"sw_power_cap": 45, "hw_thermal_slowdown": 2},
			GPUs: []GPUEnergy{
				{Index: 0, ThrottledShare: share(0.04), ClockEventS: map[string]float64{"hw_thermal_slowdown": 2}},
				{Index: 1, ThrottledShare: share(0.9), ClockEventS: map[string]float64{"sw_power_cap": 45}},
			}}),
			want: []string{
				"problem 1 sw_power_cap 0.90: GPU 1 slowed itself for its power cap for 90 % of this level: this level and later ones may read slower for that, not for the load",
				"note 0 hw_thermal_slowdown 0.04: GPU 0 slowed itself for heat at its hardware limit for 4 % of this level, too little to move its figures much",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range HardwareFindings(tt.tel, 8) {
				if f.Level != 8 {
					t.Errorf("level %d", f.Level)
				}
				got = append(got, fmt.Sprintf("%s %d %s %.2f: %s", f.Severity, f.GPU, f.Reason, f.Share, f.Text))
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestHostFindings(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	const mib = 1 << 20
	mem := &HostMemory{MemTotalMiB: f64(32768)}
	level := func(h *HostLevel, m *HostMemory) *Telemetry {
		return &Telemetry{HostMemory: m, Levels: map[int]LevelTelemetry{8: {Concurrency: 8, LevelEnergy: LevelEnergy{DurationS: 60}, Host: h}}}
	}
	tests := []struct {
		name string
		tel  *Telemetry
		want []string // "severity reason MiB: text"
	}{
		{name: "no memory readings", tel: level(nil, mem)},
		{name: "no swap, plenty available", tel: level(&HostLevel{SwapInBytes: i64(0), SwapOutBytes: i64(0), MinMemAvailableMiB: f64(20000)}, mem)},
		{name: "under a MiB is housekeeping", tel: level(&HostLevel{SwapInBytes: i64(mib - 1), SwapOutBytes: i64(512 << 10)}, mem)},
		{name: "12 MiB out is a note", tel: level(&HostLevel{SwapInBytes: i64(0), SwapOutBytes: i64(12 * mib)}, mem),
			want: []string{"note swap 12: the server's machine swapped 12 MiB out during this level, too little to move its figures much"}},
		{name: "exactly 64 MiB is a note", tel: level(&HostLevel{SwapInBytes: i64(64 * mib)}, mem),
			want: []string{"note swap 64: the server's machine swapped 64 MiB in during this level, too little to move its figures much"}},
		{name: "1.2 GiB in is a problem", tel: level(&HostLevel{SwapInBytes: i64(1288 * mib), SwapOutBytes: i64(300 * mib), MinMemAvailableMiB: f64(900)}, mem),
			want: []string{
				"problem swap 1588: the server's machine swapped 1.3 GiB in and 300 MiB out during this level: its memory is short, and the figures include waiting on the disk — give the server less to hold (a smaller context or model) or close other programs",
				"note low_memory 900: the server's machine had as little as 900 MiB of its 32.0 GiB of memory available during this level: close to swapping, and a memory-mapped model may have been read from disk again",
			}},
		{name: "65 MiB out is a problem", tel: level(&HostLevel{SwapOutBytes: i64(65 * mib)}, mem),
			want: []string{"problem swap 65: the server's machine swapped 65 MiB out during this level: its memory is short, and the figures include waiting on the disk — give the server less to hold (a smaller context or model) or close other programs"}},
		{name: "5 % available is not low", tel: level(&HostLevel{MinMemAvailableMiB: f64(32768 * 0.05)}, mem)},
		{name: "low without the machine's total says nothing", tel: level(&HostLevel{MinMemAvailableMiB: f64(10)}, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range HardwareFindings(tt.tel, 8) {
				if f.Level != 8 || f.GPU != -1 {
					t.Errorf("level %d GPU %d", f.Level, f.GPU)
				}
				got = append(got, fmt.Sprintf("%s %s %.0f: %s", f.Severity, f.Reason, f.MiB, f.Text))
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestHardwareFindingsThrottleBeforeSwap(t *testing.T) {
	t.Parallel()
	share, swapped := 0.5, int64(100<<20)
	tel := &Telemetry{Levels: map[int]LevelTelemetry{2: {LevelEnergy: LevelEnergy{DurationS: 10, ThrottledShare: &share, ClockEventS: map[string]float64{"sw_power_cap": 5}},
		Host: &HostLevel{SwapInBytes: &swapped}}}}
	var got []string
	for _, f := range HardwareFindings(tel, 2) {
		got = append(got, string(f.Severity)+" "+f.Reason)
	}
	if want := "[problem sw_power_cap problem swap]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

func TestRunFindings(t *testing.T) {
	t.Parallel()
	f64 := func(v float64) *float64 { return &v }
	inv := []GPU{{Index: 0, MemoryTotalMiB: f64(24576)}, {Index: 1, MemoryTotalMiB: f64(24576)}}
	proc := func(gpu, pid int, name string, mib float64) GPUProcess {
		return GPUProcess{GPU: gpu, PID: pid, Name: name, UsedMiB: f64(mib)}
	}
	tests := []struct {
		name string
		tel  *Telemetry
		want []string // "severity GPU share: text"
	}{
		{name: "nil telemetry"},
		{name: "no lists (not nvidia-smi)", tel: &Telemetry{Inventory: inv}},
		{name: "the server alone on each card", tel: &Telemetry{Inventory: inv, GPUProcesses: &GPUProcesses{
			Start: []GPUProcess{proc(0, 10, "/app/llama-server", 20000), proc(1, 10, "/app/llama-server", 20000)}, End: []GPUProcess{proc(0, 10, "/app/llama-server", 20480)}}}},
		{name: "a desktop beside the server is a note", tel: &Telemetry{Inventory: inv, GPUProcesses: &GPUProcesses{
			Start: []GPUProcess{proc(0, 10, "/app/llama-server", 20000), proc(0, 3, "/usr/lib/xorg/Xorg", 312)}, End: []GPUProcess{}}}},
		{name: "another model is a problem, the lists together", tel: &Telemetry{Inventory: inv, GPUProcesses: &GPUProcesses{
			Start: []GPUProcess{proc(0, 10, "/app/llama-server", 17612), proc(0, 3, "/usr/lib/xorg/Xorg", 312)},
			End:   []GPUProcess{proc(0, 10, "/app/llama-server", 17612), proc(0, 77, "/usr/bin/python3", 6246), proc(1, 10, "llama-server", 17000)}}}},
		{name: "names blanked (a shared report)", tel: &Telemetry{Inventory: inv, GPUProcesses: &GPUProcesses{
			Start: []GPUProcess{proc(0, 10, "", 17612), proc(0, 77, "", 6246), proc(0, 3, "", 312)}}}},
		{name: "a card of unknown size: a note", tel: &Telemetry{GPUProcesses: &GPUProcesses{
			End: []GPUProcess{proc(0, 10, `C:\Ollama\ollama.exe`, 9000), {GPU: 0, PID: 11, Name: "python.exe"}}}}},
	}
	tests[3].want = []string{"note 0 0.01: another program holds 312 MiB of GPU 0's 24.0 GiB beside the largest, presumably the server (llama-server, 19.5 GiB): Xorg 312 MiB, too little to move the figures much"}
	tests[4].want = []string{"problem 0 0.27: 2 other programs hold 6.4 GiB of GPU 0's 24.0 GiB beside the largest, presumably the server (llama-server, 17.2 GiB): python3 6.1 GiB, Xorg 312 MiB — memory the server could not have, and work that may have shared the card: stop them for a measurement of the server alone"}
	tests[5].want = []string{"problem 0 0.27: 2 other programs hold 6.4 GiB of GPU 0's 24.0 GiB beside the largest, presumably the server (17.2 GiB) — memory the server could not have, and work that may have shared the card: stop them for a measurement of the server alone"}
	tests[6].want = []string{"note 0 0.00: another program is on GPU 0 beside the largest, presumably the server (ollama.exe, 8.8 GiB): python.exe; nvidia-smi did not say how much memory they hold"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range RunFindings(tt.tel) {
				if f.Reason != FindingOtherPrograms {
					t.Errorf("reason %s", f.Reason)
				}
				got = append(got, fmt.Sprintf("%s %d %.2f: %s", f.Severity, f.GPU, f.Share, f.Text))
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// Cards that slowed alike are said once, and cards that did not alike
// each: two GPUs capped for 82 % of a level are one problem, a third
// capped for 30 % its own.
func TestCardsSlowedAlikeSaidOnce(t *testing.T) {
	share := func(s float64) *float64 { return &s }
	lv := LevelTelemetry{LevelEnergy: LevelEnergy{DurationS: 10, ThrottledShare: share(0.82), ClockEventS: map[string]float64{"sw_power_cap": 8.2},
		GPUs: []GPUEnergy{
			{Index: 0, ThrottledShare: share(0.82), ClockEventS: map[string]float64{"sw_power_cap": 8.2}},
			{Index: 1, ThrottledShare: share(0.82), ClockEventS: map[string]float64{"sw_power_cap": 8.2}},
			{Index: 2, ThrottledShare: share(0.3), ClockEventS: map[string]float64{"sw_power_cap": 3}},
		}}}
	tel := &Telemetry{Levels: map[int]LevelTelemetry{8: lv}}
	var got []string
	for _, f := range HardwareFindings(tel, 8) {
		got = append(got, f.Text)
	}
	want := []string{
		"GPUs 0 and 1 slowed themselves for their power cap for 82 % of this level: this level and later ones may read slower for that, not for the load",
		"GPU 2 slowed itself for its power cap for 30 % of this level: this level and later ones may read slower for that, not for the load",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
