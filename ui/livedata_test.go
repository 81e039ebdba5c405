package ui

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/hw"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

func TestLiveDataSeries(t *testing.T) {
	t.Parallel()
	var d liveData
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	// Warmup is drawn, as warmup: its own series, not the measured one.
	d.add(engine.Snapshot{At: sec(0.5), Phase: engine.PhaseWarmup, NewLevel: true, LevelTotal: 4, LevelDone: 1, TPS: 200,
		Line: "Warmup (not measured) — 1 of 4 requests", StageName: "warmup"})
	d.add(engine.Snapshot{At: sec(1), Phase: engine.PhaseWarmup, LevelTotal: 4, LevelDone: 2, TPS: 300,
		Line: "Warmup (not measured) — 2 of 4 requests", StageName: "warmup"})
	if len(d.tpsX) != 0 || len(d.warmY) != 2 || d.warmY[1] != 300 || len(d.ttftY) != 0 || d.phaseLine() != "Warmup (not measured) — 2 of 4 requests" {
		t.Errorf("warmup: measured %v warmup %v ttft %v %q", d.tpsY, d.warmY, d.ttftY, d.phaseLine())
	}
	if spec := d.tpsSpec(chart.Palette{}); len(spec.Series) != 2 || spec.Series[1].Name != "warmup (not measured)" {
		t.Errorf("tok/s chart series %+v", spec.Series)
	}
	// Level 1 starts at 1.5 s; the engine's rate is drawn as it is.
	d.add(engine.Snapshot{At: sec(2), Phase: engine.PhaseMeasure, Level: 1, Levels: 2, Concurrency: 4, NewLevel: true,
		LevelElapsed: sec(0.5), Tokens: 500, TPS: 1000, TTFT: []float64{30, 31}, ITL: []float32{20, 21, 22}, LevelDone: 2, LevelTotal: 10, OK: 2,
		Line: "Level 1 of 2 — concurrency 4 — 2 of 10 requests", StageName: "level 1"})
	d.add(engine.Snapshot{At: sec(3), Phase: engine.PhaseMeasure, Level: 1, Levels: 2, Concurrency: 4,
		LevelElapsed: sec(1.5), Tokens: 1500, TPS: 1000, TTFT: []float64{32}, ITL: []float32{20}, LevelDone: 3, LevelTotal: 10, OK: 3, StageProgress: 0.3,
		Line: "Level 1 of 2 — concurrency 4 — 3 of 10 requests", StageName: "level 1"})
	if len(d.tpsY) != 2 || d.tpsY[0] != 1000 || d.tpsY[1] != 1000 || !math.IsNaN(d.warmY[len(d.warmY)-1]) {
		t.Errorf("tok/s series %v, warmup %v (ended by a gap)", d.tpsY, d.warmY)
	}
	if len(d.ttftY) != 3 || d.ttftX[2] != 3 || len(d.itl) != 4 {
		t.Errorf("ttft %v itl %v", d.ttftY, d.itl)
	}
	if d.phaseLine() != "Level 1 of 2 — concurrency 4 — 3 of 10 requests" || d.levelProgress() != 0.3 {
		t.Errorf("phase %q progress %v", d.phaseLine(), d.levelProgress())
	}
	// A new level: a gap in the line, a fresh histogram.
	d.add(engine.Snapshot{At: sec(4), Phase: engine.PhaseMeasure, Level: 2, Levels: 2, NewLevel: true, LevelElapsed: sec(0.5), Tokens: 800, TPS: 1600, ITL: []float32{25}})
	n := len(d.tpsY)
	if !math.IsNaN(d.tpsY[n-2]) || d.tpsY[n-1] != 1600 || len(d.itl) != 1 {
		t.Errorf("level change: tps %v itl %v", d.tpsY, d.itl)
	}
	// The histogram's sample stays bounded however long the level runs.
	big := make([]float32, 3*itlReservoir)
	for i := range big {
		big[i] = float32(1 + i%50)
	}
	d.add(engine.Snapshot{At: sec(5), Phase: engine.PhaseMeasure, Level: 2, Levels: 2, LevelElapsed: sec(1.5), Tokens: 1800, ITL: big})
	if len(d.itl) != itlReservoir || d.itlSeen != 1+len(big) {
		t.Errorf("reservoir %d of %d", len(d.itl), d.itlSeen)
	}
}

