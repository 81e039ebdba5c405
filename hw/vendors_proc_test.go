//go:build unix

package hw

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// link puts a real system program into the box (the fakes' PATH is the
// box alone): sh for our shell loops, cat and grep for the sysfs pass.
func (b *fakeBox) link(names ...string) {
	b.t.Helper()
	for _, n := range names {
		target := filepath.Join("/bin", n)
		if _, err := os.Stat(target); err != nil {
			target = filepath.Join("/usr/bin", n)
		}
		if err := os.Symlink(target, filepath.Join(b.dir, n)); err != nil {
			b.t.Fatal(err)
		}
	}
}

// amdSMI installs a stand-in amd-smi that prints the captured JSON for
// `metric … --json`.
func (b *fakeBox) amdSMI(doc string) {
	b.write("amdsmi.json", doc, 0o644)
	b.script("amd-smi", `echo "$*" >> "$DIR/amdsmi.args"
case "$*" in
metric*--json*) /bin/cat "$DIR/amdsmi.json" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac`)
}

// macmon installs a stand-in macmon that prints line once for -s 1 and
// every 50 ms otherwise, as `macmon pipe` does.
func (b *fakeBox) macmon(line string) {
	b.write("macmon.jsonl", line+"\n", 0o644)
	b.script("macmon", `echo "$*" >> "$DIR/macmon.args"
case "$*" in
pipe*-s\ 1*) /bin/cat "$DIR/macmon.jsonl" ;;
pipe*) while :; do /bin/cat "$DIR/macmon.jsonl"; nap 0.05; done ;;
*) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac`)
}

// xpuSMI installs a stand-in xpu-smi that prints the captured dump: its
// header, then its rows (once for -n 1, every 50 ms otherwise).
func (b *fakeBox) xpuSMI(csv string) {
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	b.write("xpu.head", lines[0]+"\n", 0o644)
	b.write("xpu.row", lines[1]+"\n", 0o644)
	b.script("xpu-smi", `echo "$*" >> "$DIR/xpu.args"
case "$*" in
dump*-n\ 1*) /bin/cat "$DIR/xpu.head" "$DIR/xpu.row" ;;
dump*) /bin/cat "$DIR/xpu.head"; while :; do /bin/cat "$DIR/xpu.row"; nap 0.05; done ;;
*) echo "unexpected arguments: $*" >&2; exit 1 ;;
esac`)
}

// busyCat is a cat that fails on gpu_busy_percent the way the captured
// card's does.
func (b *fakeBox) busyCat() {
	b.script("cat", `case "$1" in
*/card0/device/gpu_busy_percent) echo "$1: Operation not supported" >&2; exit 1 ;;
*) exec /bin/cat "$@" ;;
esac`)
}

// autoFor is the source ParseSource gives for spec, with its limits
// shortened and the amdgpu files looked for under root.
func autoFor(t *testing.T, spec, root string) *autoSource {
	t.Helper()
	src, err := ParseSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := src.(*autoSource)
	if !ok {
		t.Fatalf("%s gave a %T", spec, src)
	}
	a.sysRoot = root
	a.newFor = func(tool string) Source {
		s := newToolSource(tool, a.sh, a.gpus)
		switch s := s.(type) {
		case *smiSource:
			s.startGrace = 100 * time.Millisecond
		case *amdgpuSource:
			s.root = root
			s.startGrace = 100 * time.Millisecond
		case *amdSMISource:
			s.startGrace = 100 * time.Millisecond
		case *macmonSource:
			s.startGrace = 100 * time.Millisecond
		case *xpuSMISource:
			s.startGrace = 100 * time.Millisecond
		}
		return s
	}
	return a
}

