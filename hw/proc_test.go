//go:build unix

package hw

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeBox is a directory of fake nvidia-smi, ssh and lspci scripts that is
// the whole PATH of the test. Every script and every sleep it starts write
// their pid to DIR/pids so that the test can check none outlives the
// sampler.
type fakeBox struct {
	t   *testing.T
	dir string
}

func newFakeBox(t *testing.T) *fakeBox {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	return &fakeBox{t: t, dir: dir}
}

const scriptHead = `#!/bin/sh
DIR=%q
echo $$ >> "$DIR/pids"
nap() { /bin/sleep "$1" & echo $! >> "$DIR/pids"; wait $!; }
`

func (b *fakeBox) write(name, content string, mode os.FileMode) {
	b.t.Helper()
	if err := os.WriteFile(filepath.Join(b.dir, name), []byte(content), mode); err != nil {
		b.t.Fatal(err)
	}
}

func (b *fakeBox) script(name, body string) {
	b.write(name, fmt.Sprintf(scriptHead, b.dir)+body+"\n", 0o755)
}

// smi installs a fake nvidia-smi: stream is the shell body run for -lms,
// inventory what --query-gpu=index,name,… prints.
func (b *fakeBox) smi(stream, inventory string) {
	b.write("inventory.csv", inventory, 0o644)
	b.script("nvidia-smi", `echo "$*" >> "$DIR/smi.args"
stream() {
`+stream+`
}
case "$*" in
*-lms*) stream ;;
*--query-gpu=index,name*) /bin/cat "$DIR/inventory.csv" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac`)
}

func (b *fakeBox) lspci(output string) {
	b.write("lspci.txt", output, 0o644)
	b.script("lspci", `echo "$*" >> "$DIR/lspci.args"
/bin/cat "$DIR/lspci.txt"`)
}

// ssh installs a fake ssh that records its arguments, drops the options
// and the destination, and runs the remote command here.
func (b *fakeBox) ssh() {
	b.script("ssh", `echo "$*" >> "$DIR/ssh.args"
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-p) shift 2 ;;
    *) break ;;
  esac
done
shift
exec /bin/sh -c "$*"`)
}

func (b *fakeBox) read(name string) string {
	data, _ := os.ReadFile(filepath.Join(b.dir, name))
	return string(data)
}

