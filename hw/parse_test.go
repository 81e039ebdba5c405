package hw

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/telemetry"
)

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixtureLines(t testing.TB, name string) []string {
	var out []string
	for _, l := range strings.Split(readFixture(t, name), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// full is a sample with every reading present.
func full(gpu int, w, util, mem, clock, temp float64, gen, width int) Sample {
	return Sample{GPU: gpu, Valid: FieldPower | FieldUtil | FieldMemUsed | FieldSMClock | FieldTemp | FieldPCIeGen | FieldPCIeWidth,
		PowerW: w, UtilPct: util, MemUsedMiB: mem, SMClockMHz: clock, TempC: temp, PCIeGen: gen, PCIeWidth: width}
}

func without(s Sample, f Field) Sample {
	s.Valid &^= f
	switch f {
	case FieldPower:
		s.PowerW = 0
	case FieldUtil:
		s.UtilPct = 0
	case FieldPCIeGen:
		s.PCIeGen = 0
	case FieldPCIeWidth:
		s.PCIeWidth = 0
	}
	return s
}

func TestParseSampleLineFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want []Sample
	}{
		{"smi_stream_h100_mig.csv", []Sample{
			without(full(0, 433.78, 0, 11125, 1980, 53, 5, 16), FieldUtil),
			without(full(1, 118.20, 0, 40412, 1980, 38, 5, 16), FieldUtil),
			without(full(0, 447.35, 0, 11125, 1980, 55, 5, 16), FieldUtil),
			without(full(1, 121.04, 0, 40412, 1980, 38, 5, 16), FieldUtil),
			without(without(without(full(0, 439.10, 0, 11131, 1980, 56, 0, 0), FieldUtil), FieldPCIeGen), FieldPCIeWidth),
			without(full(1, 119.66, 0, 40412, 1980, 39, 5, 16), FieldUtil),
		}},
		{"smi_stream_2x3090.csv", []Sample{
			full(0, 112.48, 12, 21950, 1395, 48, 1, 16),
			full(1, 104.90, 9, 21870, 1395, 45, 1, 4),
			full(0, 341.27, 100, 22110, 1905, 67, 4, 16),
			full(1, 336.51, 100, 22030, 1890, 64, 4, 4),
			without(full(0, 0, 100, 22110, 1905, 68, 4, 16), FieldPower),
			without(full(1, 338.02, 0, 22030, 1890, 65, 4, 4), FieldUtil),
		}},
		{"smi_stream_rtx4090.csv", []Sample{
			full(0, 31.47, 0, 22816, 210, 41, 1, 16),
			full(0, 118.92, 37, 22816, 2730, 44, 4, 16),
			full(0, 402.13, 100, 22980, 2745, 58, 4, 16),
			full(0, 438.60, 100, 22980, 2730, 63, 4, 16),
			full(0, 441.05, 99, 22980, 2715, 66, 4, 16),
			full(0, 97.30, 0, 22980, 2520, 61, 4, 16),
			full(0, 33.02, 0, 22816, 210, 52, 1, 16),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			lines := fixtureLines(t, tt.file)
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(tt.want))
			}
			for i, l := range lines {
				got, err := parseSampleLine(l)
				if err != nil {
					t.Fatalf("line %d %q: %v", i+1, l, err)
				}
				if got != tt.want[i] {
					t.Errorf("line %d:\n got %+v\nwant %+v", i+1, got, tt.want[i])
				}
			}
		})
	}
	t.Run("a100 four GPUs per tick", func(t *testing.T) {
		t.Parallel()
		var sum float64
		for i, l := range fixtureLines(t, "smi_stream_a100_80gb.csv") {
			got, err := parseSampleLine(l)
			if err != nil {
				t.Fatal(err)
			}
			if got.GPU != i%4 || !got.Has(FieldPower) || !got.Has(FieldUtil) {
				t.Errorf("line %d: %+v", i+1, got)
			}
			sum += got.PowerW
		}
		if want := 247.33 + 1234.60 + 1288.85; fmt.Sprintf("%.2f", sum) != fmt.Sprintf("%.2f", want) {
			t.Errorf("power sum %.2f, want %.2f", sum, want)
		}
	})
}

func TestParseSampleLineRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, line string }{
		{"driver failure", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."},
		{"too few", "0, 31.47, 0"},
		{"too many", "0, 31.47, 0, 22816, 210, 41, 1, 16, 9"},
		{"index missing", "[N/A], 31.47, 0, 22816, 210, 41, 1, 16"},
		{"negative", "0, -31.47, 0, 22816, 210, 41, 1, 16"},
		{"word", "0, lots, 0, 22816, 210, 41, 1, 16"},
		{"exponent", "0, 3e2, 0, 22816, 210, 41, 1, 16"},
		{"nan", "0, NaN, 0, 22816, 210, 41, 1, 16"},
		{"fractional link", "0, 31.47, 0, 22816, 210, 41, 1.5, 16"},
		{"unknown unit", "0, 31.47 kW, 0, 22816, 210, 41, 1, 16"},
		{"header", "index, power.draw [W], utilization.gpu [%], memory.used [MiB], clocks.sm [MHz], temperature.gpu, pcie.link.gen.current, pcie.link.width.current"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, err := parseSampleLine(tt.line); err == nil {
				t.Errorf("parseSampleLine(%q) = %+v, want an error", tt.line, got)
			}
		})
	}
}

func TestParseSampleLineTolerates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		want       Sample
	}{
		{"units left in", "3, 318.30 W, 98 %, 76197 MiB, 1410 MHz, 55, 4, 16", full(3, 318.30, 98, 76197, 1410, 55, 4, 16)},
		{"crlf", "0, 31.47, 0, 22816, 210, 41, 1, 16\r", full(0, 31.47, 0, 22816, 210, 41, 1, 16)},
		{"no spaces", "2,1.5,0,1,2,3,1,8", full(2, 1.5, 0, 1, 2, 3, 1, 8)},
		{"all missing", "5, [N/A], [Not Supported], [Unknown Error], [Insufficient Permissions], [GPU is lost], N/A, ", Sample{GPU: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseSampleLine(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseInventoryFixtures(t *testing.T) {
	t.Parallel()
	gpu := func(idx int, name, bus, dev string, mem float64, gc, wc, gm, wm int, pl float64, drv string) telemetry.GPU {
		g := telemetry.GPU{Index: idx, Name: name, PCIBusID: bus, PCIDeviceID: dev, MemoryTotalMiB: fp(mem),
			PCIeGenCurrent: ip(gc), PCIeWidthCurrent: ip(wc), PCIeGenMax: ip(gm), PCIeWidthMax: ip(wm), PowerLimitW: fp(pl), DriverVersion: drv}
		if dev != "" {
			g.PCIDeviceIDFrom = "nvidia-smi"
		}
		return g
	}
	a100 := func(idx int, bus string) telemetry.GPU {
		return gpu(idx, "NVIDIA A100-SXM4-80GB", bus, "10de:20b2", 81920, 4, 16, 4, 16, 400, "535.183.01")
	}
	tests := []struct {
		file   string
		fields []string
		want   []telemetry.GPU
	}{
		{"smi_inventory_rtx4090.csv", inventoryFields, []telemetry.GPU{
			gpu(0, "NVIDIA GeForce RTX 4090", "0000:01:00.0", "10de:2684", 24564, 1, 16, 4, 16, 450, "550.54.14"),
		}},
		{"smi_inventory_a100_80gb.csv", inventoryFields, []telemetry.GPU{
			a100(0, "0000:07:00.0"), a100(1, "0000:0f:00.0"), a100(2, "0000:47:00.0"), a100(3, "0000:4e:00.0"),
		}},
		{"smi_inventory_h100_mig.csv", inventoryFields, []telemetry.GPU{
			gpu(0, "NVIDIA H100 80GB HBM3", "0000:18:00.0", "10de:2330", 81559, 5, 16, 5, 16, 700, "550.90.07"),
			gpu(1, "NVIDIA H100 80GB HBM3", "0000:2a:00.0", "10de:2330", 81559, 5, 16, 5, 16, 700, "550.90.07"),
		}},
		{"smi_inventory_2x3090.csv", inventoryFields, []telemetry.GPU{
			gpu(0, "NVIDIA GeForce RTX 3090", "0000:01:00.0", "10de:2204", 24576, 1, 16, 4, 16, 350, "550.120"),
			gpu(1, "NVIDIA GeForce RTX 3090", "0000:08:00.0", "10de:2204", 24576, 1, 4, 4, 16, 350, "550.120"),
		}},
		{"smi_inventory_old_fields.csv", oldInventoryFields, []telemetry.GPU{{
			Index: 0, Name: "Tesla V100-PCIE-16GB", PCIBusID: "0000:3b:00.0", MemoryTotalMiB: fp(16160),
			PCIeGenCurrent: ip(3), PCIeWidthCurrent: ip(16), PowerLimitW: fp(250), DriverVersion: "418.226.00",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			got, err := parseInventory(readFixture(t, tt.file), tt.fields)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("got  %s\nwant %s", g, w)
			}
		})
	}
}

func TestParseInventoryOddLines(t *testing.T) {
	t.Parallel()
	t.Run("comma in the name", func(t *testing.T) {
		t.Parallel()
		got, err := parseInventory("0, NVIDIA RTX 6000 Ada Generation, Rev 2, 00000000:C1:00.0, 0x26B110DE, 49140, 4, 16, 4, 16, 300.00, 550.54.14\n", inventoryFields)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Name != "NVIDIA RTX 6000 Ada Generation, Rev 2" || got[0].PCIBusID != "0000:c1:00.0" || got[0].PCIDeviceID != "10de:26b1" {
			t.Errorf("got %+v", got[0])
		}
	})
	t.Run("not supported fields", func(t *testing.T) {
		t.Parallel()
		got, err := parseInventory("0, NVIDIA GeForce GTX 1650, 00000000:01:00.0, 0x1F8210DE, 4096, 3, 16, 3, 16, [Not Supported], 470.256.02\n", inventoryFields)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].PowerLimitW != nil {
			t.Errorf("power limit %v, want nil", *got[0].PowerLimitW)
		}
	})
	for _, bad := range []string{"", "\n\n", "garbage\n", "x, NVIDIA, 0, 0, 0, 0, 0, 0, 0, 0, 0\n"} {
		if got, err := parseInventory(bad, inventoryFields); err == nil {
			t.Errorf("parseInventory(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestParseLspci(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file string
		want map[string]string
	}{
		{"lspci_rtx4090.txt", map[string]string{"0000:01:00.0": "10de:2684", "0000:01:00.1": "10de:22ba"}},
		{"lspci_a100_80gb.txt", map[string]string{
			"0000:07:00.0": "10de:20b2", "0000:0f:00.0": "10de:20b2", "0000:47:00.0": "10de:20b2", "0000:4e:00.0": "10de:20b2",
			"0000:c1:00.0": "10de:1af1", "0000:c2:00.0": "10de:1af1",
		}},
		{"lspci_2x3090_nodomain.txt", map[string]string{
			"0000:01:00.0": "10de:2204", "0000:01:00.1": "10de:1aef", "0000:08:00.0": "10de:2204", "0000:08:00.1": "10de:1aef",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			if got := parseLspci(readFixture(t, tt.file)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestNormBusAndDeviceID(t *testing.T) {
	t.Parallel()
	buses := map[string]string{
		"00000000:01:00.0": "0000:01:00.0",
		"00000000:C1:00.0": "0000:c1:00.0",
		"0000:4e:00.0":     "0000:4e:00.0",
		"4e:00.0":          "0000:4e:00.0",
		"00010000:01:00.0": "10000:01:00.0",
		" weird ":          "weird",
	}
	for in, want := range buses {
		if got := normBus(in); got != want {
			t.Errorf("normBus(%q) = %q, want %q", in, got, want)
		}
	}
	ids := map[string]string{"0x268410DE": "10de:2684", "0x233010de": "10de:2330", "[N/A]": "", "0x10DE": "", "0x0000000": "", "2684": ""}
	for in, want := range ids {
		if got := deviceIDFromSMI(in); got != want {
			t.Errorf("deviceIDFromSMI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSource(t *testing.T) {
	t.Parallel()
	type want struct {
		kind   telemetry.GPUSourceKind
		host   string
		gpus   []int
		str    string
		detail string // ssh destination or exporter URL
	}
	tests := []struct {
		in   string
		want *want // nil: no source
		err  string
	}{
		{in: ""},
		{in: "  none "},
		{in: "local", want: &want{telemetry.GPUSourceLocal, "localhost", nil, "the GPU tool on this machine", ""}},
		{in: "LOCAL?gpus=2,0,2", want: &want{telemetry.GPUSourceLocal, "localhost", []int{0, 2}, "the GPU tool on this machine (GPUs 0, 2)", ""}},
		{in: "local?gpus=all", want: &want{telemetry.GPUSourceLocal, "localhost", nil, "the GPU tool on this machine", ""}},
		{in: "ssh://alice@lab-box", want: &want{telemetry.GPUSourceSSH, "lab-box", nil, "the GPU tool on lab-box through ssh", "alice@lab-box"}},
		{in: "ssh://lab-box", want: &want{telemetry.GPUSourceSSH, "lab-box", nil, "the GPU tool on lab-box through ssh", "lab-box"}},
		{in: "ssh://alice@lab-box:2222?gpus=1", want: &want{telemetry.GPUSourceSSH, "lab-box:2222", []int{1}, "the GPU tool on lab-box:2222 through ssh (GPU 1)", "alice@lab-box"}},
		{in: "ssh://bob@[fd00::7]:22", want: &want{telemetry.GPUSourceSSH, "[fd00::7]:22", nil, "the GPU tool on [fd00::7]:22 through ssh", "bob@fd00::7"}},
		{in: "local?tool=nvidia-smi", want: &want{telemetry.GPUSourceLocal, "localhost", nil, "nvidia-smi on this machine", ""}},
		{in: "local?tool=amd-smi&gpus=1", want: &want{telemetry.GPUSourceLocal, "localhost", []int{1}, "amd-smi on this machine (GPU 1)", ""}},
		{in: "ssh://alice@lab-box?tool=AMD-SMI", want: &want{telemetry.GPUSourceSSH, "lab-box", nil, "amd-smi on lab-box through ssh", "alice@lab-box"}},
		{in: "ssh://lab-box:2222?gpus=0&tool=amdgpu", want: &want{telemetry.GPUSourceSSH, "lab-box:2222", []int{0}, "amdgpu sysfs on lab-box:2222 through ssh (GPU 0)", "lab-box"}},
		{in: "local?tool=macmon", want: &want{telemetry.GPUSourceLocal, "localhost", nil, "macmon on this machine", ""}},
		{in: "ssh://me@mac-mini?tool=macmon", want: &want{telemetry.GPUSourceSSH, "mac-mini", nil, "macmon on mac-mini through ssh", "me@mac-mini"}},
		{in: "local?tool=xpu-smi", want: &want{telemetry.GPUSourceLocal, "localhost", nil, "xpu-smi on this machine", ""}},
		{in: "http://10.0.0.5:9400/metrics", want: &want{telemetry.GPUSourceExporter, "10.0.0.5:9400", nil, "the GPU exporter at 10.0.0.5:9400", "http://10.0.0.5:9400/metrics"}},
		{in: "http://10.0.0.5:9400", want: &want{telemetry.GPUSourceExporter, "10.0.0.5:9400", nil, "the GPU exporter at 10.0.0.5:9400", "http://10.0.0.5:9400/metrics"}},
		{in: "HTTPS://scrape:hunter2@gpu.example:9835/metrics?gpus=0,1&job=x#top", want: &want{telemetry.GPUSourceExporter, "gpu.example:9835", []int{0, 1}, "the GPU exporter at gpu.example:9835 (GPUs 0, 1)", "https://scrape:hunter2@gpu.example:9835/metrics?job=x"}},
		{in: "ssh://alice:hunter2@lab-box", err: "must not contain a password"},
		{in: "ssh://", err: "needs a host"},
		{in: "ssh://-oProxyCommand=touch@x", err: "ssh would misread"},
		{in: "ssh://lab-box/var", err: "takes no path"},
		{in: "ssh://lab-box:99999", err: "port"},
		{in: "ssh://lab-box?user=root", err: "takes only ?gpus="},
		{in: "http:///metrics", err: "needs a host"},
		{in: "ftp://lab-box", err: "scheme"},
		{in: "lab-box", err: "not one we understand"},
		{in: "local?gpus=", err: "empty"},
		{in: "local?gpus=a,1", err: "not readable"},
		{in: "local?gpus=-1", err: "not readable"},
		{in: "local?gpus=0&gpus=1", err: "once"},
		{in: "local?verbose=1", err: "takes only ?gpus="},
		{in: "local?tool=rocm-smi", err: `the GPU tool "rocm-smi" is not one we read: give nvidia-smi, amd-smi, amdgpu, macmon, xpu-smi or powermetrics`},
		{in: "ssh://lab-box?tool=", err: "is not one we read"},
		{in: "local?tool=macmon&tool=amd-smi", err: "give ?tool= once"},
		{in: "local?tool=powermetrics", want: &want{telemetry.GPUSourceLocal, "localhost", nil, "powermetrics on this machine", ""}},
		{in: "ssh://me@mac-mini?tool=powermetrics", want: &want{telemetry.GPUSourceSSH, "mac-mini", nil, "powermetrics on mac-mini through ssh", "me@mac-mini"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			src, err := ParseSource(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error repeats the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if src != nil {
					t.Fatalf("got %v, want no source", src)
				}
				return
			}
			got := want{src.Kind(), src.Host(), src.GPUs(), src.String(), ""}
			switch s := src.(type) {
			case *autoSource:
				got.detail = s.sh.sshDest
			case *smiSource:
				got.detail = s.sh.sshDest
			case *amdSMISource:
				got.detail = s.sh.sshDest
			case *amdgpuSource:
				got.detail = s.sh.sshDest
			case *macmonSource:
				got.detail = s.sh.sshDest
			case *xpuSMISource:
				got.detail = s.sh.sshDest
			case *powermetricsSource:
				got.detail = s.sh.sshDest
			case *exporterSource:
				got.detail = s.url
			}
			if !reflect.DeepEqual(got, *tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, *tt.want)
			}
			if strings.Contains(src.Host()+src.String(), "hunter2") || strings.Contains(src.Host(), "alice") {
				t.Errorf("label leaks credentials: %q / %q", src.Host(), src.String())
			}
		})
	}
}

func TestExporterPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file     string
		wantInfo []telemetry.GPU
		want     []Sample
	}{
		{"dcgm_a100_80gb_x2.metrics",
			[]telemetry.GPU{
				{Index: 0, Name: "NVIDIA A100-SXM4-80GB", PCIBusID: "0000:07:00.0", MemoryTotalMiB: fp(81920), PCIeGenCurrent: ip(4), PCIeWidthCurrent: ip(16), DriverVersion: "535.183.01"},
				{Index: 1, Name: "NVIDIA A100-SXM4-80GB", PCIBusID: "0000:0f:00.0", MemoryTotalMiB: fp(81920), PCIeGenCurrent: ip(4), PCIeWidthCurrent: ip(16), DriverVersion: "535.183.01"},
			},
			[]Sample{full(0, 312.458, 98, 61234, 1410, 52, 4, 16), full(1, 305.094, 97, 61228, 1395, 49, 4, 16)},
		},
		{"dcgm_h100_mig.metrics",
			[]telemetry.GPU{{Index: 0, Name: "NVIDIA H100 80GB HBM3", PCIBusID: "0000:18:00.0", MemoryTotalMiB: fp(80856), DriverVersion: "550.90.07"}},
			[]Sample{{GPU: 0, Valid: FieldPower | FieldMemUsed | FieldSMClock | FieldTemp, PowerW: 433.784, MemUsedMiB: 11125, SMClockMHz: 1980, TempC: 53}},
		},
		{"nvidia_gpu_exporter_3090_x2.metrics",
			[]telemetry.GPU{
				{Index: 0, Name: "NVIDIA GeForce RTX 3090", PCIBusID: "0000:01:00.0", PCIDeviceID: "10de:2204", PCIDeviceIDFrom: "nvidia-smi", MemoryTotalMiB: fp(24576),
					PCIeGenCurrent: ip(4), PCIeWidthCurrent: ip(16), PCIeGenMax: ip(4), PCIeWidthMax: ip(16), PowerLimitW: fp(350), DriverVersion: "550.120"},
				{Index: 1, Name: "NVIDIA GeForce RTX 3090", PCIBusID: "0000:08:00.0", PCIDeviceID: "10de:2204", PCIDeviceIDFrom: "nvidia-smi", MemoryTotalMiB: fp(24576),
					PCIeGenCurrent: ip(4), PCIeWidthCurrent: ip(4), PCIeGenMax: ip(4), PCIeWidthMax: ip(16), PowerLimitW: fp(350), DriverVersion: "550.120"},
			},
			[]Sample{full(0, 341.27, 100, 22110, 1905, 67, 4, 16), full(1, 336.51, 99, 22030, 1890, 64, 4, 4)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			page := readFixture(t, tt.file)
			gs, err := parseExporterPage([]byte(page))
			if err != nil {
				t.Fatal(err)
			}
			var info []telemetry.GPU
			var got []Sample
			for _, g := range gs {
				info = append(info, g.info)
				got = append(got, g.reading)
			}
			if !reflect.DeepEqual(info, tt.wantInfo) {
				g, _ := json.Marshal(info)
				w, _ := json.Marshal(tt.wantInfo)
				t.Errorf("inventory\n got %s\nwant %s", g, w)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readings\n got %+v\nwant %+v", got, tt.want)
			}
			// Nothing that identifies the physical card may survive parsing.
			dump, _ := json.Marshal(struct {
				I []telemetry.GPU
				S []Sample
			}{info, got})
			text := string(dump) + fmt.Sprintf("%+v %+v", info, got)
			for _, secret := range identifiers(page) {
				if strings.Contains(text, secret) {
					t.Errorf("parsed data keeps identifier %q", secret)
				}
			}
		})
	}
}

// identifiers pulls every uuid and serial label value out of a page.
func identifiers(page string) []string {
	var out []string
	for _, key := range []string{`UUID="`, `uuid="`, `serial="`} {
		rest := page
		for {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			rest = rest[i+len(key):]
			v, _, _ := strings.Cut(rest, `"`)
			if len(v) > 4 {
				out = append(out, strings.TrimPrefix(v, "GPU-"))
			}
		}
	}
	return out
}

func TestExporterPageRejects(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, page, want string }{
		{"html", "<html><body>Bad Gateway</body></html>\n", "not Prometheus metrics text"},
		{"other metrics", "# TYPE node_load1 gauge\nnode_load1 0.42\n", "no GPU metrics we know"},
		{"empty", "", "no GPU metrics we know"},
		{"no gpu label", "# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-1\"} 12\n", "lists no GPUs"},
		{"broken line", "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\" 12\n", "not Prometheus metrics text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseExporterPage([]byte(tt.page))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestLineWriterSplitsAcrossWrites(t *testing.T) {
	t.Parallel()
	var lines []string
	tooLong := 0
	w := &lineWriter{max: 16, line: func(s string) { lines = append(lines, s) }, tooLong: func() { tooLong++ }}
	for _, chunk := range []string{"0, 1", "2\n1, 3\n", "", "\n", "2"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if want := []string{"0, 12", "1, 3", ""}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %q, want %q", lines, want)
	}
	_, _ = w.Write([]byte(strings.Repeat("x", 40) + "\nafter\n"))
	if tooLong != 1 || len(lines) != 3 {
		t.Errorf("tooLong=%d lines=%q: an overlong line must stop the writer", tooLong, lines)
	}
}

func TestRemoteCommandQuoting(t *testing.T) {
	t.Parallel()
	got := remoteCommand("nvidia-smi", []string{"--query-gpu=index,power.draw", "--format=csv,noheader,nounits", "-lms", "1000", "it's", ""})
	want := `nvidia-smi --query-gpu=index,power.draw --format=csv,noheader,nounits -lms 1000 'it'\''s' ''`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// formatSampleLine writes a Sample the way nvidia-smi would.
func formatSampleLine(s Sample) string {
	f := func(ok bool, v float64) string {
		if !ok {
			return "[N/A]"
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	n := func(ok bool, v int) string {
		if !ok {
			return "[N/A]"
		}
		return strconv.Itoa(v)
	}
	fields := []string{
		strconv.Itoa(s.GPU), f(s.Has(FieldPower), s.PowerW), f(s.Has(FieldUtil), s.UtilPct), f(s.Has(FieldMemUsed), s.MemUsedMiB),
		f(s.Has(FieldSMClock), s.SMClockMHz), f(s.Has(FieldTemp), s.TempC), n(s.Has(FieldPCIeGen), s.PCIeGen), n(s.Has(FieldPCIeWidth), s.PCIeWidth),
	}
	if s.Has(FieldClockEvents) {
		// The clock event reasons, as nvidia-smi writes its bitmask
		// (the fuzzer found a line with them read back without).
		fields = append(fields, fmt.Sprintf("0x%016x", s.ClockEvents))
	}
	return strings.Join(fields, ", ")
}

// FuzzParseSMI holds the nvidia-smi CSV parser to: never panic; accept only
// non-negative finite readings; and read back exactly what it accepted.
func FuzzParseSMI(f *testing.F) {
	for _, file := range []string{"smi_stream_rtx4090.csv", "smi_stream_a100_80gb.csv", "smi_stream_h100_mig.csv", "smi_stream_2x3090.csv"} {
		for _, l := range fixtureLines(f, file) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, err := parseSampleLine(line)
		if err != nil {
			if s != (Sample{}) {
				t.Fatalf("error %v but a non-zero sample %+v", err, s)
			}
			return
		}
		if s.GPU < 0 || s.T != 0 {
			t.Fatalf("bad sample %+v", s)
		}
		for _, v := range []float64{s.PowerW, s.UtilPct, s.MemUsedMiB, s.SMClockMHz, s.TempC} {
			if v < 0 || v != v || v > 1e300 {
				t.Fatalf("reading %v out of range in %+v", v, s)
			}
		}
		if s.PCIeGen < 0 || s.PCIeWidth < 0 {
			t.Fatalf("bad link %+v", s)
		}
		for _, f := range []struct {
			f Field
			v float64
		}{{FieldPower, s.PowerW}, {FieldUtil, s.UtilPct}, {FieldMemUsed, s.MemUsedMiB}, {FieldSMClock, s.SMClockMHz}, {FieldTemp, s.TempC}} {
			if !s.Has(f.f) && f.v != 0 {
				t.Fatalf("missing reading carries a number: %+v", s)
			}
		}
		back := formatSampleLine(s)
		again, err := parseSampleLine(back)
		if err != nil || again != s {
			t.Fatalf("round trip of %q via %q: %+v, %v; want %+v", line, back, again, err, s)
		}
	})
}