func TestDetectionPicksTheFirstTool(t *testing.T) {
	amdList := capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json")
	macmonLine := strings.TrimSpace(capturedText(t, "macmon_pipe_v07_16gb_beszel1796.jsonl"))
	xpuCSV := capturedText(t, "xpu_smi_dump_m012_smi_user_guide.csv")
	tests := []struct {
		name    string
		setup   func(b *fakeBox)
		sysfs   bool // the stand-in amdgpu cards are there
		tool    string
		summary string // hw.Summary of the inventory
		power   float64
	}{
		{name: "nvidia-smi before everything", setup: func(b *fakeBox) {
			b.smi("while :; do "+tickLines+"; nap 0.05; done", readFixture(t, "smi_inventory_2x3090.csv"))
			b.amdSMI(amdList)
			b.macmon(macmonLine)
		}, sysfs: true, tool: "nvidia-smi", summary: "2 × NVIDIA GeForce RTX 3090 (24576 MiB), driver 550.120", power: 300},
		{name: "amd-smi before the amdgpu files", setup: func(b *fakeBox) { b.amdSMI(amdList); b.xpuSMI(xpuCSV) },
			sysfs: true, tool: "amd-smi", summary: "1 × AMD GPU", power: 10},
		{name: "the amdgpu files", setup: func(b *fakeBox) { b.macmon(macmonLine) },
			sysfs: true, tool: "amdgpu sysfs", summary: "AMD GPU + AMD GPU"},
		{name: "macmon", setup: func(b *fakeBox) { b.macmon(macmonLine); b.xpuSMI(xpuCSV) },
			tool: "macmon", summary: "1 × Apple Silicon GPU (unified memory) (16384 MiB)", power: 0.25677499175071716},
		{name: "xpu-smi", setup: func(b *fakeBox) { b.xpuSMI(xpuCSV) },
			tool: "xpu-smi", summary: "1 × Intel GPU", power: 14.61},
	}
	for _, route := range []string{"local", "ssh://alice@lab-box"} {
		for _, tt := range tests {
			t.Run(route+" "+tt.name, func(t *testing.T) {
				box := newFakeBox(t)
				box.link("sh", "cat", "grep", "sleep")
				box.ssh()
				tt.setup(box)
				root := t.TempDir()
				if tt.sysfs {
					root = standardTree(t).root
				}
				src := autoFor(t, route, root)
				if got := Tool(src); got != "" {
					t.Errorf("Tool before detection = %q", got)
				}
				inv, err := src.Inventory(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got, want := Tool(src), strings.Fields(tt.tool)[0]; got != want {
					t.Errorf("Tool = %q, want %q", got, want)
				}
				want := tt.tool + " on this machine"
				if route != "local" {
					want = tt.tool + " on lab-box through ssh"
				}
				if got := src.String(); got != want {
					t.Errorf("String() = %q, want %q", got, want)
				}
				if got := Summary(inv); got != tt.summary {
					t.Errorf("inventory %q, want %q", got, tt.summary)
				}
				smp, err := src.Start(context.Background(), 50*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				waitForSamples(t, smp, 3)
				smp.Stop()
				if w := smp.Warnings(); len(w) != 0 {
					t.Errorf("warnings %q", w)
				}
				p, ok := smp.Latest()
				switch {
				case !ok:
					t.Error("no reading")
				case tt.power == 0 && p.PowerW != nil:
					t.Errorf("power %v W, want none: a card without a power reading makes the sum unknown", *p.PowerW)
				case tt.power > 0 && (p.PowerW == nil || !close6(*p.PowerW, tt.power)):
					t.Errorf("power %v, want %v W", p.PowerW, tt.power)
				}
				if box.read("pids") != "" {
					box.assertNoSurvivors()
				}
			})
		}
	}
}

func TestDetectionFindsNothing(t *testing.T) {
	for _, tt := range []struct{ route, want string }{
		{"local", "no GPU power source on this machine: looked for nvidia-smi, amd-smi, the amdgpu driver's sysfs files, macmon and xpu-smi; install the one for your GPU (macmon on a Mac), or give a GPU exporter's /metrics address, or a smart plug under Wall power"},
		{"ssh://alice@lab-box:2222", "no GPU power source on lab-box:2222: looked for nvidia-smi, amd-smi, the amdgpu driver's sysfs files, macmon and xpu-smi; install the one for your GPU (macmon on a Mac), or give a GPU exporter's /metrics address, or a smart plug under Wall power"},
	} {
		t.Run(tt.route, func(t *testing.T) {
			box := newFakeBox(t)
			box.link("sh", "cat")
			box.ssh()
			// An Intel card only: not an amdgpu one.
			tree := newSysfsTree(t)
			tree.file("class/drm/card0/device/vendor", "0x8086\n")
			src := autoFor(t, tt.route, tree.root)
			if _, err := src.Inventory(context.Background()); err == nil || err.Error() != tt.want {
				t.Errorf("Inventory: %v\nwant %s", err, tt.want)
			}
			if _, err := src.Start(context.Background(), time.Second); err == nil || err.Error() != tt.want {
				t.Errorf("Start: %v\nwant %s", err, tt.want)
			}
			if strings.Contains(tt.route, "ssh") && !strings.Contains(box.read("ssh.args"), "-p 2222 alice@lab-box sh -c ") {
				t.Errorf("ssh arguments: %s", box.read("ssh.args"))
			}
		})
	}
}

func TestDetectionThroughSSHFailsInWords(t *testing.T) {
	box := newFakeBox(t)
	box.script("ssh", `echo "alice@lab-box: Permission denied (publickey)." >&2; exit 255`)
	src := autoFor(t, "ssh://alice@lab-box", t.TempDir())
	want := "ssh could not connect to lab-box (alice@lab-box: Permission denied (publickey).)"
	if _, err := src.Inventory(context.Background()); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if got := src.String(); got != "the GPU tool on lab-box through ssh" {
		t.Errorf("String() = %q", got)
	}
}

func TestAMDGPUThroughSSH(t *testing.T) {
	box := newFakeBox(t)
	box.link("sh", "grep", "sleep")
	box.busyCat()
	box.ssh()
	tree := standardTree(t)
	src := newAMDGPUSource(shell{sshDest: "alice@lab-box", host: "lab-box"}, nil)
	src.root = tree.root
	inv, err := src.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inv) != 2 || inv[0].PCIBusID != "0000:03:00.0" || inv[0].PCIDeviceID != "1002:73bf" || inv[1].MemoryTotalMiB == nil || *inv[1].MemoryTotalMiB != 4096 {
		t.Errorf("inventory %+v", inv)
	}
	smp, err := src.Start(context.Background(), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, smp, 6)
	smp.Stop()
	box.assertNoSurvivors()
	if w := smp.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	got := smp.Samples()
	for _, s := range got[:6] {
		want := amdCard0
		if s.GPU == 1 {
			want = amdCard1
		}
		s.T = 0
		if !sameSample(s, want) {
			t.Errorf("got  %+v\nwant %+v", s, want)
		}
	}
	if got[0].T != got[1].T || got[1].T == got[2].T {
		t.Errorf("one pass is not one tick: %v %v %v", got[0].T, got[1].T, got[2].T)
	}
}

func TestVendorToolsFailInWords(t *testing.T) {
	amdList := capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json")
	tests := []struct {
		name      string
		source    string
		setup     func(b *fakeBox)
		inventory string
		start     string
	}{
		{name: "amd-smi fails", source: "local?tool=amd-smi",
			setup: func(b *fakeBox) {
				b.script("amd-smi", `echo "AMDSMI not initialized: is the amdgpu driver loaded?"; exit 3`)
			},
			inventory: "amd-smi on this machine exited with code 3 (AMDSMI not initialized: is the amdgpu driver loaded?)",
			start:     "GPU telemetry stopped: amd-smi on this machine exited with code 3 (AMDSMI not initialized: is the amdgpu driver loaded?)"},
		{name: "amd-smi prints garbage", source: "ssh://lab-box?tool=amd-smi",
			setup:     func(b *fakeBox) { b.amdSMI("Traceback (most recent call last):\n") },
			inventory: "amd-smi on lab-box gave a GPU list we could not read: it is not JSON",
			start:     `GPU telemetry stopped: amd-smi on lab-box printed lines we could not read, such as "Traceback (most recent call last):"`},
		{name: "amd-smi not on the remote", source: "ssh://lab-box?tool=amd-smi",
			setup:     func(b *fakeBox) {},
			inventory: "amd-smi is not installed on lab-box (or not on the PATH that ssh commands get there)",
			start:     "GPU telemetry stopped: amd-smi is not installed on lab-box (or not on the PATH that ssh commands get there)"},
		{name: "macmon not installed", source: "local?tool=macmon",
			setup:     func(b *fakeBox) {},
			inventory: "macmon was not found on this machine",
			start:     "macmon was not found on this machine"},
		{name: "macmon not on a Mac", source: "local?tool=macmon",
			setup:     func(b *fakeBox) { b.script("macmon", `echo "Error: No Apple Silicon device found" >&2; exit 1`) },
			inventory: "macmon on this machine exited with code 1 (Error: No Apple Silicon device found)",
			start:     "GPU telemetry stopped: macmon on this machine exited with code 1 (Error: No Apple Silicon device found)"},
		{name: "xpu-smi without a header", source: "local?tool=xpu-smi",
			setup: func(b *fakeBox) {
				b.script("xpu-smi", `while :; do echo "06:14:46.000,    0, 0.00, 14.61,    0"; nap 0.01; done`)
			},
			inventory: "xpu-smi on this machine did not answer within 0.3 s",
			start:     `GPU telemetry stopped: xpu-smi on this machine printed lines we could not read, such as "06:14:46.000, 0, 0.00, 14.61, 0"`},
		{name: "amdgpu files gone", source: "local?tool=amdgpu",
			setup:     func(b *fakeBox) {},
			inventory: "this machine has no GPU driven by amdgpu (no /sys/class/drm/card*/device with vendor 0x1002)",
			start:     "GPU telemetry stopped: amdgpu sysfs on this machine gave no readings for 0.25 s (last try: this machine has no GPU driven by amdgpu (no /sys/class/drm/card*/device with vendor 0x1002))"},
		{name: "subset the machine lacks", source: "local?tool=amd-smi&gpus=3",
			setup:     func(b *fakeBox) { b.amdSMI(amdList) },
			inventory: "this machine has no GPU 3 (it has GPU 0); fix ?gpus= in the GPU source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			box.link("sh", "cat", "sleep")
			box.ssh()
			tt.setup(box)
			src, err := ParseSource(tt.source)
			if err != nil {
				t.Fatal(err)
			}
			empty := t.TempDir()
			switch s := src.(type) {
			case *amdSMISource:
				s.runTimeout, s.startGrace = 300*time.Millisecond, 100*time.Millisecond
			case *macmonSource:
				s.runTimeout, s.startGrace = 300*time.Millisecond, 100*time.Millisecond
			case *xpuSMISource:
				s.runTimeout, s.startGrace = 300*time.Millisecond, 100*time.Millisecond
			case *amdgpuSource:
				s.root = empty
			}
			if _, err := src.Inventory(context.Background()); err == nil || err.Error() != tt.inventory {
				t.Errorf("Inventory error\n got %v\nwant %s", err, tt.inventory)
			}
			if tt.start == "" {
				return
			}
			smp, err := src.Start(context.Background(), 50*time.Millisecond)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				select {
				case <-smp.Done():
				case <-time.After(20 * time.Second):
					t.Error("the sampler did not end by itself")
				}
				smp.Stop()
				got = strings.Join(smp.Warnings(), "\n")
			}
			if got != tt.start {
				t.Errorf("Start\n got %s\nwant %s", got, tt.start)
			}
			if box.read("pids") != "" {
				box.assertNoSurvivors()
			}
		})
	}
}
