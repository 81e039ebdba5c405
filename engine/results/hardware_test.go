package results

import (
	"fmt"
	"testing"
)

func TestClockEventNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mask uint64
		want string
	}{
		{0, "[]"},
		{0x1, "[gpu_idle]"},
		{0x4, "[sw_power_cap]"},
		{0xa4, "[sw_power_cap sw_thermal_slowdown hw_power_brake_slowdown]"},
		{0x1ff, "[gpu_idle applications_clocks_setting sw_power_cap hw_slowdown sync_boost sw_thermal_slowdown hw_thermal_slowdown hw_power_brake_slowdown display_clock_setting]"},
		{0x1004, "[sw_power_cap other]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(ClockEventNames(tt.mask)); got != tt.want {
			t.Errorf("%#x: got %s, want %s", tt.mask, got, tt.want)
		}
	}
	if got := SlowdownMask(); got != 0x4|0x8|0x20|0x40|0x80 {
		t.Errorf("slowdown mask %#x", got)
	}
}

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
			for _, f := range tt.tel.HardwareFindings(8) {
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