// Every plan's measured stages feed the live charts, whatever the plan
// calls them: a stage is measured or a warmup, and the live view draws
// what the engine hands it (TestLiveEveryPlan in engine holds that every
// plan's stages hand it their tokens, TTFTs and gaps).
func TestLiveDataEveryPlan(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"level 1", "stage 1 (single-user decode)", "stage 2 (cold prefill)", "stage 3 (many users)", "the probe at 4 users", "depth 8k"} {
		var d liveData
		for i := 1; i <= 2; i++ {
			d.add(engine.Snapshot{At: time.Duration(i) * time.Second, Phase: engine.PhaseMeasure, Level: 1, Levels: 3, NewLevel: i == 1, StageName: name,
				Tokens: int64(100 * i), TPS: 100, TTFT: []float64{float64(20 * i)}, ITL: []float32{10, 11}})
		}
		if len(d.tpsY) != 2 || len(d.warmY) != 0 || len(d.ttftY) != 2 || len(d.itl) != 4 || d.itlSpec(chart.Palette{}).Title != "Inter-token latency, "+name {
			t.Errorf("%s: tok/s %v (warmup %v), TTFT %v, ITL %v, %q: want the stage drawn as measured", name, d.tpsY, d.warmY, d.ttftY, d.itl, d.itlSpec(chart.Palette{}).Title)
		}
	}
}

// The TTFT chart says a first request finished before it can draw.
func TestLiveTTFTPlaceholder(t *testing.T) {
	t.Parallel()
	var d liveData
	if got := d.ttftPlaceholder(); got != "Waiting for finished requests…" {
		t.Errorf("before any request: %q", got)
	}
	d.add(engine.Snapshot{Phase: engine.PhaseMeasure, Level: 1, TTFT: []float64{812.4}})
	if got, want := d.ttftPlaceholder(), "1 request finished (TTFT 812 ms); the chart starts at the second."; got != want {
		t.Errorf("after one: %q, want %q", got, want)
	}
}

// The server charts say why they stay empty: no /metrics, or no KV gauge.
func TestLiveServerPlaceholders(t *testing.T) {
	t.Parallel()
	running := 2.0
	var d liveData
	d.add(engine.Snapshot{Phase: engine.PhaseMeasure, ServerFamily: results.FamilyLlamaCpp, Server: &results.ServerMetricsSample{Running: &running}})
	if got := d.kvPlaceholder(); !strings.Contains(got, "llama.cpp") || !strings.Contains(got, "no KV-cache gauge") {
		t.Errorf("KV placeholder for llama.cpp without the gauge: %q", got)
	}
	d.add(engine.Snapshot{Phase: engine.PhaseMeasure, ServerNone: "No server charts: this server's /metrics did not answer (GET /metrics answered HTTP 404)."})
	if got := d.serverPlaceholder(); !strings.Contains(got, "HTTP 404") || d.kvPlaceholder() != got {
		t.Errorf("placeholders without /metrics: %q, %q", got, d.kvPlaceholder())
	}
}

