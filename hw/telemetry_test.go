package hw

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/telemetry"
)

func TestSamplerTicksAndLatest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		gpus      []int
		lines     []string
		wantGPUs  []int // GPU of each kept sample
		wantTicks int
		power     float64 // Latest total
		util      float64
	}{
		{
			name:     "two GPUs, two loops",
			lines:    []string{"0, 100, 50, 1000, 1500, 40, 4, 16", "1, 200, 70, 2000, 1500, 45, 4, 16", "0, 110, 60, 1000, 1500, 41, 4, 16", "1, 210, 80, 2000, 1500, 46, 4, 16"},
			wantGPUs: []int{0, 1, 0, 1}, wantTicks: 2, power: 320, util: 70,
		},
		{
			name:     "subset keeps GPU 1 only",
			gpus:     []int{1},
			lines:    []string{"0, 100, 50, 1000, 1500, 40, 4, 16", "1, 200, 70, 2000, 1500, 45, 4, 16", "0, 110, 60, 1000, 1500, 41, 4, 16", "1, 210, 80, 2000, 1500, 46, 4, 16"},
			wantGPUs: []int{1, 1}, wantTicks: 2, power: 210, util: 80,
		},
		{
			name:     "blank lines ignored",
			lines:    []string{"", "0, 100, 50, 1000, 1500, 40, 4, 16", "  ", "0, 90, 40, 1000, 1500, 40, 4, 16"},
			wantGPUs: []int{0, 0}, wantTicks: 2, power: 90, util: 40,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSampler(time.Hour, tt.gpus, "nvidia-smi on this machine", func() {})
			for _, l := range tt.lines {
				s.handleLine(l)
			}
			got := s.Samples()
			var gpus []int
			ticks := map[time.Duration]bool{}
			for _, smp := range got {
				gpus = append(gpus, smp.GPU)
				ticks[smp.T] = true
			}
			if !reflect.DeepEqual(gpus, tt.wantGPUs) || len(ticks) != tt.wantTicks {
				t.Errorf("GPUs %v in %d ticks, want %v in %d", gpus, len(ticks), tt.wantGPUs, tt.wantTicks)
			}
			p, ok := s.Latest()
			if !ok || p.PowerW == nil || *p.PowerW != tt.power || p.UtilPct == nil || *p.UtilPct != tt.util {
				t.Errorf("Latest = %+v (ok %v), want power %v util %v", p, ok, tt.power, tt.util)
			}
			if w := s.Warnings(); len(w) != 0 {
				t.Errorf("warnings %q", w)
			}
		})
	}
}

func TestSamplerGarbage(t *testing.T) {
	t.Parallel()
	t.Run("a few bad lines are skipped and noted", func(t *testing.T) {
		t.Parallel()
		s := newSampler(time.Hour, nil, "nvidia-smi on lab-box", func() {})
		for _, l := range []string{"0, 100, 50, 1000, 1500, 40, 4, 16", "oops", "0, 100, 50, 1000, 1500, 40, 4, 16", "??", "0, 100, 50, 1000, 1500, 40, 4, 16"} {
			s.handleLine(l)
		}
		s.finish()
		want := []string{`nvidia-smi on lab-box printed 2 lines we could not read, such as "oops"; they were skipped`}
		if got := s.Warnings(); !reflect.DeepEqual(got, want) {
			t.Errorf("warnings %q, want %q", got, want)
		}
		if n := len(s.Samples()); n != 3 {
			t.Errorf("%d samples, want 3", n)
		}
	})
	t.Run("a run of bad lines stops sampling", func(t *testing.T) {
		t.Parallel()
		cancelled := false
		s := newSampler(time.Hour, nil, "nvidia-smi on lab-box", func() { cancelled = true })
		for i := 0; i < 8; i++ {
			s.handleLine("Failed to initialize NVML: Driver/library version mismatch")
		}
		s.finish()
		want := []string{`GPU telemetry stopped: nvidia-smi on lab-box printed lines we could not read, such as "Failed to initialize NVML: Driver/library version mismatch"`}
		if got := s.Warnings(); !reflect.DeepEqual(got, want) || !cancelled {
			t.Errorf("warnings %q (cancelled %v), want %q", got, cancelled, want)
		}
	})
}

