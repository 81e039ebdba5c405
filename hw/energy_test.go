package hw

import (
	"math"
	"testing"
	"time"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// pw is a sample with a power reading (and utilisation and link when > 0).
func pw(t float64, gpu int, watts, util float64, gen, width int) Sample {
	s := Sample{T: sec(t), GPU: gpu, Valid: FieldPower, PowerW: watts}
	if util >= 0 {
		s.Valid |= FieldUtil
		s.UtilPct = util
	}
	if gen > 0 {
		s.Valid |= FieldPCIeGen | FieldPCIeWidth
		s.PCIeGen, s.PCIeWidth = gen, width
	}
	return s
}

// na is a sample whose power reading was [N/A].
func na(t float64, gpu int) Sample { return Sample{T: sec(t), GPU: gpu} }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func checkPtr(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	switch {
	case math.IsNaN(want) && got != nil:
		t.Errorf("%s = %v, want nil", what, *got)
	case !math.IsNaN(want) && got == nil:
		t.Errorf("%s = nil, want %v", what, want)
	case got != nil && !near(*got, want):
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

var none = math.NaN()

func TestEnergyHandComputed(t *testing.T) {
	t.Parallel()
	// GPU 0: 100 W at 0 s, 200 W at 1 s and 2 s, 100 W at 3 s.
	gpu0 := []Sample{pw(0, 0, 100, 0, 1, 16), pw(1, 0, 200, 80, 4, 16), pw(2, 0, 200, 100, 3, 16), pw(3, 0, 100, 0, 1, 16)}
	flat1 := []Sample{pw(0, 1, 50, 0, 0, 0), pw(1, 1, 50, 50, 0, 0), pw(2, 1, 50, 70, 0, 0), pw(3, 1, 50, 0, 0, 0)}
	hole1 := []Sample{pw(0, 1, 40, 0, 0, 0), na(1, 1), pw(2, 1, 60, 70, 0, 0), pw(3, 1, 60, 0, 0, 0)}
	cat := func(parts ...[]Sample) []Sample {
		var out []Sample
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name                   string
		samples                []Sample
		from, to               float64
		gpus                   []int
		energy, mean, peak     float64
		samplesIn              int
		maxGap, util           float64
		tokens                 int64
		tokPerJ, joulesPerTok  float64
		gen0, width0, gpuCount int
	}{
		{
			// Edges interpolated: 150 W at 0.5 s and 2.5 s.
			// 0.5·(150+200)/2 + 1·(200+200)/2 + 0.5·(200+150)/2 = 87.5 + 200 + 87.5 = 375 J.
			name: "one GPU, edges interpolated", samples: gpu0, from: 0.5, to: 2.5,
			energy: 375, mean: 187.5, peak: 200, samplesIn: 2, maxGap: 1, util: 90,
			tokens: 750, tokPerJ: 2, joulesPerTok: 0.5, gen0: 4, width0: 16, gpuCount: 1,
		},
		{
			// Adds 50 W × 2 s = 100 J; peak 200 + 50.
			name: "two GPUs summed", samples: cat(gpu0, flat1), from: 0.5, to: 2.5,
			energy: 475, mean: 237.5, peak: 250, samplesIn: 2, maxGap: 1, util: 75,
			tokens: 950, tokPerJ: 2, joulesPerTok: 0.5, gen0: 4, width0: 16, gpuCount: 2,
		},
		{
			// GPU 1 reads 40, [N/A], 60, 60: its curve is 45 at 0.5 s, 50 at 1 s
			// (bridged), 60 at 2 s and 2.5 s: 23.75 + 55 + 30 = 108.75 J.
			// Peak: 200 + 50 at 1 s, 200 + 60 at 2 s → 260. Longest unread
			// stretch: GPU 1 from 0.5 s to its 2 s reading.
			name: "missing reading bridged", samples: cat(gpu0, hole1), from: 0.5, to: 2.5,
			energy: 483.75, mean: 241.875, peak: 260, samplesIn: 2, maxGap: 1.5, util: 80,
			tokens: 0, gen0: 4, width0: 16, gpuCount: 2,
		},
		{
			// Only GPU 1 chosen.
			name: "subset", samples: cat(gpu0, flat1), from: 0.5, to: 2.5, gpus: []int{1},
			energy: 100, mean: 50, peak: 50, samplesIn: 2, maxGap: 1, util: 60,
			tokens: 10, tokPerJ: 0.1, joulesPerTok: 10, gen0: -1, gpuCount: 1,
		},
		{
			// Whole span of readings: 0.5·(100+200) + 200 + 0.5·(200+100) = 500 J.
			name: "window on the readings", samples: gpu0, from: 0, to: 3,
			energy: 500, mean: 500.0 / 3, peak: 200, samplesIn: 4, maxGap: 1, util: 45,
			gen0: 4, width0: 16, gpuCount: 1,
		},
		{
			// Readings stop at 1 s; held flat at 100 W to 3 s (within 5 intervals).
			name: "held flat past the last reading", samples: []Sample{pw(0, 0, 100, 10, 0, 0), pw(1, 0, 100, 30, 0, 0)}, from: 0, to: 3,
			energy: 300, mean: 100, peak: 100, samplesIn: 2, maxGap: 2, util: 20, gen0: -1, gpuCount: 1,
		},
		{
			// No tick inside: 120 W at 2 s, 140 W at 4 s, 2 s → 260 J; peak from the edges.
			name: "no tick inside", samples: []Sample{pw(0, 0, 100, -1, 0, 0), pw(10, 0, 200, -1, 0, 0)}, from: 2, to: 4,
			energy: 260, mean: 130, peak: 140, samplesIn: 0, maxGap: 2, util: none, gen0: -1, gpuCount: 1,
		},
		{
			// The sampler died at 2 s; the window runs to 20 s, past five
			// intervals: no energy rather than a flat guess.
			name: "sampler died mid-level", samples: []Sample{pw(0, 0, 300, 90, 0, 0), pw(1, 0, 300, 90, 0, 0), pw(2, 0, 300, 90, 0, 0)}, from: 1, to: 20,
			energy: none, mean: none, peak: none, samplesIn: 2, maxGap: 18, util: 90, tokens: 100, gen0: -1, gpuCount: 1,
		},
		{
			// A GPU that never reports power makes the total unknown.
			name: "a GPU without power", samples: cat(gpu0, []Sample{na(0, 1), na(1, 1), na(2, 1), na(3, 1)}), from: 0.5, to: 2.5,
			energy: none, mean: none, peak: none, samplesIn: 2, maxGap: 2, util: 90, gen0: 4, width0: 16, gpuCount: 2,
		},
		{
			name: "no samples", from: 0, to: 10, energy: none, mean: none, peak: none, util: none, gen0: -1, gpuCount: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Energy(tt.samples, sec(tt.from), sec(tt.to), tt.gpus)
			checkPtr(t, "energy", got.EnergyJ, tt.energy)
			checkPtr(t, "mean power", got.MeanPowerW, tt.mean)
			checkPtr(t, "peak power", got.PeakPowerW, tt.peak)
			checkPtr(t, "mean util", got.MeanUtilPct, tt.util)
			if !near(got.DurationS, tt.to-tt.from) {
				t.Errorf("duration %v, want %v", got.DurationS, tt.to-tt.from)
			}
			if got.Samples != tt.samplesIn {
				t.Errorf("samples %d, want %d", got.Samples, tt.samplesIn)
			}
			if !near(got.MaxGapS, tt.maxGap) {
				t.Errorf("max gap %v, want %v", got.MaxGapS, tt.maxGap)
			}
			if len(got.GPUs) != tt.gpuCount {
				t.Fatalf("%d GPUs, want %d", len(got.GPUs), tt.gpuCount)
			}
			if tt.gpuCount > 0 {
				g := got.GPUs[0]
				if tt.gen0 < 0 {
					if g.PCIeGenPeak != nil {
						t.Errorf("link gen peak %d, want nil", *g.PCIeGenPeak)
					}
				} else if g.PCIeGenPeak == nil || *g.PCIeGenPeak != tt.gen0 || g.PCIeWidthPeak == nil || *g.PCIeWidthPeak != tt.width0 {
					t.Errorf("link peak %v x%v, want %d x%d", g.PCIeGenPeak, g.PCIeWidthPeak, tt.gen0, tt.width0)
				}
			}
			if v := got.TokensPerJoule(tt.tokens); !near(v, tt.tokPerJ) {
				t.Errorf("tokens per joule %v, want %v", v, tt.tokPerJ)
			}
			if v := got.JoulesPerToken(tt.tokens); !near(v, tt.joulesPerTok) {
				t.Errorf("joules per token %v, want %v", v, tt.joulesPerTok)
			}
		})
	}
}

func TestEnergyPerGPUSharesAddUp(t *testing.T) {
	t.Parallel()
	var samples []Sample
	for i := 0; i <= 40; i++ {
		ts := float64(i) * 0.25
		samples = append(samples, pw(ts, 0, 100+float64(i%7)*13, 50, 4, 16), pw(ts, 1, 80+float64(i%5)*11, 40, 4, 8))
	}
	le := Energy(samples, sec(1.1), sec(8.3), nil)
	if le.EnergyJ == nil || le.GPUs[0].EnergyJ == nil || le.GPUs[1].EnergyJ == nil {
		t.Fatalf("energy missing: %+v", le)
	}
	if sum := *le.GPUs[0].EnergyJ + *le.GPUs[1].EnergyJ; math.Abs(sum-*le.EnergyJ) > 1e-9 {
		t.Errorf("GPU shares %v ≠ total %v", sum, *le.EnergyJ)
	}
	if *le.GPUs[1].PCIeWidthPeak != 8 {
		t.Errorf("GPU 1 width %d, want 8", *le.GPUs[1].PCIeWidthPeak)
	}
}

func TestEnergyEmptyWindow(t *testing.T) {
	t.Parallel()
	le := Energy([]Sample{pw(0, 0, 100, 0, 0, 0)}, sec(2), sec(2), nil)
	if le.EnergyJ != nil || le.DurationS != 0 {
		t.Errorf("got %+v, want an empty result", le)
	}
}
