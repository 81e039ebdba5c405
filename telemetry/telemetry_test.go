package telemetry

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