// assertNoSurvivors fails if any process the fakes started is still alive
// (zombies waiting for a parent that is gone count as dead).
func (b *fakeBox) assertNoSurvivors() {
	b.t.Helper()
	var pids []int
	for _, f := range strings.Fields(b.read("pids")) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	if len(pids) == 0 {
		b.t.Fatal("no fake ever ran")
	}
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				b.t.Errorf("process %d outlived the sampler", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}

func smiSourceFor(t *testing.T, spec string) *smiSource {
	t.Helper()
	src, err := ParseSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := src.(*autoSource)
	if !ok {
		t.Fatalf("%s gave a %T, not a source that finds its tool", spec, src)
	}
	s := newToolSource(toolNvidiaSMI, a.sh, a.gpus).(*smiSource)
	s.startGrace = 100 * time.Millisecond
	return s
}

func TestInventoryThroughFakeTools(t *testing.T) {
	tests := []struct {
		name      string
		source    string
		inventory string
		lspci     string // "" = no lspci installed
		oldDriver bool
		want      string // GPUs as "index name device from", one per line
		err       string
	}{
		{name: "rtx 4090 with lspci", source: "local", inventory: "smi_inventory_rtx4090.csv", lspci: "lspci_rtx4090.txt",
			want: "0 NVIDIA GeForce RTX 4090 10de:2684 lspci"},
		{name: "a100 without lspci", source: "local", inventory: "smi_inventory_a100_80gb.csv",
			want: "0 NVIDIA A100-SXM4-80GB 10de:20b2 nvidia-smi\n1 NVIDIA A100-SXM4-80GB 10de:20b2 nvidia-smi\n2 NVIDIA A100-SXM4-80GB 10de:20b2 nvidia-smi\n3 NVIDIA A100-SXM4-80GB 10de:20b2 nvidia-smi"},
		{name: "2x3090 subset, lspci without domains", source: "local?gpus=1", inventory: "smi_inventory_2x3090.csv", lspci: "lspci_2x3090_nodomain.txt",
			want: "1 NVIDIA GeForce RTX 3090 10de:2204 lspci"},
		{name: "old driver fallback", source: "local", inventory: "smi_inventory_old_fields.csv", oldDriver: true,
			want: "0 Tesla V100-PCIE-16GB  "},
		{name: "missing GPU in subset", source: "local?gpus=0,5", inventory: "smi_inventory_2x3090.csv",
			err: "this machine has no GPU 5 (it has GPUs 0, 1); fix ?gpus= in the GPU source"},
		{name: "through ssh", source: "ssh://alice@lab-box:2222", inventory: "smi_inventory_h100_mig.csv", lspci: "lspci_a100_80gb.txt",
			want: "0 NVIDIA H100 80GB HBM3 10de:2330 nvidia-smi\n1 NVIDIA H100 80GB HBM3 10de:2330 nvidia-smi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			if tt.oldDriver {
				box.write("inventory.csv", readFixture(t, tt.inventory), 0o644)
				box.script("nvidia-smi", `echo "$*" >> "$DIR/smi.args"
case "$*" in
*pcie.link.gen.max*) echo 'Field "pcie.link.gen.max" is not a valid field to query.'; echo; exit 2 ;;
*) /bin/cat "$DIR/inventory.csv" ;;
esac`)
			} else {
				box.smi("exit 1", readFixture(t, tt.inventory))
			}
			if tt.lspci != "" {
				box.lspci(readFixture(t, tt.lspci))
			}
			box.ssh()
			src := smiSourceFor(t, tt.source)
			gpus, err := src.Inventory(context.Background())
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, g := range gpus {
				lines = append(lines, fmt.Sprintf("%d %s %s %s", g.Index, g.Name, g.PCIDeviceID, g.PCIDeviceIDFrom))
			}
			if got := strings.Join(lines, "\n"); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			args := box.read("smi.args")
			for _, never := range []string{"serial", "uuid"} {
				if strings.Contains(args, never) {
					t.Errorf("nvidia-smi was asked for %s: %s", never, args)
				}
			}
			if strings.HasPrefix(tt.source, "ssh://") {
				sshArgs := box.read("ssh.args")
				for _, want := range []string{
					"-o BatchMode=yes -o ConnectTimeout=5 -p 2222 alice@lab-box nvidia-smi --query-gpu=index,name,pci.bus_id,",
					"-o BatchMode=yes -o ConnectTimeout=5 -p 2222 alice@lab-box lspci -D -nn -d 10de:",
				} {
					if !strings.Contains(sshArgs, want) {
						t.Errorf("ssh was not called with %q:\n%s", want, sshArgs)
					}
				}
			}
			box.assertNoSurvivors()
		})
	}
}

const (
	tickLines = `echo "0, 100.00, 50, 1000, 1500, 40, 4, 16"; echo "1, 200.00, 70, 2000, 1500, 45, 4, 16"`
	driverMsg = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."
)

