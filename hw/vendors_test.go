package hw

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// capturedText reads a file of testdata/captured (see its SOURCES.md).
func capturedText(t *testing.T, name string) string {
	t.Helper()
	return string(captured(t, name))
}

func close6(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// sameSample compares two samples' valid readings.
func sameSample(got, want Sample) bool {
	if got.GPU != want.GPU || got.Valid != want.Valid {
		return false
	}
	for _, p := range [][2]float64{
		{got.PowerW, want.PowerW}, {got.UtilPct, want.UtilPct}, {got.MemUsedMiB, want.MemUsedMiB},
		{got.SMClockMHz, want.SMClockMHz}, {got.TempC, want.TempC}, {got.GPUPowerW, want.GPUPowerW},
		{got.CPUPowerW, want.CPUPowerW}, {got.ANEPowerW, want.ANEPowerW},
	} {
		if !close6(p[0], p[1]) {
			return false
		}
	}
	return true
}

// sysfsTree builds a stand-in /sys under a temporary directory. Every value
// from a capture is copied from testdata/captured; the few files no capture
// has (vendor, device, temp1_input, gtt) are written in the same one-number
// form and say so where they are made.
type sysfsTree struct {
	t    *testing.T
	root string
}

func newSysfsTree(t *testing.T) *sysfsTree {
	return &sysfsTree{t: t, root: t.TempDir()}
}

func (s *sysfsTree) file(rel, content string) {
	s.t.Helper()
	p := filepath.Join(s.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *sysfsTree) copyCaptured(rel, name string) { s.file(rel, capturedText(s.t, name)) }

// standardTree is two AMD cards, a connector and an Intel card:
//
//	card0: the captured 8 GiB card's VRAM files and the captured hwmon's
//	       power1_average and freq1_input; gpu_busy_percent is there but
//	       cannot be read (EOPNOTSUPP, see busyFails); no temperature file.
//	card1: an AMD card with no power file at all (stand-in values, not
//	       captured), 37 % busy.
//	card0-DP-1: a connector, not a card; card2: Intel, not ours.
func standardTree(t *testing.T) *sysfsTree {
	s := newSysfsTree(t)
	d0 := "class/drm/card0/device/"
	s.file(d0+"vendor", "0x1002\n") // the amdgpu vendor id
	s.file(d0+"device", "0x73bf\n") // stand-in
	s.file(d0+"gpu_busy_percent", "0\n")
	s.copyCaptured(d0+"mem_info_vram_used", "amdgpu_sysfs_elementary369/mem_info_vram_used")
	s.copyCaptured(d0+"mem_info_vram_total", "amdgpu_sysfs_elementary369/mem_info_vram_total")
	s.copyCaptured(d0+"hwmon/hwmon4/power1_average", "amdgpu_sysfs_lmsensors261/hwmon/power1_average")
	s.copyCaptured(d0+"hwmon/hwmon4/freq1_input", "amdgpu_sysfs_lmsensors261/hwmon/freq1_input")
	s.copyCaptured(d0+"hwmon/hwmon4/in0_input", "amdgpu_sysfs_lmsensors261/hwmon/in0_input")
	s.file(d0+"uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n") // stand-in
	d1 := "class/drm/card1/device/"
	s.file(d1+"vendor", "0x1002\n")
	s.file(d1+"gpu_busy_percent", "37\n")            // stand-in
	s.file(d1+"mem_info_vram_used", "1073741824\n")  // stand-in: 1 GiB
	s.file(d1+"mem_info_vram_total", "4294967296\n") // stand-in: 4 GiB
	s.file(d1+"hwmon/hwmon5/temp1_input", "45000\n") // stand-in: 45 °C
	s.file("class/drm/card0-DP-1/device/vendor", "0x1002\n")
	s.file("class/drm/card2/device/vendor", "0x8086\n")
	s.file("class/drm/card2/device/hwmon/hwmon1/power1_average", "5000000\n")
	return s
}

// busyFails makes reading card0's gpu_busy_percent fail as the captured
// card does.
type busyFails struct{ fs.FS }

func (b busyFails) Open(name string) (fs.File, error) {
	if name == "class/drm/card0/device/gpu_busy_percent" {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EOPNOTSUPP}
	}
	return b.FS.Open(name)
}

func TestEOPNOTSUPPIsTheCapturedError(t *testing.T) {
	// The captured cat error ends in EOPNOTSUPP's own words.
	got := capturedText(t, "amdgpu_sysfs_gpu_busy_percent_not_supported_netdata12616.txt")
	if want := syscall.EOPNOTSUPP.Error(); !strings.Contains(strings.ToLower(got), want) {
		t.Fatalf("%q does not say %q", got, want)
	}
}

// The readings of standardTree's cards, by index.
var (
	amdCard0 = Sample{GPU: 0, Valid: FieldPower | FieldMemUsed | FieldSMClock,
		PowerW: 9.103, MemUsedMiB: 6812925952.0 / (1 << 20), SMClockMHz: 351.59}
	amdCard1 = Sample{GPU: 1, Valid: FieldUtil | FieldMemUsed | FieldTemp, UtilPct: 37, MemUsedMiB: 1024, TempC: 45}
)

func TestAMDGPUSysfsLocal(t *testing.T) {
	t.Parallel()
	tree := standardTree(t)
	src := newAMDGPUSource(shell{}, nil)
	src.fsys = busyFails{os.DirFS(tree.root)}
	cards, err := src.readLocal()
	if err != nil {
		t.Fatal(err)
	}
	got := samplesOf(cards)
	want := []Sample{amdCard0, amdCard1}
	if len(got) != len(want) {
		t.Fatalf("got %d cards %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if !sameSample(got[i], want[i]) {
			t.Errorf("card %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if got[0].Has(FieldUtil) {
		t.Error("a busy percent that cannot be read counts as a reading")
	}
	if got[1].Has(FieldPower) {
		t.Error("a card without a power file has a power reading")
	}
	inv := cards[0].gpu(0)
	if inv.Name != "AMD GPU" || inv.PCIBusID != "0000:03:00.0" || inv.PCIDeviceID != "1002:73bf" || inv.MemoryTotalMiB == nil || !close6(*inv.MemoryTotalMiB, 8573157376.0/(1<<20)) || inv.PowerLimitW != nil {
		t.Errorf("inventory %+v", inv)
	}
}

func TestAMDGPUPowerInputAndAPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  Sample
		total float64
	}{
		{name: "power1_input only (newer cards), in µW", files: map[string]string{"power1_input": "9103000"},
			want: Sample{Valid: FieldPower, PowerW: 9.103}},
		{name: "power1_average wins over power1_input", files: map[string]string{"power1_average": "9103000", "power1_input": "20000000"},
			want: Sample{Valid: FieldPower, PowerW: 9.103}},
		{name: "APU: 512 MiB carve-out, the rest in GTT (stand-in values)",
			files: map[string]string{"mem_info_vram_used": "268435456", "mem_info_vram_total": "536870912", "mem_info_gtt_used": "8589934592", "mem_info_gtt_total": "33554432000"},
			want:  Sample{Valid: FieldMemUsed, MemUsedMiB: 256 + 8192}, total: 512 + 32000},
		{name: "discrete card: GTT is not its memory",
			files: map[string]string{"mem_info_vram_used": "6812925952", "mem_info_vram_total": "8573157376", "mem_info_gtt_used": "8589934592", "mem_info_gtt_total": "33554432000"},
			want:  Sample{Valid: FieldMemUsed, MemUsedMiB: 6812925952.0 / (1 << 20)}, total: 8573157376.0 / (1 << 20)},
		{name: "garbage and negative values are missing", files: map[string]string{"power1_average": "-5", "gpu_busy_percent": "busy", "temp1_input": "NaN"},
			want: Sample{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := amdCard{card: "card0", files: tt.files}
			if got := c.sample(0); !sameSample(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			g := c.gpu(0)
			if tt.total > 0 && (g.MemoryTotalMiB == nil || !close6(*g.MemoryTotalMiB, tt.total)) {
				t.Errorf("memory total %v, want %v", g.MemoryTotalMiB, tt.total)
			}
		})
	}
}

func TestParseAMDPass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []Sample
		err  string
	}{
		{name: "two cards, out of order", in: "card card1\ngpu_busy_percent 37\ncard card0\npower1_average 9103000\n",
			want: []Sample{{GPU: 0, Valid: FieldPower, PowerW: 9.103}, {GPU: 1, Valid: FieldUtil, UtilPct: 37}}},
		{name: "nothing", in: "", want: []Sample{}},
		{name: "value before a card", in: "power1_average 9103000\n", err: "a value before any card"},
		{name: "unknown file", in: "card card0\nserial 1234\n", err: `an unknown file "serial"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cards, err := parseAMDPass(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := samplesOf(cards)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if !sameSample(got[i], tt.want[i]) {
					t.Errorf("card %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// amdSMIWrapped is the captured list under the newer releases' gpu_data
// key (the shape SOURCES.md describes; the values are the captured ones).
func amdSMIWrapped(t *testing.T) string {
	return `{"gpu_data": ` + capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json") + `}`
}

// replaceJSON swaps one exact piece of the captured JSON for another, to
// make the odd cases from the captured document.
func replaceJSON(t *testing.T, doc, old, new string) string {
	t.Helper()
	re := regexp.MustCompile(old)
	if !re.MatchString(doc) {
		t.Fatalf("%q is not in the document", old)
	}
	return re.ReplaceAllString(doc, new)
}

func TestParseAMDSMI(t *testing.T) {
	t.Parallel()
	list := capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json")
	socket := `"socket_power": \{\s*"value": 10,\s*"unit": "W"\s*\}`
	tests := []struct {
		name string
		in   string
		want []Sample
		err  string
	}{
		{name: "ROCm 6.1 list", in: list, want: []Sample{{GPU: 0, Valid: FieldPower, PowerW: 10}}},
		{name: "gpu_data wrapper", in: amdSMIWrapped(t), want: []Sample{{GPU: 0, Valid: FieldPower, PowerW: 10}}},
		{name: "socket power N/A", in: replaceJSON(t, list, socket, `"socket_power": "N/A"`), want: []Sample{{GPU: 0}}},
		{name: "value N/A", in: replaceJSON(t, list, `"value": 10,`, `"value": "N/A",`), want: []Sample{{GPU: 0}}},
		{name: "power section N/A", in: replaceJSON(t, list, `"power": \{(?s:.*)"UNTHROTTLED"\s*\}`, `"power": "N/A"`), want: []Sample{{GPU: 0}}},
		{name: "power in mW", in: replaceJSON(t, list, `"value": 10,\s*"unit": "W"`, `"value": 10500, "unit": "mW"`), want: []Sample{{GPU: 0, Valid: FieldPower, PowerW: 10.5}}},
		{name: "unknown unit", in: replaceJSON(t, list, `"value": 10,\s*"unit": "W"`, `"value": 10, "unit": "hp"`), want: []Sample{{GPU: 0}}},
		{name: "more readings (stand-in values in the same shape)", in: replaceJSON(t, list, `"power": \{`,
			`"usage": {"gfx_activity": {"value": 87, "unit": "%"}, "umc_activity": "N/A"},
			 "mem_usage": {"total_vram": {"value": 16368, "unit": "MB"}, "used_vram": {"value": 9001, "unit": "MB"}},
			 "temperature": {"edge": "N/A", "hotspot": {"value": 71, "unit": "C"}},
			 "clock": {"gfx_0": {"clk": {"value": 2450, "unit": "MHz"}}},
			 "power": {`),
			want: []Sample{{GPU: 0, Valid: FieldPower | FieldUtil | FieldMemUsed | FieldSMClock | FieldTemp, PowerW: 10, UtilPct: 87, MemUsedMiB: 9001, SMClockMHz: 2450, TempC: 71}}},
		{name: "not JSON", in: "AMDSMI not initialized", err: "it is not JSON"},
		{name: "object without gpu_data", in: `{"error": "no devices"}`, err: "it is JSON without amd-smi's gpu_data list"},
		{name: "empty list", in: `[]`, err: "it lists no GPUs"},
		{name: "no index", in: `[{"power": "N/A"}]`, err: `a GPU without a "gpu" index`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := parseAMDSMI([]byte(tt.in))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != len(tt.want) {
				t.Fatalf("got %d GPUs, want %d", len(list), len(tt.want))
			}
			for i, g := range list {
				if got := g.sample(); !sameSample(got, tt.want[i]) {
					t.Errorf("got  %+v\nwant %+v", got, tt.want[i])
				}
			}
		})
	}
}

// jsonc turns the macmon readme's JSONC into the one JSON line macmon pipe
// prints: its // comments and trailing commas go.
func jsonc(t *testing.T, text string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		b.WriteString(l)
	}
	s := regexp.MustCompile(`,\s*([}\]])`).ReplaceAllString(b.String(), "$1")
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("the readme's JSONC did not become JSON: %v", err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestMacmonLines(t *testing.T) {
	t.Parallel()
	v07 := strings.TrimSpace(capturedText(t, "macmon_pipe_v07_16gb_beszel1796.jsonl"))
	v08 := jsonc(t, capturedText(t, "macmon_readme_json_example_v0.8.1.jsonc"))
	tests := []struct {
		name  string
		line  string
		want  Sample
		total float64
		err   string
	}{
		{name: "v0.7: usage pair, GPU temperature 0.0 is no sensor", line: v07,
			want: Sample{Valid: FieldPower | FieldGPUPower | FieldCPUPower | FieldANEPower | FieldUtil | FieldSMClock | FieldMemUsed,
				PowerW: 0.25677499175071716, GPUPowerW: 0.004442947451025248, CPUPowerW: 0.25233203172683716, ANEPowerW: 0,
				UtilPct: 0.4153179936110973, SMClockMHz: 198, MemUsedMiB: 10585292800.0 / (1 << 20)},
			total: 16384},
		{name: "v0.8: active ratio, frequency, temperature", line: v08,
			want: Sample{Valid: FieldPower | FieldGPUPower | FieldCPUPower | FieldANEPower | FieldUtil | FieldSMClock | FieldMemUsed | FieldTemp,
				PowerW: 0.22231553, GPUPowerW: 0.017451683, CPUPowerW: 0.20486385, ANEPowerW: 0,
				UtilPct: 9, SMClockMHz: 461, TempC: 36.95167, MemUsedMiB: 20985479168.0 / (1 << 20)},
			total: 24576},
		{name: "not JSON", line: "Error: no Apple Silicon found", err: "not a line of macmon's JSON"},
		{name: "other JSON", line: `{"hello": 1}`, err: "a JSON line without macmon's readings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseMacmonLine(tt.line)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.sample(); !sameSample(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			g := m.gpu()
			if g.Name != "Apple Silicon GPU (unified memory)" || g.MemoryTotalMiB == nil || *g.MemoryTotalMiB != tt.total {
				t.Errorf("inventory %+v", g)
			}
		})
	}
}

func TestXPUDump(t *testing.T) {
	t.Parallel()
	csv := capturedText(t, "xpu_smi_dump_m012_smi_user_guide.csv")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	header, row := lines[0], lines[1]
	tests := []struct {
		name  string
		lines []string
		want  []Sample
		err   string
	}{
		{name: "the captured dump", lines: lines, want: []Sample{
			{Valid: FieldUtil | FieldPower | FieldSMClock, UtilPct: 0, PowerW: 14.61},
			{Valid: FieldUtil | FieldPower | FieldSMClock, UtilPct: 0, PowerW: 14.59},
			{Valid: FieldUtil | FieldPower | FieldSMClock, UtilPct: 0, PowerW: 14.61},
			{Valid: FieldUtil | FieldPower | FieldSMClock, UtilPct: 0, PowerW: 14.61},
			{Valid: FieldUtil | FieldPower | FieldSMClock, UtilPct: 0, PowerW: 14.61},
		}},
		{name: "today's label, an unknown column, N/A", lines: []string{
			strings.Replace(strings.Replace(header, "Average % utilization of all GPU Engines", "GPU Utilization (%)", 1), "GPU Frequency (MHz)", "Xe Link Throughput (kB/s)", 1),
			strings.Replace(row, "14.61", "N/A", 1),
		}, want: []Sample{{Valid: FieldUtil}}},
		{name: "row before the header", lines: []string{row}, err: errNoHeader.Error()},
		{name: "short row", lines: []string{header, "06:14:46.000,    0, 0.00"}, err: "3 cells instead of 5"},
		{name: "garbage cell", lines: []string{header, strings.Replace(row, "14.61", "lots", 1)}, err: "not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d xpuDump
			var got []Sample
			var err error
			for _, l := range tt.lines {
				var s []Sample
				if s, err = d.line(l); err != nil {
					break
				}
				got = append(got, s...)
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d rows %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if !sameSample(got[i], tt.want[i]) {
					t.Errorf("row %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// renameLabels turns the captured AMD exporter page's old uppercase labels
// into the lowercase ones current docs show, with a gpu_id and a
// card_model, for a second card: a stand-in in the captured format.
func amdExporterNewLabels(t *testing.T) string {
	page := capturedText(t, "amd_device_metrics_exporter_metrics_mini.prom")
	var b strings.Builder
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "gpu_") && strings.Contains(l, "GPU_UUID") {
			for i, id := range []string{"0", "1"} {
				n := strings.Replace(l, `GPU_UUID="6699c0a8-4200-4242-037f-f97e6cae0f09",SERIAL_NUMBER="692247001282"`,
					`card_model="AMD Instinct MI210",gpu_id="`+id+`",hostname="node-a",serial_number="692247001282"`, 1)
				if i == 1 {
					n = strings.Replace(n, "} 41", "} 57", 1)
				}
				b.WriteString(n + "\n")
			}
			continue
		}
		b.WriteString(l + "\n")
	}
	// Current names, in the page's own form (stand-in values).
	b.WriteString("# HELP gpu_used_vram Total VRAM memory used in MB\n# TYPE gpu_used_vram gauge\n")
	b.WriteString(`gpu_used_vram{card_model="AMD Instinct MI210",gpu_id="0",hostname="node-a",serial_number="692247001282"} 1048.576` + "\n")
	b.WriteString("# HELP gpu_clock Clock measure of the GPU in Mhz\n# TYPE gpu_clock gauge\n")
	b.WriteString(`gpu_clock{card_model="AMD Instinct MI210",clock_type="system",gpu_id="0",hostname="node-a",serial_number="692247001282"} 1700` + "\n")
	b.WriteString(`gpu_clock{card_model="AMD Instinct MI210",clock_type="memory",gpu_id="0",hostname="node-a",serial_number="692247001282"} 1600` + "\n")
	return b.String()
}

// macmonServeWithGPU is the captured (partial) macmon serve page with the
// GPU's lines added in the same form under the names macmon's serve.rs
// writes (stand-in values; GPU temperature 0: no sensor).
func macmonServeWithGPU(t *testing.T) string {
	return capturedText(t, "macmon_serve_metrics_readme_m3pro.prom") + `
# HELP macmon_gpu_power_watts GPU power consumption in Watts
# TYPE macmon_gpu_power_watts gauge
macmon_gpu_power_watts{chip="Apple M3 Pro"} 11.5

# HELP macmon_ane_power_watts Apple Neural Engine power consumption in Watts
# TYPE macmon_ane_power_watts gauge
macmon_ane_power_watts{chip="Apple M3 Pro"} 0

# HELP macmon_all_power_watts Combined CPU+GPU+ANE power consumption in Watts
# TYPE macmon_all_power_watts gauge
macmon_all_power_watts{chip="Apple M3 Pro"} 19.92

# HELP macmon_gpu_active_ratio GPU active residency ratio (not frequency-scaled, 0–1)
# TYPE macmon_gpu_active_ratio gauge
macmon_gpu_active_ratio{chip="Apple M3 Pro"} 0.93

# HELP macmon_gpu_temp_celsius Average GPU temperature in Celsius
# TYPE macmon_gpu_temp_celsius gauge
macmon_gpu_temp_celsius{chip="Apple M3 Pro"} 0

# HELP macmon_memory_ram_used_bytes Used RAM in bytes
# TYPE macmon_memory_ram_used_bytes gauge
macmon_memory_ram_used_bytes{chip="Apple M3 Pro"} 20985479168

# HELP macmon_memory_ram_total_bytes Total RAM in bytes
# TYPE macmon_memory_ram_total_bytes gauge
macmon_memory_ram_total_bytes{chip="Apple M3 Pro"} 38654705664
`
}

func TestMoreExporterPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page string
		info []string // "index name total"
		want []Sample
	}{
		{name: "AMD device-metrics-exporter, captured (old labels, UUID only)",
			page: capturedText(t, "amd_device_metrics_exporter_metrics_mini.prom"),
			info: []string{"0 AMD GPU 65519.3"},
			want: []Sample{{GPU: 0, Valid: FieldPower | FieldUtil, PowerW: 41, UtilPct: 0}}},
		{name: "AMD device-metrics-exporter, current labels",
			page: amdExporterNewLabels(t),
			info: []string{"0 AMD Instinct MI210 65519.3", "1 AMD Instinct MI210 65519.3"},
			want: []Sample{
				{GPU: 0, Valid: FieldPower | FieldUtil | FieldMemUsed | FieldSMClock, PowerW: 41, MemUsedMiB: 1000, SMClockMHz: 1700},
				{GPU: 1, Valid: FieldPower | FieldUtil, PowerW: 57},
			}},
		{name: "macmon serve, captured (no GPU lines): no power, never 0",
			page: capturedText(t, "macmon_serve_metrics_readme_m3pro.prom"),
			info: []string{"0 Apple M3 Pro GPU (unified memory) -"},
			want: []Sample{{GPU: 0, Valid: FieldCPUPower, CPUPowerW: 8.42}}},
		{name: "macmon serve with its GPU lines",
			page: macmonServeWithGPU(t),
			info: []string{"0 Apple M3 Pro GPU (unified memory) 36864"},
			want: []Sample{{GPU: 0, Valid: FieldPower | FieldGPUPower | FieldCPUPower | FieldANEPower | FieldUtil | FieldMemUsed,
				PowerW: 19.92, GPUPowerW: 11.5, CPUPowerW: 8.42, UtilPct: 93, MemUsedMiB: 20985479168.0 / (1 << 20)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs, err := parseExporterPage([]byte(tt.page))
			if err != nil {
				t.Fatal(err)
			}
			if len(gs) != len(tt.want) {
				t.Fatalf("got %d GPUs, want %d", len(gs), len(tt.want))
			}
			for i, g := range gs {
				total := "-"
				if g.info.MemoryTotalMiB != nil {
					total = strconv.FormatFloat(roundTo(*g.info.MemoryTotalMiB, 1), 'f', -1, 64)
				}
				if got := fmt.Sprintf("%d %s %s", g.info.Index, g.info.Name, total); got != tt.info[i] {
					t.Errorf("inventory %q, want %q", got, tt.info[i])
				}
				if !sameSample(g.reading, tt.want[i]) {
					t.Errorf("got  %+v\nwant %+v", g.reading, tt.want[i])
				}
				all := fmt.Sprintf("%+v %+v", g.info, g.reading)
				for _, never := range []string{"692247001282", "6699c0a8", "node-a"} {
					if strings.Contains(all, never) {
						t.Errorf("%s left the parser: %s", never, all)
					}
				}
			}
		})
	}
}
