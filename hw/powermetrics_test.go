package hw

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// pmCapture is the captured powermetrics sample (an M4 Max MacBook Pro,
// Mac16,5; see SOURCES.md): processor.cpu_power 2978.45, gpu_power
// 269.614, ane_power 0, combined_power 3248.07 mW; cpu_energy 3049,
// gpu_energy 276, ane_energy 0 mJ over elapsed_ns 1023685416; gpu.freq_hz
// 338 (MHz), gpu.idle_ratio 0.877343; thermal_pressure Nominal.
const pmCapture = "powermetrics_plist_mac16-5_25C56_pause-monitor.plist"

// pmEdit is the capture with each old → new replaced once, failing the test
// when old is not there (so an edit cannot silently do nothing).
func pmEdit(t *testing.T, doc string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.Count(doc, pairs[i]) != 1 {
			t.Fatalf("%q is in the capture %d times, not once", pairs[i], strings.Count(doc, pairs[i]))
		}
		doc = strings.Replace(doc, pairs[i], pairs[i+1], 1)
	}
	return doc
}

func TestPowermetricsPlist(t *testing.T) {
	t.Parallel()
	doc := capturedText(t, pmCapture)
	const secs = 1023685416 / 1e9
	all := FieldPower | FieldGPUPower | FieldCPUPower | FieldANEPower | FieldUtil | FieldSMClock | FieldClockEvents
	captured := Sample{Valid: all, PowerW: 3.24807, GPUPowerW: 0.269614, CPUPowerW: 2.97845, ANEPowerW: 0,
		UtilPct: 12.2657, SMClockMHz: 338}
	// The power keys are the line after each key in the capture.
	noPower := []string{
		"<key>cpu_power</key>\n<real>2978.45</real>\n", "",
		"<key>gpu_power</key>\n<real>269.614</real>\n", "",
		"<key>ane_power</key>\n<real>0</real>\n", "",
		"<key>combined_power</key>\n<real>3248.07</real>\n", "",
	}
	noEnergy := []string{
		"<key>cpu_energy</key>\n<integer>3049</integer>\n", "",
		"<key>gpu_energy</key>\n<integer>276</integer>\n", "",
		"<key>ane_energy</key>\n<integer>0</integer>\n", "",
		"<key>gpu_energy</key><integer>284</integer>\n", "",
	}
	tests := []struct {
		name   string
		doc    string
		want   Sample
		events uint64
		model  string
		err    string
	}{
		{name: "the capture", doc: doc, want: captured, model: "Apple Silicon (Mac16,5) GPU (unified memory)"},
		{name: "Moderate pressure is a thermal slowdown", doc: pmEdit(t, doc, "<string>Nominal</string>", "<string>Moderate</string>"),
			want: captured, events: 0x20},
		{name: "Heavy", doc: pmEdit(t, doc, "<string>Nominal</string>", "<string>Heavy</string>"), want: captured, events: 0x20},
		{name: "Trapping", doc: pmEdit(t, doc, "<string>Nominal</string>", "<string>Trapping</string>"), want: captured, events: 0x20},
		{name: "Sleeping", doc: pmEdit(t, doc, "<string>Nominal</string>", "<string>Sleeping</string>"), want: captured, events: 0x20},
		{name: "a pressure word we do not know: no reasons", doc: pmEdit(t, doc, "<string>Nominal</string>", "<string>Toasty</string>"),
			want: func() Sample { s := captured; s.Valid &^= FieldClockEvents; return s }()},
		{name: "no thermal sampler: no reasons", doc: pmEdit(t, doc, "<key>thermal_pressure</key><string>Nominal</string>\n", ""),
			want: func() Sample { s := captured; s.Valid &^= FieldClockEvents; return s }()},
		{name: "no combined_power (newer macOS): the three summed", doc: pmEdit(t, doc, "<key>combined_power</key>\n<real>3248.07</real>\n", ""),
			want: func() Sample { s := captured; s.PowerW = 2.97845 + 0.269614; return s }()},
		{name: "power keys absent: energy (mJ) over elapsed_ns", doc: pmEdit(t, doc, noPower...),
			want: Sample{Valid: all, PowerW: (3049 + 276 + 0) / secs / 1000, CPUPowerW: 3049 / secs / 1000,
				GPUPowerW: 276 / secs / 1000, UtilPct: 12.2657, SMClockMHz: 338}},
		{name: "N/A where the GPU's power is: its energy", doc: pmEdit(t, doc, "<real>269.614</real>", "<string>N/A</string>"),
			want: func() Sample { s := captured; s.GPUPowerW = 276 / secs / 1000; return s }()},
		{name: "no power and no energy: missing, never 0", doc: pmEdit(t, doc, append(slices2(noPower), noEnergy...)...),
			want: Sample{Valid: FieldUtil | FieldSMClock | FieldClockEvents, UtilPct: 12.2657, SMClockMHz: 338}},
		{name: "energy without elapsed_ns: missing", doc: pmEdit(t, doc, append(slices2(noPower), "<key>elapsed_ns</key><integer>1023685416</integer>\n", "")...),
			want: Sample{Valid: FieldUtil | FieldSMClock | FieldClockEvents, UtilPct: 12.2657, SMClockMHz: 338}},
		{name: "no gpu dict (no gpu_power sampler)", doc: doc[:strings.Index(doc, "<key>gpu</key>\n<dict>")] + "</dict>\n</plist>\n",
			want: func() Sample {
				s := captured
				s.Valid &^= FieldUtil | FieldSMClock
				s.UtilPct, s.SMClockMHz = 0, 0
				return s
			}()},
		{name: "a negative power is missing", doc: pmEdit(t, doc, "<real>2978.45</real>", "<real>-1</real>"),
			want: func() Sample { s := captured; s.CPUPowerW = 3049 / secs / 1000; return s }()},
		{name: "cut in the middle", doc: doc[:len(doc)/2], err: "a plist cut short"},
		{name: "cut before its last tag", doc: strings.TrimSuffix(strings.TrimSpace(doc), "</plist>"), err: "a plist cut short"},
		{name: "text output, not a plist", doc: "*** Sampled system activity (Wed Nov 29 10:00:00 2023 +0100) (1004.31ms elapsed) ***\n", err: "no <plist> element"},
		{name: "powermetrics refusing to run", doc: "powermetrics must be invoked as the superuser\n", err: "no <plist> element"},
		{name: "another plist", doc: `<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>hello</key><integer>1</integer></dict></plist>`,
			err: "a plist without powermetrics' readings"},
		{name: "a key without its value", doc: `<plist version="1.0"><dict><key>processor</key></dict></plist>`, err: `the key "processor" has no value`},
		{name: "a number that is not", doc: `<plist version="1.0"><dict><key>elapsed_ns</key><integer>soon</integer></dict></plist>`,
			err: "<integer>soon</integer> is not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parsePowermetricsPlist([]byte(tt.doc))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := r.sample()
			if !sameSample(got, tt.want) || got.ClockEvents != tt.events {
				t.Errorf("got  %+v\nwant %+v (clock events %#x)", got, tt.want, tt.events)
			}
			if tt.model != "" {
				if g := r.gpu(); g.Name != tt.model || g.MemoryTotalMiB != nil {
					t.Errorf("inventory %+v", g)
				}
			}
		})
	}
}