func TestSamplerAgainstFakeNvidiaSMI(t *testing.T) {
	tests := []struct {
		name       string
		source     string
		stream     string
		interval   time.Duration
		run        time.Duration // how long to let it run before Stop; 0: until minSamples, or until it ends when a warning is expected
		minSamples int
		maxSamples int
		warning    string // exact; "" = none
		power      float64
	}{
		{name: "normal streaming", source: "local", stream: "while :; do " + tickLines + "; nap 0.1; done",
			interval: 100 * time.Millisecond, minSamples: 8, maxSamples: 1000, power: 300},
		{name: "subset", source: "local?gpus=1", stream: "while :; do " + tickLines + "; nap 0.1; done",
			interval: 100 * time.Millisecond, minSamples: 4, maxSamples: 1000, power: 200},
		{name: "slow but alive", source: "local", stream: `while :; do echo "0, 100.00, 50, 1000, 1500, 40, 4, 16"; nap 0.25; done`,
			interval: 100 * time.Millisecond, run: 1200 * time.Millisecond, minSamples: 3, maxSamples: 10, power: 100},
		{name: "hangs after one loop", source: "local", stream: tickLines + "; nap 3600",
			interval: 50 * time.Millisecond, minSamples: 2, maxSamples: 2, power: 300,
			warning: "GPU telemetry stopped: nvidia-smi on this machine printed nothing for 0.25 s"},
		{name: "silent from the start", source: "local", stream: "nap 3600",
			interval: 50 * time.Millisecond,
			warning:  "GPU telemetry stopped: nvidia-smi on this machine printed nothing for 0.35 s after it started"},
		{name: "garbage", source: "local", stream: `while :; do echo "this is not csv"; nap 0.01; done`,
			interval: 50 * time.Millisecond,
			warning:  `GPU telemetry stopped: nvidia-smi on this machine printed lines we could not read, such as "this is not csv"`},
		{name: "exit 9", source: "local", stream: "echo \"" + driverMsg + "\"; exit 9",
			interval: 50 * time.Millisecond,
			warning:  "GPU telemetry stopped: nvidia-smi on this machine exited with code 9 (" + driverMsg + ")"},
		{name: "killed mid-stream", source: "local", stream: "for i in 1 2 3; do " + tickLines + "; nap 0.05; done; kill -9 $$",
			interval: 50 * time.Millisecond, minSamples: 6, maxSamples: 6, power: 300,
			warning: "GPU telemetry stopped: nvidia-smi on this machine was killed (signal: killed)"},
		{name: "ends on its own", source: "local", stream: tickLines + "; exit 0",
			interval: 50 * time.Millisecond, minSamples: 2, maxSamples: 2, power: 300,
			warning: "GPU telemetry stopped: nvidia-smi on this machine ended on its own"},
		{name: "streaming through ssh", source: "ssh://alice@lab-box", stream: "while :; do " + tickLines + "; nap 0.1; done",
			interval: 100 * time.Millisecond, minSamples: 8, maxSamples: 1000, power: 300},
		{name: "hang through ssh", source: "ssh://alice@lab-box", stream: tickLines + "; nap 3600",
			interval: 50 * time.Millisecond, minSamples: 2, maxSamples: 2, power: 300,
			warning: "GPU telemetry stopped: nvidia-smi on lab-box printed nothing for 0.25 s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			box.smi(tt.stream, "")
			box.ssh()
			src := smiSourceFor(t, tt.source)
			smp, err := src.Start(context.Background(), tt.interval)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.run > 0:
				time.Sleep(tt.run)
			case tt.warning == "":
				waitForSamples(t, smp, tt.minSamples)
			default:
				select {
				case <-smp.Done():
				case <-time.After(5 * time.Second):
					t.Error("the sampler did not end by itself")
				}
			}
			smp.Stop()
			smp.Stop() // twice is fine
			box.assertNoSurvivors()

			got := smp.Warnings()
			var want []string
			if tt.warning != "" {
				want = []string{tt.warning}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("warnings\n got %q\nwant %q", got, want)
			}
			samples := smp.Samples()
			if len(samples) < tt.minSamples || len(samples) > tt.maxSamples {
				t.Errorf("%d samples, want %d to %d", len(samples), tt.minSamples, tt.maxSamples)
			}
			for i := 1; i < len(samples); i++ {
				if samples[i].T < samples[i-1].T {
					t.Fatalf("offsets go backwards at %d", i)
				}
			}
			if tt.power > 0 {
				p, ok := smp.Latest()
				if !ok || p.PowerW == nil || *p.PowerW != tt.power {
					t.Errorf("Latest = %+v, want %v W", p, tt.power)
				}
			}
			if strings.HasPrefix(tt.source, "ssh://") && !strings.Contains(box.read("ssh.args"), "-o BatchMode=yes -o ConnectTimeout=5 alice@lab-box nvidia-smi --query-gpu=index,power.draw,utilization.gpu,memory.used,clocks.sm,temperature.gpu,pcie.link.gen.current,pcie.link.width.current,clocks_event_reasons.active --format=csv,noheader,nounits -lms "+strconv.FormatInt(tt.interval.Milliseconds(), 10)) {
				t.Errorf("ssh arguments: %s", box.read("ssh.args"))
			}
		})
	}
}

