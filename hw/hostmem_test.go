package hw

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readCaptured(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "captured", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The real /proc/vmstat and /proc/meminfo of the machine this was built
// on (SOURCES.md): no swap configured, both counters 0.
func TestParseHostMemCaptured(t *testing.T) {
	t.Parallel()
	vmstat := readCaptured(t, "proc_vmstat_linux6.18_x86_64_kovara_build.txt")
	meminfo := readCaptured(t, "proc_meminfo_linux6.18_x86_64_kovara_build.txt")
	tests := []struct {
		name, text string
		want       string // "has in out total avail swaptotal swapfree"; "error" when refused
	}{
		{"vmstat and meminfo", vmstat + meminfo, "63 0 0 24683772 22192204 0 0"},
		{"meminfo first", meminfo + vmstat, "63 0 0 24683772 22192204 0 0"},
		{"vmstat alone", vmstat, "3 0 0 0 0 0 0"},
		{"meminfo alone", meminfo, "60 0 0 24683772 22192204 0 0"},
		{"what the loop greps", "pswpin 3072\npswpout 1024\nMemTotal:       32768000 kB\nMemAvailable:     512000 kB\nSwapTotal:       8388604 kB\nSwapFree:        7340028 kB\n",
			"63 3072 1024 32768000 512000 8388604 7340028"},
		{"a Mac's sh: no /proc", "grep: /proc/vmstat: No such file or directory\n", "error"},
		{"empty", "", "error"},
		{"a counter that is not a number", "pswpin lots\nMemAvailable: x kB\n", "error"},
	}
	for _, tt := range tests {
		r, err := parseHostMem(tt.text)
		got := "error"
		if err == nil {
			got = fmt.Sprintf("%d %d %d %d %d %d %d", r.has, r.swapIn, r.swapOut, r.memTotal, r.memAvail, r.swapTotal, r.swapF)
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestHostLevel(t *testing.T) {
	t.Parallel()
	s := time.Second
	at := func(sec float64, in, out, avail uint64) hostReading {
		return hostReading{T: time.Duration(sec * float64(s)), has: hostSwapIn | hostSwapOut | hostMemAvail | hostMemTotal | hostSwapTotal | hostSwapFree,
			swapIn: in, swapOut: out, memAvail: avail, memTotal: 32 << 20, swapTotal: 8 << 20, swapF: 8<<20 - in}
	}
	grow := []hostReading{at(0, 0, 0, 4<<20), at(1, 0, 0, 3<<20), at(2, 1000, 10, 1<<20), at(3, 2000, 10, 2<<20)}
	tests := []struct {
		name     string
		rs       []hostReading
		from, to float64
		want     string // "samples in out minavail peakswap"; "nil"
	}{
		{"no readings", nil, 0, 3, "nil"},
		{"the counters interpolated at the edges", grow, 1.5, 2.5, "1 4096000 20480 1024.0 1.0"},
		{"the whole run", grow, 0, 3, "4 8192000 40960 1024.0 2.0"},
		{"held flat before the first", grow, -1, 0.5, "1 0 0 4096.0 0.0"},
		{"held flat after the last", grow, 3, 4, "1 0 0 2048.0 2.0"},
		{"readings stop too early", grow, 0, 3 + 5.5, "nil"},
		{"readings start too late", grow, -5.5, 1, "nil"},
		{"no reading inside a short window", grow, 1.2, 1.4, "0 819200 8192 - -"},
		{"no swap counters (meminfo alone)", []hostReading{{T: 0, has: hostMemAvail, memAvail: 1 << 20}, {T: s, has: hostMemAvail, memAvail: 2 << 20}}, 0, 1,
			"2 - - 1024.0 -"},
		{"a counter that goes back is no swap", []hostReading{at(0, 500, 0, 1), at(1, 100, 0, 1)}, 0, 1, "2 0 0 0.0 0.5"},
		{"an empty window", grow, 2, 2, "nil"},
	}
	for _, tt := range tests {
		h := hostLevel(tt.rs, time.Duration(tt.from*float64(s)), time.Duration(tt.to*float64(s)), 5*s)
		got := "nil"
		if h != nil {
			f := func(p *float64) string {
				if p == nil {
					return "-"
				}
				return fmt.Sprintf("%.1f", *p)
			}
			i := func(p *int64) string {
				if p == nil {
					return "-"
				}
				return fmt.Sprint(*p)
			}
			got = strings.Join([]string{fmt.Sprint(h.Samples), i(h.SwapInBytes), i(h.SwapOutBytes), f(h.MinMemAvailableMiB), f(h.PeakSwapUsedMiB)}, " ")
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestHostMemoryTotals(t *testing.T) {
	t.Parallel()
	if got := hostMemory(nil); got != nil {
		t.Errorf("no readings: %+v", got)
	}
	got := hostMemory([]hostReading{{has: hostSwapIn}, {has: hostMemTotal | hostSwapTotal, memTotal: 24683772, swapTotal: 2 << 20}})
	if got == nil || got.MemTotalMiB == nil || *got.MemTotalMiB != 24105.2 || got.SwapTotalMiB == nil || *got.SwapTotalMiB != 2048 {
		t.Errorf("got %+v", got)
	}
}

// A real nvidia-smi --query-compute-apps output (SOURCES.md), joined to
// the GPUs by the key in its first column through the index,uuid table
// printed beside it — the way Start joins by PCI bus id.
func TestParseComputeAppsCaptured(t *testing.T) {
	t.Parallel()
	text := readCaptured(t, "nvidia_smi_compute_apps_8gpu_uuid_before_after_exp23.txt")
	before, after, ok := strings.Cut(text, "## After")
	if !ok {
		t.Fatal("no After section")
	}
	list := func(section string) string {
		gpus, apps, _ := strings.Cut(section, "\n\n")
		idx := map[string]int{}
		for _, l := range strings.Split(gpus, "\n") {
			if f := strings.Split(l, ", "); len(f) > 2 {
				if n, ok := smiInt(f[0]); ok {
					idx[f[1]] = n
				}
			}
		}
		var out []string
		for _, p := range parseComputeApps(apps, func(k string) (int, bool) { i, ok := idx[k]; return i, ok && i != 5 }) {
			mem := "nil"
			if p.UsedMiB != nil {
				mem = fmt.Sprint(*p.UsedMiB)
			}
			out = append(out, fmt.Sprintf("%d %d %q %s", p.GPU, p.PID, p.Name, mem))
		}
		return strings.Join(out, "\n")
	}
	wantBefore := `0 1328667 "/usr/local/bin/python3.10" 130004
1 1328668 "/usr/local/bin/python3.10" 130044
2 1425258 "python3" 105842
3 1328669 "/usr/local/bin/python3.10" 129984
4 1425259 "python3" 105842
6 1425261 "python3" 105842
7 1758887 "" 58060`
	if got := list(before); got != wantBefore {
		t.Errorf("before (GPU 5 not chosen):\n%s\nwant\n%s", got, wantBefore)
	}
	wantAfter := `0 1328667 "/usr/local/bin/python3.10" 130004
1 1328668 "/usr/local/bin/python3.10" 130044
3 1328669 "/usr/local/bin/python3.10" 129984
7 1758887 "" 58060`
	if got := list(strings.TrimPrefix(after, "\n2026-06-22T00:12:20+08:00\n")); got != wantAfter {
		t.Errorf("after:\n%s\nwant\n%s", got, wantAfter)
	}
}

func TestParseComputeApps(t *testing.T) {
	t.Parallel()
	bus := func(k string) (int, bool) {
		i, ok := map[string]int{"0000:01:00.0": 0, "0000:08:00.0": 1}[normBus(k)]
		return i, ok
	}
	tests := []struct {
		name, text, want string
	}{
		{"nothing running", "", "[]"},
		{"nounits, as Start asks", "00000000:01:00.0, 4242, /app/llama-server, 23342\n00000000:08:00.0, 77, Xorg, 312\n",
			`[{0 4242 /app/llama-server 23342} {1 77 Xorg 312}]`},
		{"a name with a comma", "00000000:01:00.0, 9, my, program, 10\n", `[{0 9 my, program 10}]`},
		{"Windows' WDDM: no memory", "00000000:01:00.0, 27220, C:\\Ollama\\ollama.exe, [N/A]\r\n", `[{0 27220 C:\Ollama\ollama.exe nil}]`},
		{"a GPU not chosen or not known", "00000000:41:00.0, 9, python3, 10\n", "[]"},
		{"a header and a blank", "gpu_bus_id, pid, process_name, used_gpu_memory [MiB]\n\n", "[]"},
	}
	for _, tt := range tests {
		var parts []string
		for _, p := range parseComputeApps(tt.text, bus) {
			mem := "nil"
			if p.UsedMiB != nil {
				mem = fmt.Sprint(*p.UsedMiB)
			}
			parts = append(parts, fmt.Sprintf("{%d %d %s %s}", p.GPU, p.PID, p.Name, mem))
		}
		if got := "[" + strings.Join(parts, " ") + "]"; got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}
