package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
)

func TestEnergyRowsOnlyWithTelemetry(t *testing.T) {
	t.Parallel()
	a := session([]int{1, 8})
	b := session([]int{1, 8})
	for _, r := range Table([]*results.File{a, b}, nil) {
		if r.Metric.ID == "tokens_per_joule" {
			t.Fatal("energy rows without any telemetry")
		}
	}
	a.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{1: {TokensPerJoule: ptr(2.0)}, 8: {TokensPerJoule: ptr(5.0)}}}
	b.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{1: {TokensPerJoule: ptr(2.5)}}}
	var got []Row
	for _, r := range Table([]*results.File{a, b}, nil) {
		if r.Metric.ID == "tokens_per_joule" {
			got = append(got, r)
		}
	}
	if len(got) != 2 {
		t.Fatalf("tokens per joule rows: %d, want one per level", len(got))
	}
	// Energy without its readings over time has no interval: the change
	// is shown, never called, so never coloured.
	if c := got[0].Cells[1]; !c.Present || c.Better != 0 || c.Delta < 0.249 || c.Delta > 0.251 {
		t.Errorf("level 1: %+v, want +25 %%, not coloured", c)
	}
	if c := got[1].Cells[1]; c.Present {
		t.Errorf("level 8 of run 2 has no energy: want a gap, got %+v", c)
	}
}

// withWall gives f's levels a wall plug's readings: n a level, around
// watts with the given relative spread (a seeded draw), and tokens per
// joule from the level's output throughput.
func withWall(f *results.File, seed uint64, watts, spread float64, n int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := &results.WallTelemetry{Levels: map[int]results.WallLevel{}, Series: &results.WallSeries{}}
	t := 0.0
	for _, r := range f.Runs {
		from := t
		sum := 0.0
		for range n {
			p := watts * (1 + spread*rng.NormFloat64())
			w.Series.TS, w.Series.PowerW = append(w.Series.TS, t), append(w.Series.PowerW, p)
			sum += p
			t++
		}
		mean := sum / float64(n)
		w.Levels[r.Concurrency] = results.WallLevel{StartS: from, EndS: t - 1, MeanPowerW: ptr(mean), TokensPerJoule: ptr(r.Metrics.OutputThroughput / mean)}
		t += 5
	}
	f.Local.Wall = w
}

// Tokens per joule at the wall is judged like any figure: the run's
// throughput spread (resampled requests) and its power readings' spread
// together. A server drawing 300 W where the baseline drew 200 W at the
// same speed is a third worse per joule, beyond noise; the same 200 W
// is within noise; a level read too seldom (4 readings) is not judged.
func TestWallTokensPerJouleJudged(t *testing.T) {
	t.Parallel()
	synth := comparetest.Typical(1, 100, 64)
	for _, c := range []struct {
		name   string
		watts  float64
		n      int
		noise  Noise
		better int
	}{
		{"a third more power", 300, 30, BeyondNoise, -1},
		{"the same power", 200, 30, WithinNoise, 0},
		{"too few readings", 300, 4, NoiseUnknown, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := comparetest.SynthFile(41, []int{1, 8}, synth), comparetest.SynthFile(42, []int{1, 8}, synth)
			withWall(a, 1, 200, 0.02, 30)
			withWall(b, 2, c.watts, 0.02, c.n)
			_, rows := Compared([]*results.File{a, b}, nil)
			found := false
			for _, r := range rows {
				if r.Metric.ID != "wall_tokens_per_joule" || r.Concurrency != 8 {
					continue
				}
				found = true
				cell := r.Cells[1]
				if cell.Noise != c.noise || cell.Better != c.better {
					t.Errorf("%+v, want %v, better %d", cell, c.noise, c.better)
				}
				if c.noise == BeyondNoise && !(cell.Low <= cell.Delta && cell.Delta <= cell.High && cell.High < 0) {
					t.Errorf("interval %+.3f … %+.3f around %+.3f", cell.Low, cell.High, cell.Delta)
				}
			}
			if !found {
				t.Fatal("no tokens per joule at the wall at 8")
			}
		})
	}
}

