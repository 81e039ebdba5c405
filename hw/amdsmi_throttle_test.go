package hw

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/telemetry"
)

// amdSMIThrottleDoc turns the captured `amd-smi metric --throttle` text
// (amdsmi's CHANGELOG, ROCm 6.3.0: two MI300-class GPUs, nothing
// throttled) into what the same amd-smi prints under --json, by the CLI's
// own rules (amdsmi_cli/amdsmi_commands.py @ 0ceca28, metric_gpu's
// throttle section): a list of {"gpu": N, "throttle": {…}}, each key in
// lower case, an accumulator its number, a status its word ("ACTIVE",
// "NOT ACTIVE") and an activity "N %" {"value": N, "unit": "%"}; "N/A"
// stays the string. Each of changes ("GPU: 1/PPT_VIOLATION_STATUS" →
// "ACTIVE") sets one line of one GPU first: a stand-in value, as the
// captured cards were held down by nothing.
func amdSMIThrottleDoc(t *testing.T, changes map[string]string) string {
	t.Helper()
	type gpu struct {
		index    int
		throttle map[string]any
	}
	var gpus []*gpu
	used := map[string]bool{}
	for i, line := range strings.Split(capturedText(t, "amdsmi_metric_throttle_text_rocm6.3.0_changelog.txt"), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed == "..." || trimmed == "THROTTLE:" || strings.HasPrefix(trimmed, "$ "):
			continue
		case strings.HasPrefix(trimmed, "GPU: "):
			n, err := strconv.Atoi(strings.TrimPrefix(trimmed, "GPU: "))
			if err != nil {
				t.Fatalf("line %d: %q", i+1, line)
			}
			gpus = append(gpus, &gpu{index: n, throttle: map[string]any{}})
			continue
		}
		key, value, ok := strings.Cut(trimmed, ": ")
		if !ok || len(gpus) == 0 {
			t.Fatalf("line %d is not the captured shape: %q", i+1, line)
		}
		g := gpus[len(gpus)-1]
		change := fmt.Sprintf("GPU: %d/%s", g.index, key)
		if v, ok := changes[change]; ok {
			value, used[change] = v, true
		}
		name := strings.ToLower(key)
		switch {
		case value == "N/A" || strings.HasSuffix(name, "_status"):
			g.throttle[name] = value
		case strings.HasSuffix(name, "_activity"):
			n, err := strconv.Atoi(strings.TrimSuffix(value, " %"))
			if err != nil {
				t.Fatalf("line %d: %q", i+1, line)
			}
			g.throttle[name] = map[string]any{"value": n, "unit": "%"}
		default:
			n, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				t.Fatalf("line %d: %q", i+1, line)
			}
			g.throttle[name] = n
		}
	}
	for c := range changes {
		if !used[c] {
			t.Fatalf("%s is not in the captured text", c)
		}
	}
	list := make([]map[string]any, len(gpus))
	for i, g := range gpus {
		list[i] = map[string]any{"gpu": g.index, "throttle": g.throttle}
	}
	b, err := json.MarshalIndent(list, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// amdSMINAThrottle is one GPU whose throttle section is the captured one
// of a Radeon card under a recent amd-smi: every field "N/A".
func amdSMINAThrottle(t *testing.T) string {
	return `[{"gpu": 0,` + capturedText(t, "amdsmi_metric_json_throttle_section_na_2x_radeon_32gb.txt") + `}]`
}

func TestAMDSMIThrottleToClockEvents(t *testing.T) {
	t.Parallel()
	active := func(keys ...string) map[string]string {
		m := map[string]string{}
		for _, k := range keys {
			m[k] = "ACTIVE"
		}
		return m
	}
	tests := []struct {
		name string
		in   string
		want []Sample // GPU, Valid and ClockEvents compared
	}{
		{name: "captured, nothing active", in: amdSMIThrottleDoc(t, nil),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "PPT is the power cap", in: amdSMIThrottleDoc(t, active("GPU: 1/PPT_VIOLATION_STATUS")),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents}, {GPU: 1, Valid: FieldClockEvents, ClockEvents: 0x4}}},
		{name: "socket thermal is heat", in: amdSMIThrottleDoc(t, active("GPU: 0/SOCKET_THERMAL_VIOLATION_STATUS")),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents, ClockEvents: 0x20}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "HBM thermal is heat", in: amdSMIThrottleDoc(t, active("GPU: 0/HBM_THERMAL_VIOLATION_STATUS")),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents, ClockEvents: 0x20}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "VR thermal is heat at a hardware limit", in: amdSMIThrottleDoc(t, active("GPU: 0/VR_THERMAL_VIOLATION_STATUS")),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents, ClockEvents: 0x40}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "PROCHOT is a hardware slowdown", in: amdSMIThrottleDoc(t, active("GPU: 0/PROCHOT_VIOLATION_STATUS")),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents, ClockEvents: 0x8}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "all five at once", in: amdSMIThrottleDoc(t, active("GPU: 0/PPT_VIOLATION_STATUS", "GPU: 0/SOCKET_THERMAL_VIOLATION_STATUS",
			"GPU: 0/HBM_THERMAL_VIOLATION_STATUS", "GPU: 0/VR_THERMAL_VIOLATION_STATUS", "GPU: 0/PROCHOT_VIOLATION_STATUS")),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents, ClockEvents: 0x6c}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "an accumulator alone says nothing", in: amdSMIThrottleDoc(t, map[string]string{"GPU: 0/PPT_ACCUMULATED": "99999999", "GPU: 0/PPT_VIOLATION_ACTIVITY": "37 %"}),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "one reason N/A, the others known", in: amdSMIThrottleDoc(t, map[string]string{"GPU: 0/PROCHOT_VIOLATION_STATUS": "N/A", "GPU: 0/PPT_VIOLATION_STATUS": "ACTIVE"}),
			want: []Sample{{GPU: 0, Valid: FieldClockEvents, ClockEvents: 0x4}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "every status N/A: unknown, not none", in: amdSMIThrottleDoc(t, map[string]string{
			"GPU: 0/PROCHOT_VIOLATION_STATUS": "N/A", "GPU: 0/PPT_VIOLATION_STATUS": "N/A", "GPU: 0/SOCKET_THERMAL_VIOLATION_STATUS": "N/A",
			"GPU: 0/VR_THERMAL_VIOLATION_STATUS": "N/A", "GPU: 0/HBM_THERMAL_VIOLATION_STATUS": "N/A"}),
			want: []Sample{{GPU: 0}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "a word we do not know", in: amdSMIThrottleDoc(t, map[string]string{
			"GPU: 0/PROCHOT_VIOLATION_STATUS": "MAYBE", "GPU: 0/PPT_VIOLATION_STATUS": "MAYBE", "GPU: 0/SOCKET_THERMAL_VIOLATION_STATUS": "MAYBE",
			"GPU: 0/VR_THERMAL_VIOLATION_STATUS": "MAYBE", "GPU: 0/HBM_THERMAL_VIOLATION_STATUS": "MAYBE"}),
			want: []Sample{{GPU: 0}, {GPU: 1, Valid: FieldClockEvents}}},
		{name: "captured Radeon section, all N/A", in: amdSMINAThrottle(t), want: []Sample{{GPU: 0}}},
		{name: "section N/A", in: `[{"gpu": 0, "throttle": "N/A"}]`, want: []Sample{{GPU: 0}}},
		{name: "no section (ROCm 6.1 capture)", in: capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json"),
			want: []Sample{{GPU: 0, Valid: FieldPower}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := parseAMDSMI([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != len(tt.want) {
				t.Fatalf("got %d GPUs, want %d", len(list), len(tt.want))
			}
			for i, g := range list {
				got, want := g.sample(), tt.want[i]
				if got.GPU != want.GPU || got.Valid != want.Valid || got.ClockEvents != want.ClockEvents {
					t.Errorf("GPU %d: got valid %b reasons %#x, want valid %b reasons %#x", got.GPU, got.Valid, got.ClockEvents, want.Valid, want.ClockEvents)
				}
			}
		})
	}
}

// TestAMDSMIReasonsAreTheResultsOwn: every bit an AMD reason maps to is
// one the results name as throttling, so an AMD card's slowdown counts in
// its level's throttled share.
func TestAMDSMIReasonsAreTheResultsOwn(t *testing.T) {
	t.Parallel()
	want := map[string]string{"ppt": "sw_power_cap", "socket_thermal": "sw_thermal_slowdown", "hbm_thermal": "sw_thermal_slowdown",
		"vr_thermal": "hw_thermal_slowdown", "prochot": "hw_slowdown"}
	if len(amdViolations) != len(want) {
		t.Fatalf("%d reasons, want %d", len(amdViolations), len(want))
	}
	for _, v := range amdViolations {
		names := telemetry.ClockEventNames(v.bit)
		if len(names) != 1 || names[0] != want[v.name] {
			t.Errorf("%s maps to %v, want %s", v.name, names, want[v.name])
		}
		if v.bit&telemetry.SlowdownMask() == 0 {
			t.Errorf("%s's bit %#x is not a slowdown", v.name, v.bit)
		}
	}
}

// amdSMIRefusal is the captured refusal of an argument amd-smi does not
// have (ROCm 6.4.1, ROCm/amdsmi#91), naming --throttle instead: what
// amd-smi before ROCm 6.3, or on a virtual machine's guest, answers.
func amdSMIRefusal(t *testing.T) string {
	t.Helper()
	line, _, _ := strings.Cut(capturedText(t, "amdsmi_invalid_parameter_rocm6.4.1_amdsmi91.txt"), "\n")
	return replaceJSON(t, line, `'--compute-partition cpx'`, `'--throttle'`)
}

// amdSMIRefusalJSON is the same refusal under --json, as amd-smi's
// exception builds it (amdsmi_cli_exceptions.py @ rocm-6.2.2:
// json.dumps({"error": message, "code": -2}), the message being the words
// before " Error code: -2", in Python's spacing).
func amdSMIRefusalJSON(t *testing.T) string {
	t.Helper()
	msg, code, ok := strings.Cut(amdSMIRefusal(t), " Error code: ")
	if !ok {
		t.Fatal("the captured refusal has no error code")
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		t.Fatal(err)
	}
	quoted, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`{"error": %s, "code": %d}`, quoted, n)
}

func TestThrottleRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		out  string
		err  error
		want bool
	}{
		{name: "ROCm 6.1/6.2: the refusal as JSON, exit 0", out: amdSMIRefusalJSON(t), want: true},
		{name: "a later release: the refusal, exit 2", err: &runError{msg: "amd-smi on this machine exited with code 2 (" + amdSMIRefusal(t) + ")", code: 2}, want: true},
		{name: "argparse's own exit 2, its usage line first", err: &runError{msg: "amd-smi on this machine exited with code 2 (usage: amd-smi [-h] ...)", code: 2}, want: true},
		{name: "another code naming the argument", err: &runError{msg: "amd-smi on lab-box exited with code 1 (unrecognized arguments: --throttle)", code: 1}, want: true},
		{name: "the captured JSON list", out: capturedText(t, "amdsmi_metric_power_json_rocm6.1.0_changelog.json")},
		{name: "the newer wrapper", out: amdSMIWrapped(t)},
		{name: "another JSON error", out: `{"error": "no devices"}`},
		{name: "amd-smi fails otherwise", err: &runError{msg: "amd-smi on this machine exited with code 3 (AMDSMI not initialized: is the amdgpu driver loaded?)", code: 3}},
		{name: "ssh refused", err: &runError{msg: "ssh could not connect to lab-box (Permission denied (publickey).)", code: 255}},
		{name: "not installed there", err: &runError{msg: "amd-smi is not installed on lab-box (or not on the PATH that ssh commands get there)", code: 127}},
		{name: "too slow", err: &runError{msg: "amd-smi on this machine did not answer within 10 s"}},
		{name: "not a runError", err: errors.New("throttle")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := throttleRefused([]byte(tt.out), tt.err); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