// TestLiveDataBounded: a ten-hour run at 4 Hz, with a server reading and a
// GPU reading every second and four finished requests a tick, keeps every
// series of the live view within its limit.
func TestLiveDataBounded(t *testing.T) {
	t.Parallel()
	var d liveData
	power, util, running := 300.0, 90.0, 8.0
	const ticks = 10 * 3600 * 4
	for i := 1; i <= ticks; i++ {
		at := time.Duration(i) * 250 * time.Millisecond
		s := engine.Snapshot{At: at, Phase: engine.PhaseMeasure, Level: 1, Levels: 1, Tokens: int64(i) * 100,
			TTFT: []float64{30, 31, 32, 33}, ITL: []float32{20, 21}}
		if i%4 == 0 {
			s.ServerNew = []results.ServerMetricsSample{{T: at.Seconds(), Running: &running}}
			s.GPU = &hw.Point{T: at, PowerW: &power, UtilPct: &util}
		}
		d.add(s)
	}
	for _, c := range []struct {
		name string
		n    int
		max  int
	}{
		{"tok/s", len(d.tpsX), maxTPSPoints}, {"TTFT", len(d.ttftX), maxTTFTPoints}, {"ITL sample", len(d.itl), itlReservoir},
		{"server", len(d.srvX), maxGaugePoints}, {"server KV", len(d.srvKV), maxGaugePoints},
		{"GPU", len(d.gpuX), maxGaugePoints}, {"GPU power", cap(d.gpuPower), 2 * maxGaugePoints},
	} {
		if c.n > c.max || c.n == 0 {
			t.Errorf("%s: %d points after ten hours, want 1 to %d", c.name, c.n, c.max)
		}
	}
	if last := d.srvX[len(d.srvX)-1]; last != float64(10*3600) {
		t.Errorf("the server series ends at %v s, want the newest reading", last)
	}
}

// TestLiveITLLeavesOutChunksReadTogether: a gap of exactly 0 ms is two
// chunks read together, not an inter-token latency. The histogram's bars
// hold only the real gaps, and its caption says how many it left out,
// counted afresh each level.
func TestLiveITLLeavesOutChunksReadTogether(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		snaps       [][]float32 // ITL of each snapshot, all in level 1
		real        int         // gaps the bars hold
		xLabel      string
		placeholder string
	}{
		{"no chunks read together", [][]float32{{20, 21}, {22, 0.001}},
			4, "ms", "Waiting for token gaps…"},
		{"one", [][]float32{{20, 0, 21}},
			2, "ms — 1 chunk read together (0 ms) not shown", "Waiting for token gaps… 1 chunk read together (0 ms) not shown"},
		{"over several snapshots", [][]float32{{0, 20, 0}, {21, 0, 22, 23}},
			4, "ms — 3 chunks read together (0 ms) not shown", "Waiting for token gaps… 3 chunks read together (0 ms) not shown"},
		{"every gap read together", [][]float32{{0, 0}, {0}},
			0, "ms — 3 chunks read together (0 ms) not shown", "Waiting for token gaps… 3 chunks read together (0 ms) not shown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d liveData
			for i, itl := range tt.snaps {
				d.add(engine.Snapshot{At: time.Duration(i+1) * time.Second, Phase: engine.PhaseMeasure, Level: 1, Levels: 2, NewLevel: i == 0, ITL: itl})
			}
			spec := d.itlSpec(chart.Palette{})
			if len(spec.Series) != 1 {
				t.Fatalf("%d series, want the one of real gaps", len(spec.Series))
			}
			bars, sum := spec.Series[0], 0.0
			for i := range bars.Y {
				sum += bars.Y[i]
				if bars.Y[i] > 0 && bars.X[i] <= 0 {
					t.Errorf("a bar of %v gaps at %v ms", bars.Y[i], bars.X[i])
				}
			}
			if got, want := int(sum), tt.real; got != want {
				t.Errorf("the bars hold %d gaps, want %d", got, want)
			}
			for _, v := range d.itl {
				if v == 0 {
					t.Errorf("a 0 ms gap in the histogram's sample %v", d.itl)
					break
				}
			}
			if got, want := spec.XLabel, tt.xLabel; got != want {
				t.Errorf("caption %q, want %q", got, want)
			}
			if got, want := d.itlPlaceholder(), tt.placeholder; got != want {
				t.Errorf("placeholder %q, want %q", got, want)
			}
			// The next level starts its own count.
			d.add(engine.Snapshot{At: time.Minute, Phase: engine.PhaseMeasure, Level: 2, Levels: 2, NewLevel: true, ITL: []float32{20, 21}})
			if got, want := d.itlSpec(chart.Palette{}).XLabel, "ms"; got != want {
				t.Errorf("level 2: caption %q, want %q", got, want)
			}
		})
	}
}