// Runs whose hardware did different things say so among the cautions
// before their speeds: a model split onto the CPU in one, a GPU that
// slowed itself, a machine that swapped, a card shared with another
// program in one; runs alike, or different only below what is a
// problem, or whose server did not say, say nothing of it.
func TestHardwareCautions(t *testing.T) {
	t.Parallel()
	split := func(f *results.File) {
		f.Local.Detection = &results.Detection{Family: results.FamilyOllama, Placement: &results.Placement{Source: results.PlacementOllamaPS, CPUShare: 0.38}}
	}
	onGPU := func(f *results.File) {
		f.Local.Detection = &results.Detection{Family: results.FamilyOllama, Placement: &results.Placement{Source: results.PlacementOllamaPS}}
	}
	throttled := func(share float64) func(*results.File) {
		return func(f *results.File) {
			f.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{}}
			for _, r := range f.Runs {
				f.Local.Telemetry.Levels[r.Concurrency] = results.LevelTelemetry{LevelEnergy: results.LevelEnergy{ThrottledShare: ptr(share)}}
			}
		}
	}
	swapped := func(bytes int64) func(*results.File) {
		return func(f *results.File) {
			f.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{}}
			for _, r := range f.Runs {
				f.Local.Telemetry.Levels[r.Concurrency] = results.LevelTelemetry{LevelEnergy: results.LevelEnergy{DurationS: 10}, Host: &results.HostLevel{Samples: 5, SwapInBytes: &bytes, SwapOutBytes: new(int64)}}
			}
		}
	}
	others := func(mib float64) func(*results.File) {
		return func(f *results.File) {
			total, server := 24576.0, 18000.0
			f.Local.Telemetry = &results.Telemetry{Inventory: []results.GPU{{Index: 0, MemoryTotalMiB: &total}},
				GPUProcesses: &results.GPUProcesses{Start: []results.GPUProcess{{GPU: 0, PID: 1, Name: "llama-server", UsedMiB: &server}}}}
			if mib > 0 {
				f.Local.Telemetry.GPUProcesses.Start = append(f.Local.Telemetry.GPUProcesses.Start, results.GPUProcess{GPU: 0, PID: 2, Name: "trainer.py", UsedMiB: &mib})
			}
		}
	}
	for _, c := range []struct {
		name string
		a, b func(*results.File)
		want string
	}{
		{"split against whole", onGPU, split, "where the server ran the model differs: run 1 ran it all in GPU memory, run 2 ran 38 % of the model on the CPU"},
		{"throttled against not", throttled(0), throttled(0.4), "the GPUs did not run alike: run 1 did not slow itself, run 2 slowed itself for 40 % of concurrency 1"},
		{"swapped against not", swapped(0), swapped(1 << 30), "the server's machine did not run alike: run 1 did not swap, run 2 swapped 1.0 GiB at concurrency 1"},
		{"swapped a little against not", swapped(0), swapped(8 << 20), ""},
		{"shared against not", others(0), others(6200), "the cards were not the server's alone in every run: run 1 had its cards to itself, run 2 shared GPU 0 with other programs holding 6.1 GiB"},
		{"a small other program against none", others(0), others(300), ""},
		{"alike", onGPU, onGPU, ""},
		{"unknown", func(*results.File) {}, split, ""},
	} {
		a, b := session(std), session(std)
		c.a(a)
		c.b(b)
		v := VerdictOf(a, b)
		got := strings.Join(v.Cautions, "\n")
		if c.want == "" && (strings.Contains(got, "differs") || strings.Contains(got, "alike") || strings.Contains(got, "alone")) || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: cautions %q, want %q", c.name, v.Cautions, c.want)
		}
	}
}

// The hardware states read any plan's measured windows: a trace's
// replay in Compare settings is a rate result, its one window named as
// its table names it.
func TestHardwareStatesOfAReplay(t *testing.T) {
	t.Parallel()
	share, swapped := 0.4, int64(1<<30)
	r := &results.RateResult{Levels: []results.RateLevel{{Rate: 2.5, Requests: 9, OK: 9}}}
	r.Local.Telemetry = &results.Telemetry{Levels: map[int]results.LevelTelemetry{1: {
		LevelEnergy: results.LevelEnergy{DurationS: 10, ThrottledShare: &share},
		Host:        &results.HostLevel{Samples: 5, SwapInBytes: &swapped, SwapOutBytes: new(int64)},
	}}}
	for _, c := range []struct {
		state func(results.Powered) (string, bool)
		want  string
	}{
		{ThrottleState, "slowed itself for 40 % of offered req/s 2.5"},
		{SwapState, "swapped 1.0 GiB at offered req/s 2.5"},
	} {
		if got, ok := c.state(r); !ok || got != c.want {
			t.Errorf("%q (said %v), want %q", got, ok, c.want)
		}
	}
	if _, ok := SharedState(r); ok {
		t.Error("a replay without the cards' programs listed says whether they were shared")
	}
}