func slices2(s []string) []string { return append([]string(nil), s...) }

func TestThermalPressureIsSWThermalSlowdown(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"Light", "Moderate", "Heavy", "Trapping", "Sleeping", " heavy "} {
		m, ok := thermalPressureMask(level)
		if !ok || !reflect.DeepEqual(telemetry.ClockEventNames(m), []string{"sw_thermal_slowdown"}) || m&telemetry.SlowdownMask() == 0 {
			t.Errorf("%q: mask %#x ok %v names %v", level, m, ok, telemetry.ClockEventNames(m))
		}
	}
	if m, ok := thermalPressureMask("Nominal"); !ok || m != 0 {
		t.Errorf("Nominal: %#x %v", m, ok)
	}
	for _, level := range []string{"", "N/A", "Fair"} {
		if _, ok := thermalPressureMask(level); ok {
			t.Errorf("%q read as a level", level)
		}
	}
}

// A Mac under Heavy pressure for half a level is throttled for half of it,
// by heat, in the same figures as an NVIDIA card's.
func TestPowermetricsThrottleFigures(t *testing.T) {
	t.Parallel()
	doc := capturedText(t, pmCapture)
	var samples []Sample
	for i, level := range []string{"Nominal", "Heavy", "Heavy", "Nominal", "Nominal"} {
		r, err := parsePowermetricsPlist([]byte(strings.Replace(doc, "<string>Nominal</string>", "<string>"+level+"</string>", 1)))
		if err != nil {
			t.Fatal(err)
		}
		s := r.sample()
		s.T = time.Duration(i) * time.Second
		samples = append(samples, s)
	}
	le := telemetry.LevelEnergy{GPUs: []telemetry.GPUEnergy{{Index: 0}}}
	clockEvents(&le, samples, nil, 0, 4*time.Second, 2*time.Second)
	if le.ThrottledShare == nil || *le.ThrottledShare != 0.5 || le.ClockEventS["sw_thermal_slowdown"] != 2 {
		t.Errorf("throttled share %v, reasons %v", le.ThrottledShare, le.ClockEventS)
	}
}