// TestLiveITLNamesItsStage: the histogram restarts with each stage, and a
// request's gaps come when it ends; at a deep context the first answer
// takes seconds, so title and placeholder say which stage it waits for
// (seen on a real llama-server: "Waiting for token gaps…" sat for 3.4 s at
// 8k under a title naming "level 5").
func TestLiveITLNamesItsStage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		snap        engine.Snapshot
		title, wait string
	}{
		{"context depth", engine.Snapshot{Phase: engine.PhaseMeasure, Level: 5, Levels: 5, StageName: "depth 8k", StageNameInWait: true},
			"Inter-token latency, depth 8k", "Waiting for the token gaps of depth 8k: they come as each of its answers ends…"},
		{"capacity probe", engine.Snapshot{Phase: engine.PhaseMeasure, Level: 3, StageName: "the probe at 16 users", StageNameInWait: true},
			"Inter-token latency, the probe at 16 users", "Waiting for the token gaps of the probe at 16 users: they come as each of its answers ends…"},
		{"Kovara level", engine.Snapshot{Phase: engine.PhaseMeasure, Level: 2, Levels: 3, StageName: "level 2"},
			"Inter-token latency, level 2", "Waiting for token gaps…"},
		{"before any stage", engine.Snapshot{Phase: engine.PhaseProbe},
			"Inter-token latency", "Waiting for token gaps…"},
	}
	for _, tt := range tests {
		var d liveData
		tt.snap.NewLevel = true
		d.add(tt.snap)
		if got := d.itlSpec(chart.Palette{}).Title; got != tt.title {
			t.Errorf("%s: title %q, want %q", tt.name, got, tt.title)
		}
		if got := d.itlPlaceholder(); got != tt.wait {
			t.Errorf("%s: placeholder %q, want %q", tt.name, got, tt.wait)
		}
	}
}

// TestLiveITLNamesEachPlansStage: the names the ITL chart gives come from
// the plans themselves. After each plan ran against the simulator, its
// last stage is still the one the live view names: its title and the
// placeholder say it in the plan's words, a context depth named while
// its gaps are awaited, a Kovara level and a three-stage stage not.
func TestLiveITLNamesEachPlansStage(t *testing.T) {
	t.Parallel()
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000})
	ctx := context.Background()
	tests := []struct {
		name        string
		run         func(obs engine.Observer) error
		title, wait string
	}{
		{"kovara", func(obs engine.Observer) error {
			p := setup.DefaultPlan()
			p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 100, 8, []int{1, 2}, 4, 1
			_, err := engine.Run(ctx, p, setup.Endpoint{URL: url}, obs)
			return err
		}, "Inter-token latency, level 2", "Waiting for token gaps…"},
		{"three stages", func(obs engine.Observer) error {
			p := setup.DefaultStagesPlan()
			p.Quick, p.Users = true, 2
			_, err := engine.RunStages(ctx, p, setup.Endpoint{URL: url}, obs)
			return err
		}, "Inter-token latency, stage 3 (many users)", "Waiting for token gaps…"},
		{"context", func(obs engine.Observer) error {
			p := setup.DefaultContextPlan()
			p.Depths, p.Repeats, p.OutputTokens = []int{1024}, 1, 8
			_, err := engine.RunContext(ctx, p, setup.Endpoint{URL: url}, obs)
			return err
		}, "Inter-token latency, depth 1k", "Waiting for the token gaps of depth 1k: they come as each of its answers ends…"},
	}
	for _, tt := range tests {
		live := engine.NewLive()
		if err := tt.run(engine.Observer{Live: live}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var d liveData
		s := live.Snapshot()
		s.ITL = nil // the placeholder is of a stage with no gaps yet
		d.add(s)
		if got := d.itlSpec(chart.Palette{}).Title; got != tt.title {
			t.Errorf("%s: title %q, want %q", tt.name, got, tt.title)
		}
		if got := d.itlPlaceholder(); got != tt.wait {
			t.Errorf("%s: placeholder %q, want %q", tt.name, got, tt.wait)
		}
	}
}

