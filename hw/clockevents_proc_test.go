//go:build unix

package hw

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/hw/hwtest"
)

// TestClockEventFieldFallback: a driver that refuses a field refuses the
// whole query ("Field … is not a valid field to query.", exit 2, on
// stdout as nvidia-smi prints it); the sampler then asks under the old
// name, then without the reasons, and still samples.
func TestClockEventFieldFallback(t *testing.T) {
	refuse := func(field string) string {
		return `*` + field + `*) echo 'Field "` + field + `" is not a valid field to query.'; echo; exit 2 ;;
`
	}
	tests := []struct {
		name    string
		refused []string
		probe   string // what the probe answers
		stream  string // one tick's line
		query   string // the -lms query's last field
		mask    bool   // samples carry FieldClockEvents
		maxMHz  string
	}{
		{name: "current driver", probe: "0, 2100, 0x0000000000000001", stream: "0, 300.00, 99, 20000, 1800, 70, 4, 16, 0x0000000000000004",
			query: fieldClockEvents, mask: true, maxMHz: "2100"},
		{name: "before R535", refused: []string{fieldClockEvents}, probe: "0, 1530, 0x0000000000000001", stream: "0, 300.00, 99, 20000, 1380, 70, 3, 16, 0x0000000000000004",
			query: fieldClockThrottle, mask: true, maxMHz: "1530"},
		{name: "neither name", refused: []string{fieldClockEvents, fieldClockThrottle}, probe: "0, 1530", stream: "0, 300.00, 99, 20000, 1380, 70, 3, 16",
			query: "pcie.link.width.current", maxMHz: "1530"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			box := newFakeBox(t)
			box.write("inventory.csv", readFixture(t, "smi_inventory_rtx4090.csv"), 0o644)
			var cases string
			for _, f := range tt.refused {
				cases += refuse(f)
			}
			box.script("nvidia-smi", `echo "$*" >> "$DIR/smi.args"
case "$*" in
`+cases+`*-lms*) while :; do echo "`+tt.stream+`"; nap 0.05; done ;;
*clocks.max.sm*) echo "`+tt.probe+`" ;;
*) /bin/cat "$DIR/inventory.csv" ;;
esac`)
			src := smiSourceFor(t, "local")
			inv, err := src.Inventory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := fmtPtr(inv[0].SMClockMaxMHz); !strings.HasPrefix(got, tt.maxMHz+".") {
				t.Errorf("SM clock maximum %s, want %s", got, tt.maxMHz)
			}
			smp, err := src.Start(context.Background(), 50*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			waitForSamples(t, smp, 3)
			smp.Stop()
			box.assertNoSurvivors()
			if w := smp.Warnings(); len(w) > 0 {
				t.Errorf("warnings %q", w)
			}
			var lms string
			for _, l := range strings.Split(box.read("smi.args"), "\n") {
				if strings.Contains(l, "-lms") {
					lms = l
				}
			}
			if !strings.Contains(lms, ","+tt.query+" --format=csv,noheader,nounits -lms 50") {
				t.Errorf("sampled with %q, want the query to end in %s", lms, tt.query)
			}
			s := smp.Samples()[0]
			if s.Has(FieldClockEvents) != tt.mask || tt.mask && s.ClockEvents != 0x4 {
				t.Errorf("sample %+v", s)
			}
		})
	}
}

// TestStandInThrottlesAfter runs hwtest's stand-in, whose power cap comes
// on after 0.6 s, through the sampler and NewTelemetry: the level over the
// whole run is throttled for the share of ticks after the change, and
// judged a problem.
func TestStandInThrottlesAfter(t *testing.T) {
	hwtest.StandInSMIThrottled(t, 300, 600*time.Millisecond, 0x4)
	src, err := ParseSource("local")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := src.Inventory(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	smp, err := src.Start(context.Background(), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, smp, 16) // 8 ticks of two GPUs
	end := time.Now()
	smp.Stop()
	tel := NewTelemetry(src, inv, smp, []LevelWindow{{Concurrency: 4, Start: start, End: end}})
	lv := tel.Levels[4]
	if lv.ThrottledShare == nil || *lv.ThrottledShare < 0.3 || *lv.ThrottledShare > 0.85 {
		t.Fatalf("throttled share %s, want the part after 0.6 s of a %s window", fmtPtr(lv.ThrottledShare), end.Sub(start))
	}
	if lv.ClockEventS["sw_power_cap"] <= 0 || lv.SMClockShare == nil || *lv.SMClockShare < 0.857 || *lv.SMClockShare > 0.858 {
		t.Errorf("level %+v", lv.LevelEnergy)
	}
	f := results.HardwareFindings(&tel, 4)
	// Both cards capped alike: said once.
	if len(f) != 1 || f[0].Severity != results.SeverityProblem || f[0].Reason != "sw_power_cap" || !strings.HasPrefix(f[0].Text, "GPUs 0 and 1 slowed themselves for their power cap for ") {
		t.Errorf("findings %+v", f)
	}
}

// TestStandInPrograms runs hwtest's stand-ins through a source ParseSource
// gives: their server alone on each card says nothing; another program
// on GPU 0 is the run's finding, a problem above a tenth of the card.
func TestStandInPrograms(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T)
		want  string
	}{
		{"the server alone", func(t *testing.T) { hwtest.StandInSMI(t, 300) }, "[]"},
		{"another model", func(t *testing.T) { hwtest.StandInSMIOtherProgram(t, 300, "python3", 6200) },
			"[problem: another program holds 6.1 GiB of GPU 0's 24.0 GiB beside the largest, presumably the server (llama-server, 19.5 GiB): python3 6.1 GiB — memory the server could not have, and work that may have shared the card: stop them for a measurement of the server alone]"},
		{"a desktop", func(t *testing.T) { hwtest.StandInSMIOtherProgram(t, 300, "Xorg", 300) },
			"[note: another program holds 300 MiB of GPU 0's 24.0 GiB beside the largest, presumably the server (llama-server, 19.5 GiB): Xorg 300 MiB, too little to move the figures much]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup(t)
			src, err := ParseSource("local")
			if err != nil {
				t.Fatal(err)
			}
			inv, err := src.Inventory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			smp, err := src.Start(context.Background(), 200*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			waitForSamples(t, smp, 4)
			smp.Stop()
			tel := NewTelemetry(src, inv, smp, nil)
			if tel.GPUProcesses == nil || len(tel.GPUProcesses.Start) == 0 || len(tel.GPUProcesses.End) == 0 {
				t.Fatalf("programs %+v", tel.GPUProcesses)
			}
			got := []string{}
			for _, f := range results.RunFindings(&tel) {
				got = append(got, string(f.Severity)+": "+f.Text)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}