func TestPowermetricsStream(t *testing.T) {
	t.Parallel()
	doc := strings.TrimRight(capturedText(t, pmCapture), "\n")
	lines := func(s string) []string { return strings.Split(s, "\n") }
	heavy := strings.Replace(doc, "<string>Nominal</string>", "<string>Heavy</string>", 1)
	tests := []struct {
		name   string
		lines  []string
		events []uint64 // one a sample read
		errs   []string
	}{
		{name: "NUL after each document, as powermetrics writes them",
			lines:  lines(doc + "\n\x00" + heavy + "\n\x00"),
			events: []uint64{0, 0x20}},
		{name: "NUL right after </plist>",
			lines:  lines(doc + "\x00\n" + heavy + "\x00\n"),
			events: []uint64{0, 0x20}},
		{name: "NUL and the next document on one line",
			lines:  lines(doc + "\x00" + heavy + "\x00"),
			events: []uint64{0, 0x20}},
		{name: "a document cut short, then a whole one",
			lines:  lines(doc[:len(doc)/3] + "\n\x00" + heavy + "\n\x00"),
			events: []uint64{0x20}, errs: []string{"a plist cut short"}},
		{name: "text output, not plists",
			lines: []string{"*** Sampled system activity (Wed Nov 29 10:00:00 2023 +0100) (1004.31ms elapsed) ***", "", "CPU Power: 2978 mW"},
			errs:  []string{"not a line of powermetrics' plist output", "not a line of powermetrics' plist output"}},
		{name: "garbage in a document",
			lines:  lines(strings.Replace(doc, "<real>338</real>", "<real>338</rea>", 1) + "\n\x00" + doc),
			events: []uint64{0}, errs: []string{"not a readable plist"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &plistStream{maxDoc: powermetricsMaxDoc}
			var events []uint64
			var errs []string
			for _, l := range tt.lines {
				got, err := p.line(l)
				if err != nil {
					errs = append(errs, err.Error())
				}
				for _, s := range got {
					events = append(events, s.ClockEvents)
					if !s.Has(FieldPower) || !close6(s.PowerW, 3.24807) {
						t.Errorf("sample %+v", s)
					}
				}
			}
			if !reflect.DeepEqual(events, tt.events) {
				t.Errorf("clock events %v, want %v", events, tt.events)
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("errors %q, want %q", errs, tt.errs)
			}
			for i := range errs {
				if !strings.HasPrefix(errs[i], tt.errs[i]) {
					t.Errorf("error %q, want %q…", errs[i], tt.errs[i])
				}
			}
		})
	}
	// A longer document than the limit is not one of ours.
	p := &plistStream{maxDoc: 1 << 20}
	var err error
	for _, l := range lines(doc) {
		if _, err = p.line(l + strings.Repeat(" ", 20<<10)); err != nil {
			break
		}
	}
	if err == nil || err.Error() != "a sample longer than 1 MiB" {
		t.Errorf("long document: %v", err)
	}
}

func TestPowermetricsArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		interval time.Duration
		count    int
		want     string
	}{
		{time.Second, 0, "-n powermetrics --samplers cpu_power,gpu_power,ane_power,thermal -f plist -i 1000 -b 1"},
		{20 * time.Millisecond, 1, "-n powermetrics --samplers cpu_power,gpu_power,ane_power,thermal -f plist -i 100 -b 1 -n 1"},
	}
	for _, tt := range tests {
		if got := strings.Join(powermetricsArgs(tt.interval, tt.count), " "); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