func TestNewTelemetry(t *testing.T) {
	t.Parallel()
	src, err := ParseSource("ssh://alice@lab-box?gpus=0,1")
	if err != nil {
		t.Fatal(err)
	}
	s := newSampler(time.Second, []int{0, 1}, "nvidia-smi on lab-box", func() {})
	for i := 0; i <= 20; i++ {
		ts := sec(float64(i) / 2)
		a := pw(0, 0, 100, 60, 4, 16)
		b := pw(0, 1, 200, 80, 4, 16)
		a.T, b.T = ts, ts
		s.samples = append(s.samples, a, b)
	}
	s.warnings = []string{"GPU telemetry stopped: nvidia-smi on lab-box printed nothing for 5 s"}
	levels := []LevelWindow{
		{Concurrency: 1, Start: s.start.Add(2 * time.Second), End: s.start.Add(4 * time.Second), OutputTokens: 1200},
		{Concurrency: 8, Start: s.start.Add(5 * time.Second), End: s.start.Add(9 * time.Second), OutputTokens: 6000},
	}
	inv := []telemetry.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 3090"}, {Index: 1, Name: "NVIDIA GeForce RTX 3090"}}
	tel := NewTelemetry(src, inv, s, levels, "lspci is not installed on lab-box", "GPU telemetry stopped: nvidia-smi on lab-box printed nothing for 5 s")

	if tel.Source != telemetry.GPUSourceSSH || tel.Host != "lab-box" || !reflect.DeepEqual(tel.GPUs, []int{0, 1}) || tel.IntervalMS != 1000 {
		t.Errorf("header %+v", tel)
	}
	wantWarnings := []string{"lspci is not installed on lab-box", "GPU telemetry stopped: nvidia-smi on lab-box printed nothing for 5 s"}
	if !reflect.DeepEqual(tel.Warnings, wantWarnings) {
		t.Errorf("warnings %q, want %q", tel.Warnings, wantWarnings)
	}
	// 300 W for 2 s and 4 s.
	for conc, want := range map[int]struct{ energy, tpj float64 }{1: {600, 2}, 8: {1200, 5}} {
		lv := tel.Levels[conc]
		checkPtr(t, "energy", lv.EnergyJ, want.energy)
		checkPtr(t, "tokens/J", lv.TokensPerJoule, want.tpj)
		checkPtr(t, "J/token", lv.JoulesPerToken, 1/want.tpj)
		checkPtr(t, "util", lv.MeanUtilPct, 70)
	}
	// 21 ticks half a second apart → eleven 1 s buckets.
	if len(tel.Series.TS) != 11 || tel.Series.BucketS != 1 || tel.Series.TS[0] != 0.25 || tel.Series.TS[10] != 10 {
		t.Errorf("series times %v (bucket %v)", tel.Series.TS, tel.Series.BucketS)
	}
	for i, p := range tel.Series.PowerW {
		if p == nil || *p != 300 {
			t.Errorf("series power[%d] = %v", i, p)
		}
	}

	raw, err := json.Marshal(tel)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "alice") {
		t.Errorf("telemetry JSON names the SSH user: %s", raw)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"source", "host", "gpus", "interval_ms", "inventory", "levels", "warnings", "series"} {
		if _, ok := back[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, raw)
		}
	}
	lv8 := back["levels"].(map[string]any)["8"].(map[string]any)
	for _, key := range []string{"concurrency", "duration_s", "samples", "max_gap_s", "energy_j", "mean_power_w", "peak_power_w", "mean_util_pct", "gpus", "output_tokens", "tokens_per_joule", "joules_per_token"} {
		if _, ok := lv8[key]; !ok {
			t.Errorf("level JSON lacks %q: %v", key, lv8)
		}
	}
}

func TestNewTelemetryWithoutSampler(t *testing.T) {
	t.Parallel()
	src, _ := ParseSource("local")
	tel := NewTelemetry(src, nil, nil, nil, "nvidia-smi was not found on this machine")
	raw, err := json.Marshal(tel)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"source":"local","host":"localhost","interval_ms":0,"inventory":[],"levels":{},"warnings":["nvidia-smi was not found on this machine"],"series":{"bucket_s":0,"t_s":[],"power_w":[],"util_pct":[],"mem_used_mib":[],"temp_c":[],"sm_clock_mhz":[]}}`
	if string(raw) != want {
		t.Errorf("got  %s\nwant %s", raw, want)
	}
}

func TestSummaryAndString(t *testing.T) {
	t.Parallel()
	g := telemetry.GPU{Index: 0, Name: "NVIDIA GeForce RTX 4090", MemoryTotalMiB: fp(24564), PCIeGenCurrent: ip(1), PCIeWidthCurrent: ip(16),
		PCIeGenMax: ip(4), PCIeWidthMax: ip(16), PowerLimitW: fp(450), DriverVersion: "550.54.14"}
	if got, want := g.String(), "GPU 0: NVIDIA GeForce RTX 4090, 24564 MiB, PCIe 1 x16 (max 4 x16), 450 W limit, driver 550.54.14"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	g2 := g
	g2.Index = 1
	tests := []struct {
		gpus []telemetry.GPU
		want string
	}{
		{nil, "no GPUs found"},
		{[]telemetry.GPU{g, g2}, "2 × NVIDIA GeForce RTX 4090 (24564 MiB), driver 550.54.14"},
		{[]telemetry.GPU{g, {Index: 1, Name: "NVIDIA GeForce RTX 3090"}}, "NVIDIA GeForce RTX 4090 + NVIDIA GeForce RTX 3090, driver 550.54.14"},
	}
	for _, tt := range tests {
		if got := Summary(tt.gpus); got != tt.want {
			t.Errorf("Summary = %q, want %q", got, tt.want)
		}
	}
}