// TestEveryPlanRunsFromItsForm: every registered plan, run from its own
// form against a server, shows its live view, then its result, kept in the
// library as its kind and not failed. A plan with no entry here fails
// the test, so a new plan cannot be left out. What the live view draws
// of each plan's stages is TestLiveEveryPlan's (engine), which looks at
// the live data from inside each stage: here the redraws come on a timer,
// and a machine busy enough can let a short stage pass between two.
func TestEveryPlanRunsFromItsForm(t *testing.T) {
	small := map[string]func(b *BenchmarkScreen){
		results.PlanKovara: func(b *BenchmarkScreen) {
			b.kovara.levelsEntry.SetText("1,2")
			b.kovara.requestsEntry.SetText("4")
			b.kovara.outputEntry.SetText("32")
			b.kovara.inputEntry.SetText("64")
			b.kovara.warmupEntry.SetText("1")
		},
		results.PlanStages: func(b *BenchmarkScreen) {
			b.stages.quickCheck.SetChecked(true)
			b.stages.usersEntry.SetText("2")
		},
		results.PlanSpecDec: func(b *BenchmarkScreen) {
			b.specDec.levelsEntry.SetText("1,2")
			b.specDec.requestsEntry.SetText("4")
			b.specDec.outputEntry.SetText("32")
		},
		// A service level any machine meets: the search ends at its
		// maximum, not on how busy the machine is.
		results.PlanCapacity: func(b *BenchmarkScreen) {
			b.capacity.inputEntry.SetText("64")
			b.capacity.outputEntry.SetText("16")
			b.capacity.maxConcEntry.SetText("2")
			b.capacity.warmupEntry.SetText("1")
			b.capacity.sloUserEntry.SetText("0.01")
			b.capacity.sloTTFTEntry.SetText("600000")
		},
		results.PlanContext: func(b *BenchmarkScreen) {
			b.context.depthsEntry.SetText("1k")
			b.context.repeatsEntry.SetText("2")
			b.context.outputEntry.SetText("32")
		},
		results.PlanRate: func(b *BenchmarkScreen) {
			f := b.forms[results.PlanRate].(*rateForm)
			f.ratesEntry.SetText("5,10")
			f.requestsEntry.SetText("8")
			f.inputEntry.SetText("32")
			f.outputEntry.SetText("16")
			f.warmupEntry.SetText("1")
		},
		// Two settings that are the one model the server serves.
		results.PlanTune: func(b *BenchmarkScreen) {
			for _, r := range b.tune.rows {
				r.howSelect.SetSelected("Model")
				r.whatEntry.SetText("kovara-sim-8b")
			}
			b.tune.roundsEntry.SetText("2")
			b.tune.concurrencyEntry.SetText("1,2")
			b.tune.requestsEntry.SetText("4")
			b.tune.lengths.inputEntry.SetText("32")
			b.tune.lengths.outputEntry.SetText("16")
		},
		// A llama.cpp endpoint (the answers are read through its
		// /completion) against itself, named as another: the one model
		// it serves on both sides.
		results.PlanAnswers: func(b *BenchmarkScreen) {
			b.selectEndpoint("llama box")
			b.answers().againstSelect.SetSelected("llama box")
			b.answers().modelEntry.SetText("")
			b.answers().promptsEntry.SetText("2")
			b.answers().posEntry.SetText("4")
		},
	}
	h := newHarness(t)
	b := h.u.bench
	url := startTestSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e5, SpecDecode: &sim.SpecDecode{DraftTokens: 3, Acceptance: 0.7}})
	h.addEndpoint("every plan", url, "")
	h.addEndpoint("llama box", startTestSim(t, sim.Config{Personality: sim.LlamaCpp, TokenInterval: 2 * time.Millisecond, PrefillRate: 1e5}), "")
	for _, k := range plans.All {
		fill, ok := small[k.ID]
		if !ok {
			t.Errorf("%s: no small run of this plan here", k.ID)
			continue
		}
		h.locked(func() {
			b.backToSetup()
			b.refreshEndpoints()
			b.selectEndpoint("every plan")
			b.planSelect.SetSelected(k.Title)
			fill(b)
			if b.runButton.Disabled() {
				t.Fatalf("%s: %q", k.ID, b.planNote.Text)
			}
			test.Tap(b.runButton)
			if b.live == nil || b.content.Objects[0] != b.live.content || !strings.HasPrefix(b.live.title.Text, "Benchmarking "+b.endpointSelect.Selected) {
				t.Errorf("%s: Run did not show the live view", k.ID)
			}
		})
		h.waitFor(k.ID+"'s result", 120*time.Second, func() bool { return b.running == nil && b.shownResult })
		list, err := h.u.lib.List()
		if err != nil {
			t.Fatal(err)
		}
		var kept *storage.Summary
		for i := range list {
			if list[i].Plan == k.ID {
				kept = &list[i]
			}
		}
		if kept == nil || kept.Failed || !kept.Complete {
			t.Errorf("%s: the library holds %+v", k.ID, kept)
		}
	}
}