func TestCancelledSamplerLeavesNoChild(t *testing.T) {
	for _, source := range []string{"local", "ssh://lab-box"} {
		t.Run(source, func(t *testing.T) {
			box := newFakeBox(t)
			// The fake ignores SIGTERM and SIGHUP: only a group SIGKILL ends it.
			box.smi("trap '' TERM HUP INT; while :; do "+tickLines+"; nap 0.05; done", "")
			box.ssh()
			ctx, cancel := context.WithCancel(context.Background())
			smp, err := smiSourceFor(t, source).Start(ctx, 50*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(3 * time.Second)
			for len(smp.Samples()) < 4 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			select {
			case <-smp.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("cancelling did not end the sampler")
			}
			box.assertNoSurvivors()
			if w := smp.Warnings(); len(w) != 0 {
				t.Errorf("cancelling is not a failure, but got %q", w)
			}
			if len(smp.Samples()) < 4 {
				t.Errorf("only %d samples before cancel", len(smp.Samples()))
			}
		})
	}
}

func TestFailuresInWords(t *testing.T) {
	tests := []struct {
		name      string
		source    string
		setup     func(b *fakeBox)
		inventory string // the Inventory error
		start     string // Start's error, or the sampler's warning when it starts
	}{
		{
			name:      "nvidia-smi not installed",
			source:    "local",
			setup:     func(b *fakeBox) {},
			inventory: "nvidia-smi was not found on this machine",
			start:     "nvidia-smi was not found on this machine",
		},
		{
			name:   "ssh refused",
			source: "ssh://alice@lab-box",
			setup: func(b *fakeBox) {
				b.script("ssh", `echo "ssh: connect to host lab-box port 22: Connection refused" >&2; exit 255`)
			},
			inventory: "ssh could not connect to lab-box (ssh: connect to host lab-box port 22: Connection refused)",
			start:     "GPU telemetry stopped: ssh could not connect to lab-box (ssh: connect to host lab-box port 22: Connection refused)",
		},
		{
			name:   "ssh key refused",
			source: "ssh://alice@lab-box",
			setup: func(b *fakeBox) {
				b.script("ssh", `echo "Warning: Permanently added 'lab-box' (ED25519) to the list of known hosts." >&2
echo "alice@lab-box: Permission denied (publickey)." >&2; exit 255`)
			},
			inventory: "ssh could not connect to lab-box (alice@lab-box: Permission denied (publickey).)",
			start:     "GPU telemetry stopped: ssh could not connect to lab-box (alice@lab-box: Permission denied (publickey).)",
		},
		{
			name:      "nvidia-smi missing on the remote",
			source:    "ssh://alice@lab-box",
			setup:     func(b *fakeBox) { b.ssh() },
			inventory: "nvidia-smi is not installed on lab-box (or not on the PATH that ssh commands get there)",
			start:     "GPU telemetry stopped: nvidia-smi is not installed on lab-box (or not on the PATH that ssh commands get there)",
		},
		{
			name:      "ssh not installed",
			source:    "ssh://alice@lab-box",
			setup:     func(b *fakeBox) {},
			inventory: "the ssh program was not found on this machine; install OpenSSH or choose another GPU source",
			start:     "the ssh program was not found on this machine; install OpenSSH or choose another GPU source",
		},
		{
			name:   "driver not loaded",
			source: "local",
			setup: func(b *fakeBox) {
				b.script("nvidia-smi", `echo "`+driverMsg+`"; exit 9`)
			},
			inventory: "nvidia-smi on this machine exited with code 9 (" + driverMsg + ")",
			start:     "GPU telemetry stopped: nvidia-smi on this machine exited with code 9 (" + driverMsg + ")",
		},
		{
			name:   "inventory hangs",
			source: "local",
			setup: func(b *fakeBox) {
				b.smi("exit 0", "")
				b.script("nvidia-smi", `nap 3600`)
			},
			inventory: "nvidia-smi on this machine did not answer within 0.3 s",
			start:     "GPU telemetry stopped: nvidia-smi on this machine printed nothing for 0.35 s after it started",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			tt.setup(box)
			src := smiSourceFor(t, tt.source)
			src.runTimeout = 300 * time.Millisecond
			if _, err := src.Inventory(context.Background()); err == nil || err.Error() != tt.inventory {
				t.Errorf("Inventory error\n got %v\nwant %s", err, tt.inventory)
			}
			smp, err := src.Start(context.Background(), 50*time.Millisecond)
			var got string
			if err != nil {
				got = err.Error()
			} else {
				select {
				case <-smp.Done():
				case <-time.After(5 * time.Second):
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
