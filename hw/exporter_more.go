package hw

import (
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/kovara/desktop/telemetry"
)

// amdExporterFamilies are the families that mark a page of AMD's
// device-metrics-exporter (github.com/ROCm/device-metrics-exporter): the
// names current docs give and the older gpu_total_memory and gpu_usage.
var amdExporterFamilies = []string{
	"gpu_power_usage", "gpu_package_power", "gpu_average_package_power",
	"gpu_total_vram", "gpu_total_memory", "gpu_used_vram", "gpu_gfx_activity", "gpu_usage",
}

// amdExporterLabel is a label under its current lowercase name or the
// older uppercase one.
func amdExporterLabel(m *dto.Metric, name string) string {
	if v := label(m, name); v != "" {
		return v
	}
	return label(m, strings.ToUpper(name))
}

// isAMDExporter reports whether a page shows one of the families above on
// a series that names its GPU.
func isAMDExporter(fams map[string]*dto.MetricFamily) bool {
	for _, name := range amdExporterFamilies {
		for _, m := range fams[name].GetMetric() {
			if amdExporterLabel(m, "gpu_id") != "" || amdExporterLabel(m, "gpu_uuid") != "" {
				return true
			}
		}
	}
	return false
}

// mbToMiB converts the exporter's MB (10⁶ bytes: an MI210's 64 GiB shows as
// 68702) to MiB.
const mbToMiB = 1e6 / (1 << 20)

func (o opt) times(k float64) opt { return opt{o.v * k, o.ok} }

// parseAMDExporter reads AMD's device-metrics-exporter. GPUs are keyed by
// the gpu_id label (GPU_ID on older pages); a page without it is joined by
// the GPU's UUID, which is dropped here, and numbered in the UUIDs' order.
// Serial numbers are never read. Units: W, %, MB (decimal), MHz, °C.
func parseAMDExporter(fams map[string]*dto.MetricFamily) []exporterGPU {
	type build struct {
		key string
		gpuBuild
	}
	byKey := map[string]*build{}
	wanted := append(slices.Clone(amdExporterFamilies), "gpu_edge_temperature", "gpu_junction_temperature", "gpu_clock")
	for _, name := range wanted {
		for _, m := range fams[name].GetMetric() {
			key, idx, hasIdx := "", 0, false
			if id := amdExporterLabel(m, "gpu_id"); id != "" {
				n, ok := smiInt(id)
				if !ok {
					continue
				}
				key, idx, hasIdx = "id:"+id, n, true
			} else if u := amdExporterLabel(m, "gpu_uuid"); u != "" {
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
				b.name = amdExporterLabel(m, "card_model")
			}
			metric := name
			if name == "gpu_clock" {
				if !strings.Contains(strings.ToLower(amdExporterLabel(m, "clock_type")), "system") {
					continue
				}
			}
			if v, ok := metricValue(m); ok {
				b.add(metric, v, "")
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
	var out []exporterGPU
	for _, b := range builds {
		name := b.name
		if name == "" {
			name = "AMD GPU"
		}
		info := telemetry.GPU{Index: b.index, Name: name}
		info.MemoryTotalMiB = floatPtr(b.firstOf("gpu_total_vram", "gpu_total_memory").times(mbToMiB))
		r := Sample{GPU: b.index}
		setFloat(&r.PowerW, &r.Valid, FieldPower, b.firstOf("gpu_power_usage", "gpu_package_power", "gpu_average_package_power"))
		setFloat(&r.UtilPct, &r.Valid, FieldUtil, b.firstOf("gpu_gfx_activity", "gpu_usage"))
		setFloat(&r.MemUsedMiB, &r.Valid, FieldMemUsed, b.get("gpu_used_vram").times(mbToMiB))
		setFloat(&r.SMClockMHz, &r.Valid, FieldSMClock, b.get("gpu_clock"))
		setFloat(&r.TempC, &r.Valid, FieldTemp, b.firstOf("gpu_edge_temperature", "gpu_junction_temperature"))
		out = append(out, exporterGPU{info: info, reading: r})
	}
	return out
}

// parseMacmonExporter reads `macmon serve`'s /metrics page: one GPU, read
// as macmonSource reads `macmon pipe` (PowerW is CPU + GPU + ANE; the
// parts apart; a GPU temperature of 0 is no sensor). Names are macmon's
// since v0.8 (macmon_gpu_active_ratio) and before (macmon_gpu_usage_ratio,
// frequency-scaled). Units: W, ratio 0–1, MHz, °C, bytes.
func parseMacmonExporter(fams map[string]*dto.MetricFamily) []exporterGPU {
	var g gpuBuild
	chip := ""
	for name, fam := range fams {
		if !strings.HasPrefix(name, "macmon_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			if chip == "" {
				chip = label(m, "chip")
			}
			if v, ok := metricValue(m); ok {
				g.add(name, v, "")
			}
		}
	}
	if chip == "" {
		chip = "Apple Silicon"
	}
	info := telemetry.GPU{Index: 0, Name: chip + " GPU (unified memory)", MemoryTotalMiB: floatPtr(g.get("macmon_memory_ram_total_bytes").div(1 << 20))}
	r := Sample{GPU: 0}
	setFloat(&r.PowerW, &r.Valid, FieldPower, g.get("macmon_all_power_watts"))
	setFloat(&r.GPUPowerW, &r.Valid, FieldGPUPower, g.get("macmon_gpu_power_watts"))
	setFloat(&r.CPUPowerW, &r.Valid, FieldCPUPower, g.get("macmon_cpu_power_watts"))
	setFloat(&r.ANEPowerW, &r.Valid, FieldANEPower, g.get("macmon_ane_power_watts"))
	setFloat(&r.UtilPct, &r.Valid, FieldUtil, g.firstOf("macmon_gpu_active_ratio", "macmon_gpu_usage_ratio").percent())
	setFloat(&r.SMClockMHz, &r.Valid, FieldSMClock, g.get("macmon_gpu_freq_mhz"))
	if t := g.get("macmon_gpu_temp_celsius"); t.ok && t.v > 0 {
		setFloat(&r.TempC, &r.Valid, FieldTemp, t)
	}
	setFloat(&r.MemUsedMiB, &r.Valid, FieldMemUsed, g.get("macmon_memory_ram_used_bytes").div(1<<20))
	return []exporterGPU{{info: info, reading: r}}
}