// TestLiveStageBarWhileReadingPrompts: while a prompts file is read, the
// stage's bar is how much of it has been read (it stood at 0 % for the
// seconds a large file takes); then it is the level's share done, the
// engine's (StageProgress), from which its time left is told.
func TestLiveStageBarWhileReadingPrompts(t *testing.T) {
	t.Parallel()
	var d liveData
	d.add(engine.Snapshot{Phase: engine.PhasePrompts, Read: 0.25})
	if got := d.levelProgress(); got != 0.25 {
		t.Errorf("reading the prompts file: bar %.2f, want 0.25", got)
	}
	d.add(engine.Snapshot{Phase: engine.PhaseMeasure, Level: 1, LevelDone: 3, LevelTotal: 12, StageProgress: 0.25})
	if got := d.levelProgress(); got != 0.25 {
		t.Errorf("a quarter: bar %.2f, want 0.25", got)
	}
}

// TestLiveStageBarAgreesWithItsTimeLeft: the stage's bar is the share
// its time left is told from, not its finished requests: 44 % of the
// requests done with 60 % of the tokens in shows 60 %, beside the few
// seconds left that 60 % makes (it showed 44 % beside "a few seconds
// left"). With no token for a while, the line says so and no time left.
func TestLiveStageBarAgreesWithItsTimeLeft(t *testing.T) {
	t.Parallel()
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	var d liveData
	d.add(engine.Snapshot{At: sec(10), Phase: engine.PhaseMeasure, Level: 3, Levels: 3, Concurrency: 32, LevelDone: 44, LevelTotal: 100,
		StageProgress: 0.6, LevelElapsed: sec(6), Left: sec(4), Line: "Level 3 of 3 — concurrency 32 — 44 of 100 requests"})
	if got := d.levelProgress(); got != 0.6 {
		t.Errorf("bar %.2f, want 0.60 (the share the time left is told from)", got)
	}
	if got, want := d.phaseLine(), "Level 3 of 3 — concurrency 32 — 44 of 100 requests — a few seconds left"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	d.add(engine.Snapshot{At: sec(16), Phase: engine.PhaseMeasure, Level: 3, Levels: 3, Concurrency: 32, LevelDone: 44, LevelTotal: 100,
		StageProgress: 0.6, LevelElapsed: sec(12), Quiet: sec(6), Line: "Level 3 of 3 — concurrency 32 — 44 of 100 requests"})
	if got, want := d.phaseLine(), "Level 3 of 3 — concurrency 32 — 44 of 100 requests — no token for 6 s…"; got != want {
		t.Errorf("quiet: line %q, want %q", got, want)
	}
}
