//go:build unix

package hw

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProc is a /proc with the captured meminfo's format whose swap
// counters grow by 256 pages (1 MiB) in and 16 out every 20 ms until
// stop; root is what a source's hostRoot takes.
func fakeProc(t *testing.T) (root string, stop func()) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "proc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vmstat := readCaptured(t, "proc_vmstat_linux6.18_x86_64_kovara_build.txt")
	write := func(name, text string) {
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	write("meminfo", "MemTotal:       32768000 kB\nMemFree:          100000 kB\nMemAvailable:     512000 kB\nSwapTotal:       8388604 kB\nSwapFree:        7340028 kB\n")
	tick := func(i int) {
		v := strings.Replace(vmstat, "pswpin 0\n", fmt.Sprintf("pswpin %d\n", 256*i), 1)
		v = strings.Replace(v, "pswpout 0\n", fmt.Sprintf("pswpout %d\n", 16*i), 1)
		write("vmstat", v)
	}
	tick(0)
	done, wg := make(chan struct{}), sync.WaitGroup{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				tick(i)
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	t.Cleanup(stop)
	return root, stop
}

// procsSMI installs a fake nvidia-smi streaming the 2×3090 inventory's
// cards that lists one set of programs the first time it is asked and
// another the second.
func (b *fakeBox) procsSMI(first, second string) {
	b.write("inventory.csv", readFile(b.t, filepath.Join("testdata", "smi_inventory_2x3090.csv")), 0o644)
	b.write("apps1.csv", first, 0o644)
	b.write("apps2.csv", second, 0o644)
	b.script("nvidia-smi", `echo "$*" >> "$DIR/smi.args"
case "$*" in
*-lms*) while :; do `+tickLines+`; nap 0.05; done ;;
*--query-compute-apps*) if [ -e "$DIR/asked" ]; then /bin/cat "$DIR/apps2.csv"; else : > "$DIR/asked"; /bin/cat "$DIR/apps1.csv"; fi ;;
*--query-gpu=index,name*) /bin/cat "$DIR/inventory.csv" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac`)
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestHostAndProgramsBesideNvidiaSMI(t *testing.T) {
	const first = "00000000:01:00.0, 4242, /app/llama-server, 20000\n00000000:08:00.0, 4242, /app/llama-server, 20000\n00000000:01:00.0, 977, /usr/bin/python3, 6200\n"
	const second = "00000000:01:00.0, 4242, /app/llama-server, 20480\n00000000:08:00.0, 4242, /app/llama-server, 20480\n"
	for _, tt := range []struct{ source, noProc string }{{"local", ""}, {"ssh://alice@lab-box", ""}, {"local", "no /proc"}, {"ssh://alice@lab-box", "no /proc"}} {
		t.Run(tt.source+" "+tt.noProc, func(t *testing.T) {
			box := newFakeBox(t)
			box.link("sh", "grep", "sleep")
			box.ssh()
			box.procsSMI(first, second)
			root, stopProc := fakeProc(t)
			if tt.noProc != "" {
				root = t.TempDir()
			}
			src := smiSourceFor(t, tt.source)
			src.hostRoot = root
			ctx := context.Background()
			inv, err := src.Inventory(ctx)
			if err != nil {
				t.Fatal(err)
			}
			smp, err := src.Start(ctx, 50*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			waitForSamples(t, smp, 4)
			start := time.Now()
			time.Sleep(500 * time.Millisecond)
			end := time.Now()
			smp.Stop()
			stopProc()
			box.assertNoSurvivors()
			tel := NewTelemetry(src, inv, smp, []LevelWindow{{Concurrency: 4, Start: start, End: end}})
			if len(tel.Warnings) > 0 {
				t.Errorf("warnings %q", tel.Warnings)
			}

			h := tel.Levels[4].Host
			if tt.noProc != "" {
				if h != nil || tel.HostMemory != nil {
					t.Errorf("a machine without /proc gave %+v, %+v", h, tel.HostMemory)
				}
			} else {
				if h == nil || tel.HostMemory == nil {
					t.Fatalf("no memory figures: %+v, %+v", h, tel.HostMemory)
				}
				// 1 MiB in and 64 KiB out every 20 ms: about 25 MiB in over
				// 0.5 s; the reads every 50 ms and the scheduler blur it.
				if h.Samples < 4 || h.SwapInBytes == nil || *h.SwapInBytes < 8<<20 || *h.SwapInBytes > 40<<20 ||
					h.SwapOutBytes == nil || *h.SwapInBytes != 16**h.SwapOutBytes && (*h.SwapOutBytes < 512<<10 || *h.SwapOutBytes > 3<<20) {
					t.Errorf("level figures %d samples, in %v, out %v", h.Samples, deref(h.SwapInBytes), deref(h.SwapOutBytes))
				}
				if h.MinMemAvailableMiB == nil || *h.MinMemAvailableMiB != 500 || h.PeakSwapUsedMiB == nil || *h.PeakSwapUsedMiB != 1024 {
					t.Errorf("least available %v, peak swap used %v", h.MinMemAvailableMiB, h.PeakSwapUsedMiB)
				}
				if tel.HostMemory.MemTotalMiB == nil || *tel.HostMemory.MemTotalMiB != 32000 {
					t.Errorf("host memory %+v", tel.HostMemory)
				}
			}

			p := tel.GPUProcesses
			if p == nil {
				t.Fatal("no program lists")
			}
			list := func(ps []GPUProcess) string {
				var out []string
				for _, x := range ps {
					out = append(out, fmt.Sprintf("%d %d %s %v", x.GPU, x.PID, x.Name, deref(x.UsedMiB)))
				}
				return strings.Join(out, "; ")
			}
			if got, want := list(p.Start), "0 4242 /app/llama-server 20000; 1 4242 /app/llama-server 20000; 0 977 /usr/bin/python3 6200"; got != want {
				t.Errorf("at the start: %s\nwant %s", got, want)
			}
			if got, want := list(p.End), "0 4242 /app/llama-server 20480; 1 4242 /app/llama-server 20480"; got != want {
				t.Errorf("at the end: %s\nwant %s", got, want)
			}
			if got := strings.Count(box.read("smi.args"), "--query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv,noheader,nounits"); got != 2 {
				t.Errorf("the programs were asked for %d times, want 2:\n%s", got, box.read("smi.args"))
			}
			if strings.Contains(strings.ToLower(box.read("smi.args")), "uuid") {
				t.Error("a UUID was asked for")
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// A source without hostRoot (what tests build) reads neither memory nor
// programs: nothing more is asked of nvidia-smi than before.
func TestNoHostWithoutHostRoot(t *testing.T) {
	box := newFakeBox(t)
	box.procsSMI("00000000:01:00.0, 1, a, 1\n", "")
	src := smiSourceFor(t, "local")
	smp, err := src.Start(context.Background(), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, smp, 2)
	smp.Stop()
	box.assertNoSurvivors()
	tel := NewTelemetry(src, nil, smp, nil)
	if tel.GPUProcesses != nil || tel.HostMemory != nil || strings.Contains(box.read("smi.args"), "compute-apps") {
		t.Errorf("read without being asked: %+v %+v", tel.GPUProcesses, tel.HostMemory)
	}
}
