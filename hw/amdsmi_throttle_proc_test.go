//go:build unix

package hw

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/telemetry"
)

// amdSMIThrottle installs a stand-in amd-smi for `metric … --json`. Asked
// with --throttle it answers as refuse says: "" takes it and prints the
// next of docs (an amd-smi of ROCm 6.3 or later on bare metal; after the
// last it keeps printing the last, so a test can have the cards change
// between passes), "json" prints the refusal of ROCm 6.1 and 6.2 under
// --json and exits 0, "exit" a later release's refusal in words and exits
// 2. Asked without, it prints plain.
func (b *fakeBox) amdSMIThrottle(t *testing.T, refuse, plain string, docs ...string) {
	b.write("amdsmi.plain.json", plain, 0o644)
	for i, d := range docs {
		b.write(fmt.Sprintf("amdsmi.%d.json", i), d, 0o644)
	}
	if len(docs) > 0 {
		b.write("amdsmi.last.json", docs[len(docs)-1], 0o644)
	}
	var refusal string
	switch refuse {
	case "json":
		b.write("amdsmi.refusal", amdSMIRefusalJSON(t)+"\n", 0o644)
		refusal = `/bin/cat "$DIR/amdsmi.refusal"; exit 0`
	case "exit":
		b.write("amdsmi.refusal", amdSMIRefusal(t)+"\n", 0o644)
		refusal = `/bin/cat "$DIR/amdsmi.refusal"; exit 2`
	default:
		refusal = `n=$(/bin/cat "$DIR/amdsmi.n" 2>/dev/null || echo 0); echo $((n+1)) > "$DIR/amdsmi.n"
  f="$DIR/amdsmi.$n.json"; [ -f "$f" ] || f="$DIR/amdsmi.last.json"; /bin/cat "$f"`
	}
	b.script("amd-smi", `echo "$*" >> "$DIR/amdsmi.args"
case "$*" in
metric*--throttle*--json*) `+refusal+` ;;
metric*--json*) /bin/cat "$DIR/amdsmi.plain.json" ;;
*) echo "unexpected arguments: $*" >&2; exit 64 ;;
esac`)
}

// amdSMIFor is the amd-smi source ParseSource gives for spec, with its
// limits shortened.
func amdSMIFor(t *testing.T, spec string) *amdSMISource {
	t.Helper()
	src, err := ParseSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := src.(*amdSMISource)
	if !ok {
		t.Fatalf("%s gave a %T", spec, src)
	}
	a.runTimeout, a.startGrace = 5*time.Second, 100*time.Millisecond
	return a
}

// TestAMDSMIThrottleFallback: an amd-smi that takes --throttle is sampled
// with it and its cards carry clock event reasons; one that refuses it
// (before ROCm 6.3, or on a virtual machine's guest) is asked once more
// without, and sampled so — its readings, no reasons, no warning.
func TestAMDSMIThrottleFallback(t *testing.T) {
	plain := capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json")
	tests := []struct {
		name          string
		refuse        string
		route         string
		skipInventory bool
		throttle      bool // the loop asks with --throttle
	}{
		{name: "takes it", route: "local", throttle: true},
		{name: "takes it, through ssh", route: "ssh://alice@lab-box", throttle: true},
		{name: "ROCm 6.1/6.2 refuses in JSON and exits 0", refuse: "json", route: "local"},
		{name: "a later release refuses and exits 2", refuse: "exit", route: "ssh://alice@lab-box"},
		{name: "refused, started without an inventory", refuse: "json", route: "local", skipInventory: true},
		{name: "taken, started without an inventory", route: "local", skipInventory: true, throttle: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			box.link("sh", "cat", "sleep")
			box.ssh()
			box.amdSMIThrottle(t, tt.refuse, plain, amdSMIThrottleDoc(t, map[string]string{"GPU: 0/PPT_VIOLATION_STATUS": "ACTIVE"}))
			src := amdSMIFor(t, tt.route+"?tool=amd-smi")
			if !tt.skipInventory {
				inv, err := src.Inventory(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if len(inv) == 0 || inv[0].Index != 0 {
					t.Fatalf("inventory %+v", inv)
				}
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
			args := strings.Split(strings.TrimSpace(box.read("amdsmi.args")), "\n")
			last := args[len(args)-1]
			if strings.Contains(last, "--throttle") != tt.throttle || !strings.HasSuffix(last, "--mem-usage --json") && !strings.HasSuffix(last, "--throttle --json") {
				t.Errorf("sampled with %q", last)
			}
			if asked := strings.Count(box.read("amdsmi.args"), "--throttle"); !tt.throttle && asked != 1 {
				t.Errorf("asked with --throttle %d times, want once", asked)
			}
			s := smp.Samples()[0]
			switch {
			case tt.throttle && (!s.Has(FieldClockEvents) || s.ClockEvents != 0x4):
				t.Errorf("sample %+v, want the power cap", s)
			case !tt.throttle && (s.Has(FieldClockEvents) || !s.Has(FieldPower) || s.PowerW != 10):
				t.Errorf("sample %+v, want the captured power and no reasons", s)
			}
		})
	}
}

// TestAMDSMIThrottledLevel runs a stand-in amd-smi whose GPU 1 hits its
// power cap (PPT) from the fourth pass on through the sampler and
// NewTelemetry: the level has the power cap's seconds for GPU 1 alone and
// a throttled share, and its finding names GPU 1's power cap.
func TestAMDSMIThrottledLevel(t *testing.T) {
	box := newFakeBox(t)
	box.link("sh", "cat", "sleep")
	calm := amdSMIThrottleDoc(t, nil)
	capped := amdSMIThrottleDoc(t, map[string]string{"GPU: 1/PPT_VIOLATION_STATUS": "ACTIVE"})
	// The inventory's pass, then three calm passes, then capped ones.
	box.amdSMIThrottle(t, "", "", calm, calm, calm, calm, capped)
	src := amdSMIFor(t, "local?tool=amd-smi")
	inv, err := src.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	smp, err := src.Start(context.Background(), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, smp, 20) // 10 passes of two GPUs
	end := time.Now()
	smp.Stop()
	box.assertNoSurvivors()
	tel := NewTelemetry(src, inv, smp, []LevelWindow{{Concurrency: 2, Start: start, End: end}})
	lv := tel.Levels[2]
	var g0, g1 *telemetry.GPUEnergy
	for i := range lv.GPUs {
		switch lv.GPUs[i].Index {
		case 0:
			g0 = &lv.GPUs[i]
		case 1:
			g1 = &lv.GPUs[i]
		}
	}
	if g0 == nil || g1 == nil {
		t.Fatalf("level GPUs %+v", lv.GPUs)
	}
	if g0.ThrottledShare == nil || *g0.ThrottledShare != 0 || len(g0.ClockEventS) != 0 {
		t.Errorf("GPU 0: share %s, reasons %v; want none throttled", fmtPtr(g0.ThrottledShare), g0.ClockEventS)
	}
	if g1.ThrottledShare == nil || *g1.ThrottledShare < 0.2 || *g1.ThrottledShare > 0.95 || g1.ClockEventS["sw_power_cap"] <= 0 {
		t.Errorf("GPU 1: share %s, reasons %v; want its power cap after the third pass", fmtPtr(g1.ThrottledShare), g1.ClockEventS)
	}
	f := results.HardwareFindings(&tel, 2)
	if len(f) != 1 || f[0].GPU != 1 || f[0].Reason != "sw_power_cap" || f[0].Severity != results.SeverityProblem {
		t.Errorf("findings %+v", f)
	}
}
