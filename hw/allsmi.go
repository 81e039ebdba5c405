package hw

import (
	"bytes"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/kovara/desktop/telemetry"
)

// allSMIFamilies are the all_smi_* families parseAllSMIExporter reads
// (names and units from all-smi's API.md and src/api/metrics/gpu.rs).
var allSMIFamilies = []string{
	"all_smi_gpu_utilization",             // %
	"all_smi_gpu_memory_used_bytes",       // bytes
	"all_smi_gpu_memory_total_bytes",      // bytes
	"all_smi_gpu_temperature_celsius",     // °C
	"all_smi_gpu_power_consumption_watts", // W, the GPU alone
	"all_smi_gpu_frequency_mhz",           // MHz
	"all_smi_gpu_pcie_gen_current",
	"all_smi_gpu_pcie_width_current",
	"all_smi_gpu_power_limit_current_watts", // W
	"all_smi_gpu_clock_graphics_max_mhz",    // MHz
	"all_smi_combined_power_watts",          // W, Apple Silicon: CPU + GPU + ANE
	"all_smi_ane_power_watts",               // W, Apple Silicon
	"all_smi_gpu_info",                      // 1, labels only
	"all_smi_thermal_pressure_info",         // 1, label level (Apple Silicon)
}

// allSMIIndex is a series' GPU index label: gpu_index on current pages,
// index on older ones. An NPU's series (npu_index, npu_uuid) have neither
// and are not read.
func allSMIIndex(m *dto.Metric) string {
	if v := label(m, "gpu_index"); v != "" {
		return v
	}
	return label(m, "index")
}

func allSMIUUID(m *dto.Metric) string {
	if v := label(m, "gpu_uuid"); v != "" {
		return v
	}
	return label(m, "uuid")
}

// parseAllSMIExporter reads all-smi's `api` mode /metrics page. GPUs are
// keyed by their gpu_index label (index on older pages); a page without
// one is joined by the GPU's UUID, which is dropped here, and numbered in
// the UUIDs' order. The card's name is the gpu label, the driver
// all_smi_gpu_info's driver_version. all-smi leaves a series out when the
// device has no reading for it: missing, never 0. On an Apple Silicon Mac
// PowerW is all_smi_combined_power_watts (CPU + GPU + ANE, as macmon's
// all_power) where the page has it, the GPU's own figure beside it;
// all_smi_thermal_pressure_info's level becomes the clock event reasons as
// powermetrics' does. Units: %, bytes, °C, W, MHz.
func parseAllSMIExporter(fams map[string]*dto.MetricFamily) []exporterGPU {
	type build struct {
		key     string
		thermal string
		gpuBuild
	}
	byKey := map[string]*build{}
	for _, name := range allSMIFamilies {
		for _, m := range fams[name].GetMetric() {
			key, idx, hasIdx := "", 0, false
			if id := allSMIIndex(m); id != "" {
				n, ok := smiInt(id)
				if !ok {
					continue
				}
				key, idx, hasIdx = "id:"+id, n, true
			} else if u := allSMIUUID(m); u != "" {
				key = "uuid:" + u
			} else {
				continue
			}
			b := byKey[key]
			if b == nil {
				b = &build{key: key, gpuBuild: gpuBuild{index: idx, hasIndex: hasIdx}}
				byKey[key] = b
			}
			if b.name == "" {
				b.name = strings.TrimSpace(label(m, "gpu"))
			}
			switch name {
			case "all_smi_gpu_info":
				if b.driver == "" {
					b.driver = label(m, "driver_version")
				}
				continue
			case "all_smi_thermal_pressure_info":
				if v, ok := metricValue(m); ok && v > 0 {
					b.thermal = label(m, "level")
				}
				continue
			}
			if v, ok := metricValue(m); ok {
				b.add(name, v, "")
			}
		}
	}
	builds := make([]*build, 0, len(byKey))
	for _, b := range byKey {
		builds = append(builds, b)
	}
	slices.SortFunc(builds, func(a, b *build) int { return strings.Compare(a.key, b.key) })
	next := 0
	for _, b := range builds {
		if !b.hasIndex {
			b.index = next
		}
		next = max(next, b.index+1)
	}
	slices.SortStableFunc(builds, func(a, b *build) int { return a.index - b.index })
	builds = slices.CompactFunc(builds, func(a, b *build) bool { return a.index == b.index })
	const mib = 1 << 20
	var out []exporterGPU
	for _, b := range builds {
		name := b.name
		if name == "" {
			name = "GPU"
		}
		info := telemetry.GPU{Index: b.index, Name: name, DriverVersion: b.driver}
		info.MemoryTotalMiB = floatPtr(b.get("all_smi_gpu_memory_total_bytes").div(mib))
		info.PCIeGenCurrent = intPtr(b.get("all_smi_gpu_pcie_gen_current"))
		info.PCIeWidthCurrent = intPtr(b.get("all_smi_gpu_pcie_width_current"))
		info.PowerLimitW = floatPtr(b.get("all_smi_gpu_power_limit_current_watts"))
		info.SMClockMaxMHz = floatPtr(b.get("all_smi_gpu_clock_graphics_max_mhz"))
		r := Sample{GPU: b.index}
		gpuW, allW := b.get("all_smi_gpu_power_consumption_watts"), b.get("all_smi_combined_power_watts")
		if allW.ok {
			setFloat(&r.PowerW, &r.Valid, FieldPower, allW)
			setFloat(&r.GPUPowerW, &r.Valid, FieldGPUPower, gpuW)
			setFloat(&r.ANEPowerW, &r.Valid, FieldANEPower, b.get("all_smi_ane_power_watts"))
		} else {
			setFloat(&r.PowerW, &r.Valid, FieldPower, gpuW)
		}
		setFloat(&r.UtilPct, &r.Valid, FieldUtil, b.get("all_smi_gpu_utilization"))
		setFloat(&r.MemUsedMiB, &r.Valid, FieldMemUsed, b.get("all_smi_gpu_memory_used_bytes").div(mib))
		setFloat(&r.SMClockMHz, &r.Valid, FieldSMClock, b.get("all_smi_gpu_frequency_mhz"))
		setFloat(&r.TempC, &r.Valid, FieldTemp, b.get("all_smi_gpu_temperature_celsius"))
		setInt(&r.PCIeGen, &r.Valid, FieldPCIeGen, b.get("all_smi_gpu_pcie_gen_current"))
		setInt(&r.PCIeWidth, &r.Valid, FieldPCIeWidth, b.get("all_smi_gpu_pcie_width_current"))
		if m, ok := thermalPressureMask(b.thermal); ok {
			r.ClockEvents = m
			r.Valid |= FieldClockEvents
		}
		out = append(out, exporterGPU{info: info, reading: r})
	}
	return out
}

// withoutHelpAndType drops every "# HELP" and "# TYPE" line of a page, for
// all-smi's, which writes them again before each series of a family (its
// captured page repeats all_smi_disk_total_bytes' for each disk), and the
// strict text parser refuses a second one; without them every series
// reads as untyped, with the same value. changed is false when there was
// none.
func withoutHelpAndType(body []byte) (out []byte, changed bool) {
	out = make([]byte, 0, len(body))
	for _, l := range bytes.SplitAfter(body, []byte("\n")) {
		if f := strings.Fields(string(l)); len(f) >= 2 && f[0] == "#" && (f[1] == "HELP" || f[1] == "TYPE") {
			changed = true
			continue
		}
		out = append(out, l...)
	}
	return out, changed
}
