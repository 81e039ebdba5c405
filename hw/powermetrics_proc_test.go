//go:build unix

package hw

import (
	"context"
	"strings"
	"testing"
	"time"
)

// powermetrics installs a stand-in sudo that runs a stand-in powermetrics:
// the captured plist and a NUL once for -n 1, every 50 ms otherwise, as
// powermetrics -f plist writes its samples. Its arguments are kept.
func (b *fakeBox) powermetrics(doc string) {
	b.write("pm.plist", doc, 0o644)
	b.script("sudo", `echo "$*" >> "$DIR/sudo.args"
case "$*" in
"-n powermetrics "*"-n 1") /bin/cat "$DIR/pm.plist"; printf '\000' ;;
"-n powermetrics "*) while :; do /bin/cat "$DIR/pm.plist"; printf '\000'; nap 0.05; done ;;
*) echo "unexpected arguments: $*" >&2; exit 2 ;;
esac`)
}

func powermetricsFor(t *testing.T, spec string) *powermetricsSource {
	t.Helper()
	src, err := ParseSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := src.(*powermetricsSource)
	if !ok {
		t.Fatalf("%s gave a %T", spec, src)
	}
	p.runTimeout, p.startGrace = 2*time.Second, 100*time.Millisecond
	return p
}

func TestPowermetricsThroughSudo(t *testing.T) {
	box := newFakeBox(t)
	box.link("sh", "cat", "sleep")
	box.powermetrics(capturedText(t, pmCapture))
	src := powermetricsFor(t, "local?tool=powermetrics")
	if Tool(src) != "powermetrics" || src.String() != "powermetrics on this machine" {
		t.Errorf("Tool %q, String %q", Tool(src), src.String())
	}
	inv, err := src.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inv) != 1 || inv[0].Name != "Apple Silicon (Mac16,5) GPU (unified memory)" {
		t.Errorf("inventory %+v", inv)
	}
	smp, err := src.Start(context.Background(), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, smp, 3)
	smp.Stop()
	box.assertNoSurvivors()
	if w := smp.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
	want := Sample{Valid: FieldPower | FieldGPUPower | FieldCPUPower | FieldANEPower | FieldUtil | FieldSMClock | FieldClockEvents,
		PowerW: 3.24807, GPUPowerW: 0.269614, CPUPowerW: 2.97845, UtilPct: 12.2657, SMClockMHz: 338}
	for _, s := range smp.Samples()[:3] {
		s.T = 0
		if !sameSample(s, want) || s.ClockEvents != 0 {
			t.Errorf("got  %+v\nwant %+v", s, want)
		}
	}
	args := box.read("sudo.args")
	for _, want := range []string{
		"-n powermetrics --samplers cpu_power,gpu_power,ane_power,thermal -f plist -i 200 -b 1 -n 1\n",
		"-n powermetrics --samplers cpu_power,gpu_power,ane_power,thermal -f plist -i 100 -b 1\n",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("sudo was not run with %q:\n%s", want, args)
		}
	}
}

// The search never runs powermetrics (nor sudo): a Mac with only it has
// no GPU tool until the person chooses it.
func TestPowermetricsNeverFound(t *testing.T) {
	box := newFakeBox(t)
	box.link("sh", "cat", "sleep")
	box.powermetrics(capturedText(t, pmCapture))
	box.script("powermetrics", `echo ran >> "$DIR/ran"`)
	src := autoFor(t, "local", t.TempDir())
	if _, err := src.Inventory(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "no GPU power source on this machine") {
		t.Errorf("Inventory: %v", err)
	}
	if box.read("sudo.args") != "" || box.read("ran") != "" {
		t.Errorf("the search ran sudo or powermetrics")
	}
}

func TestPowermetricsFailsInWords(t *testing.T) {
	hint := "; powermetrics needs root: let this user run it without a password (a sudoers line such as `me ALL=(root) NOPASSWD: /usr/bin/powermetrics`), or choose macmon, which needs none"
	tests := []struct {
		name      string
		source    string
		sudo      string
		inventory string
		start     string
	}{
		{name: "sudo wants a password", source: "local?tool=powermetrics",
			sudo:      `echo "sudo: a password is required" >&2; exit 1`,
			inventory: "powermetrics (through sudo) on this machine exited with code 1 (sudo: a password is required)" + hint,
			start:     "GPU telemetry stopped: powermetrics on this machine exited with code 1 (sudo: a password is required)" + hint},
		{name: "powermetrics run without root", source: "local?tool=powermetrics",
			sudo:      `echo "powermetrics must be invoked as the superuser" >&2; exit 1`,
			inventory: "powermetrics (through sudo) on this machine exited with code 1 (powermetrics must be invoked as the superuser)" + hint,
			start:     "GPU telemetry stopped: powermetrics on this machine exited with code 1 (powermetrics must be invoked as the superuser)" + hint},
		{name: "a sampler this macOS does not have", source: "local?tool=powermetrics",
			sudo:      `echo "powermetrics: unrecognized sampler: ane_power" >&2; exit 1`,
			inventory: "powermetrics (through sudo) on this machine exited with code 1 (powermetrics: unrecognized sampler: ane_power)",
			start:     "GPU telemetry stopped: powermetrics on this machine exited with code 1 (powermetrics: unrecognized sampler: ane_power)"},
		{name: "text instead of plists", source: "local?tool=powermetrics",
			sudo:      `while :; do echo "*** Sampled system activity (Wed Nov 29 10:00:00 2023 +0100) (1004.31ms elapsed) ***"; nap 0.01; done`,
			inventory: "powermetrics (through sudo) on this machine did not answer within 0.3 s",
			start:     `GPU telemetry stopped: powermetrics on this machine printed lines we could not read, such as "*** Sampled system activity (Wed Nov 29 10:00:00 2023 +0100) (1004.31ms elapsed) ***"`},
		{name: "plists cut short", source: "local?tool=powermetrics",
			sudo:      `while :; do /bin/cat "$DIR/half.plist"; printf '\000'; nap 0.01; done`,
			inventory: "powermetrics (through sudo) on this machine did not answer within 0.3 s",
			start:     `GPU telemetry stopped: powermetrics on this machine printed lines we could not read, such as "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"`},
		{name: "through ssh, sudo not there", source: "ssh://alice@mac-mini?tool=powermetrics",
			sudo:      "",
			inventory: "sudo is not installed on mac-mini (or not on the PATH that ssh commands get there)",
			start:     "GPU telemetry stopped: powermetrics is not installed on mac-mini (or not on the PATH that ssh commands get there)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			box.link("sh", "cat", "sleep")
			box.ssh()
			doc := capturedText(t, pmCapture)
			box.write("half.plist", doc[:len(doc)/2], 0o644)
			if tt.sudo != "" {
				box.script("sudo", tt.sudo)
			}
			src := powermetricsFor(t, tt.source)
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
