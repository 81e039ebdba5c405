package hw

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// allSMIAppleWithPower is the captured (assembled) Apple lines of all-smi
// with the Apple Silicon series its src/api/metrics/gpu.rs writes beside
// them (all_smi_combined_power_watts, all_smi_ane_power_watts,
// all_smi_thermal_pressure_info{level}), in the same form: stand-in values,
// as no real page with them was found.
func allSMIAppleWithPower(t *testing.T, level string) string {
	return capturedText(t, "all_smi_gpu_apple_zero_lines_from_metrics_parser_test.prom") +
		`all_smi_combined_power_watts{gpu="Apple M2 Max GPU", instance="mac-1", gpu_uuid="AppleSiliconGPU", gpu_index="0"} 21.5
all_smi_ane_power_watts{gpu="Apple M2 Max GPU", instance="mac-1", gpu_uuid="AppleSiliconGPU", gpu_index="0"} 0.25
all_smi_thermal_pressure_info{gpu="Apple M2 Max GPU", instance="mac-1", gpu_uuid="AppleSiliconGPU", gpu_index="0", level="` + level + `"} 1
`
}

func TestAllSMIExporterPages(t *testing.T) {
	t.Parallel()
	h200 := capturedText(t, "all_smi_gpu_h200_lines_from_metrics_parser_test.prom")
	tests := []struct {
		name   string
		page   string
		info   []string // "index name total-MiB driver"
		want   []Sample
		events []uint64
		err    string
	}{
		{name: "captured page of a machine without GPUs",
			page: capturedText(t, "all_smi_metrics_container_no_gpu_repo_f3745e2.prom"),
			err:  "lists no GPUs"},
		{name: "H200 lines (older index/uuid labels)", page: h200,
			info:   []string{"0 NVIDIA H200 141GB HBM3 32768 -"},
			want:   []Sample{{GPU: 0, Valid: FieldPower | FieldUtil | FieldMemUsed | FieldTemp, PowerW: 400.5, UtilPct: 25.5, MemUsedMiB: 8192, TempC: 65}},
			events: []uint64{0}},
		{name: "Apple without native metrics: memory only, no power (never 0)",
			page:   capturedText(t, "all_smi_gpu_apple_no_native_metrics_lines_from_metrics_parser_test.prom"),
			info:   []string{"0 Apple M2 Max GPU 32768 -"},
			want:   []Sample{{GPU: 0, Valid: FieldMemUsed, MemUsedMiB: 8192}},
			events: []uint64{0}},
		{name: "Apple reporting a real zero: a reading",
			page:   capturedText(t, "all_smi_gpu_apple_zero_lines_from_metrics_parser_test.prom"),
			info:   []string{"0 Apple M2 Max GPU - -"},
			want:   []Sample{{GPU: 0, Valid: FieldPower | FieldUtil}},
			events: []uint64{0}},
		{name: "Apple with combined power and Nominal pressure",
			page:   allSMIAppleWithPower(t, "Nominal"),
			info:   []string{"0 Apple M2 Max GPU - -"},
			want:   []Sample{{GPU: 0, Valid: FieldPower | FieldGPUPower | FieldANEPower | FieldUtil | FieldClockEvents, PowerW: 21.5, ANEPowerW: 0.25}},
			events: []uint64{0}},
		{name: "Apple under Heavy pressure: slowed for heat",
			page:   allSMIAppleWithPower(t, "Heavy"),
			info:   []string{"0 Apple M2 Max GPU - -"},
			want:   []Sample{{GPU: 0, Valid: FieldPower | FieldGPUPower | FieldANEPower | FieldUtil | FieldClockEvents, PowerW: 21.5, ANEPowerW: 0.25}},
			events: []uint64{0x20}},
		{name: "more GPUs in current labels, HELP repeated per series as all-smi writes it, an NPU left out",
			page: h200 + `all_smi_gpu_info{gpu="NVIDIA A100", instance="node-1", gpu_uuid="GPU-A", gpu_index="1", driver_version="550.54.15"} 1
# HELP all_smi_gpu_power_consumption_watts GPU power consumption in watts (omitted when the device reports no power)
# TYPE all_smi_gpu_power_consumption_watts gauge
all_smi_gpu_power_consumption_watts{gpu="NVIDIA A100", instance="node-1", gpu_uuid="GPU-A", gpu_index="1"} 250
# HELP all_smi_gpu_power_consumption_watts GPU power consumption in watts (omitted when the device reports no power)
# TYPE all_smi_gpu_power_consumption_watts gauge
all_smi_gpu_power_consumption_watts{gpu="NVIDIA A100", instance="node-2", gpu_uuid="GPU-B", gpu_index="2"} 260
all_smi_gpu_power_limit_current_watts{gpu="NVIDIA A100", instance="node-1", gpu_uuid="GPU-A", gpu_index="1"} 400
all_smi_gpu_frequency_mhz{gpu="NVIDIA A100", instance="node-1", gpu_uuid="GPU-A", gpu_index="1"} 1410
all_smi_gpu_pcie_gen_current{gpu="NVIDIA A100", instance="node-1", gpu_uuid="GPU-A", gpu_index="1"} 4
all_smi_gpu_utilization{gpu="Tenstorrent Wormhole n150s", instance="node-7", npu_uuid="NPU-A", npu_index="0"} 33.3
`,
			info: []string{"0 NVIDIA H200 141GB HBM3 32768 -", "1 NVIDIA A100 - 550.54.15", "2 NVIDIA A100 - -"},
			want: []Sample{
				{GPU: 0, Valid: FieldPower | FieldUtil | FieldMemUsed | FieldTemp, PowerW: 400.5, UtilPct: 25.5, MemUsedMiB: 8192, TempC: 65},
				{GPU: 1, Valid: FieldPower | FieldSMClock | FieldPCIeGen, PowerW: 250, SMClockMHz: 1410, PCIeGen: 4},
				{GPU: 2, Valid: FieldPower, PowerW: 260},
			},
			events: []uint64{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, err := parseExporterPage([]byte(tt.page))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != len(tt.want) {
				t.Fatalf("got %d GPUs, want %d", len(gs), len(tt.want))
			}
			for i, g := range gs {
				total, driver := "-", "-"
				if g.info.MemoryTotalMiB != nil {
					total = strconv.FormatFloat(*g.info.MemoryTotalMiB, 'f', -1, 64)
				}
				if g.info.DriverVersion != "" {
					driver = g.info.DriverVersion
				}
				if got := fmt.Sprintf("%d %s %s %s", g.info.Index, g.info.Name, total, driver); got != tt.info[i] {
					t.Errorf("inventory %q, want %q", got, tt.info[i])
				}
				if !sameSample(g.reading, tt.want[i]) || g.reading.ClockEvents != tt.events[i] || g.reading.PCIeGen != tt.want[i].PCIeGen {
					t.Errorf("got  %+v\nwant %+v (clock events %#x)", g.reading, tt.want[i], tt.events[i])
				}
				all := fmt.Sprintf("%+v %+v", g.info, g.reading)
				for _, never := range []string{"GPU-12345", "GPU-A", "GPU-B", "AppleSiliconGPU", "node-0058", "mac-1", "NPU-A"} {
					if strings.Contains(all, never) {
						t.Errorf("%s left the parser: %s", never, all)
					}
				}
			}
		})
	}
}
