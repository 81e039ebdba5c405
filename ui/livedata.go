package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
)

// Limits on what the live view keeps, so a long run's charts stay cheap.
const (
	maxTPSPoints  = 2400 // ten minutes at 4 Hz
	maxTTFTPoints = 20000
	// The server's gauges and the GPUs come about once a second: the
	// live charts show the last hour of them.
	maxGaugePoints = 3600
	// The ITL histogram draws from a uniform sample of the level's gaps
	// (reservoir sampling): its shape is the level's, its cost is flat.
	itlReservoir = 8192
)

// liveData accumulates the engine's snapshots into the live charts' series.
// It is plain data: the ticker goroutine owns it, and tests drive it with
// made-up snapshots.
type liveData struct {
	level int

	// Output tokens per second over time, measured stages and warmup
	// apart (warmup is not measured, so it is drawn as such).
	tpsX, tpsY   []float64 // seconds since start, output tokens/s
	warmX, warmY []float64
	ttftX, ttftY []float64 // finished request number, ms
	finished     int
	// The server's own gauges and the GPUs, when they answer.
	srvX, srvRunning, srvWaiting, srvKV []float64
	gpuX, gpuPower, gpuUtil             []float64
	lastGPU                             time.Duration
	// The wall plug's readings, and its idle once read (NaN before).
	wallX, wallPower []float64
	lastWall         time.Duration
	wallIdle         float64

	itl     []float64 // a uniform sample of the current level's gaps, ms
	itlSeen int       // gaps of the current level so far
	rng     uint64    // for the reservoir; any sequence will do
	snap    engine.Snapshot

	// itlMerged counts the current level's gaps of exactly 0 ms: two
	// chunks that came off the socket together and carry one receive
	// stamp (separate arrivals never share a stamp). They are not an
	// inter-token latency, so they stay out of the sample and the bars,
	// and the chart says how many it left out.
	itlMerged int
}

// add folds one snapshot in.
func (d *liveData) add(s engine.Snapshot) {
	if s.At < d.snap.At {
		// The clock went back: a new run began on the same live view (a
		// settings comparison's next run), and its charts start afresh.
		*d = liveData{}
	}
	warm := s.Phase == engine.PhaseWarmup
	counting := warm || s.Phase.Measured()
	if s.NewLevel || s.Level != d.level {
		// A new stage restarts its ITL histogram; a gap in the
		// throughput lines marks the boundary.
		d.level = s.Level
		d.itl, d.itlSeen, d.itlMerged = d.itl[:0], 0, 0
		gap(&d.tpsX, &d.tpsY, s.At)
		gap(&d.warmX, &d.warmY, s.At)
	}
	if counting {
		x, y := &d.tpsX, &d.tpsY
		if warm {
			x, y = &d.warmX, &d.warmY
		}
		*x = append(*x, s.At.Seconds())
		*y = append(*y, s.TPS)
		keepLast(maxTPSPoints, &d.tpsX, &d.tpsY)
		keepLast(maxTPSPoints, &d.warmX, &d.warmY)
	}
	{ // the engine hands over measured requests only
		for _, v := range s.TTFT {
			d.finished++
			d.ttftX = append(d.ttftX, float64(d.finished))
			d.ttftY = append(d.ttftY, v)
		}
		keepLast(maxTTFTPoints, &d.ttftX, &d.ttftY)
		for _, v := range s.ITL {
			if v == 0 {
				d.itlMerged++
				continue
			}
			d.sampleITL(float64(v))
		}
	}
	for _, m := range s.ServerNew {
		d.srvX = append(d.srvX, m.T)
		d.srvRunning = append(d.srvRunning, valueOr(m.Running))
		d.srvWaiting = append(d.srvWaiting, valueOr(m.Waiting))
		d.srvKV = append(d.srvKV, valueOr(m.KVCache)*100)
	}
	keepLast(maxGaugePoints, &d.srvX, &d.srvRunning, &d.srvWaiting, &d.srvKV)
	if g := s.GPU; g != nil && g.T != d.lastGPU {
		d.lastGPU = g.T
		d.gpuX = append(d.gpuX, s.At.Seconds())
		d.gpuPower = append(d.gpuPower, valueOr(g.PowerW))
		d.gpuUtil = append(d.gpuUtil, valueOr(g.UtilPct))
		keepLast(maxGaugePoints, &d.gpuX, &d.gpuPower, &d.gpuUtil)
	}
	d.wallIdle = math.NaN()
	if w := s.Wall; w != nil {
		if w.IdleW != nil {
			d.wallIdle = *w.IdleW
		}
		if len(d.wallX) == 0 || w.At != d.lastWall {
			d.lastWall = w.At
			d.wallX = append(d.wallX, w.At.Seconds())
			d.wallPower = append(d.wallPower, w.PowerW)
			keepLast(maxGaugePoints, &d.wallX, &d.wallPower)
		}
	}
	d.snap = s
}

// gap ends a line at t (a NaN point), when it has points.
func gap(x, y *[]float64, t time.Duration) {
	if n := len(*y); n > 0 && !math.IsNaN((*y)[n-1]) {
		*x = append(*x, t.Seconds())
		*y = append(*y, math.NaN())
	}
}

// keepLast cuts parallel series to their last n points. The kept points
// move to the front of the same arrays, so a long run's memory stays flat.
func keepLast(n int, series ...*[]float64) {
	for _, s := range series {
		if over := len(*s) - n; over > 0 {
			*s = append((*s)[:0], (*s)[over:]...)
		}
	}
}

// clone copies d for the UI goroutine while the ticker keeps adding to d.
func (d *liveData) clone() liveData {
	c := *d
	for _, sl := range []*[]float64{&c.tpsX, &c.tpsY, &c.warmX, &c.warmY, &c.ttftX, &c.ttftY, &c.itl,
		&c.srvX, &c.srvRunning, &c.srvWaiting, &c.srvKV, &c.gpuX, &c.gpuPower, &c.gpuUtil, &c.wallX, &c.wallPower} {
		*sl = append([]float64(nil), (*sl)...)
	}
	return c
}

// valueOr is the value, or NaN (a gap in a chart) when it is missing.
func valueOr(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// sampleITL keeps each gap of the level with equal chance (Algorithm R).
func (d *liveData) sampleITL(v float64) {
	d.itlSeen++
	if len(d.itl) < itlReservoir {
		d.itl = append(d.itl, v)
		return
	}
	// xorshift64: cheap, and the sample need not be reproducible.
	if d.rng == 0 {
		d.rng = 0x9E3779B97F4A7C15
	}
	d.rng ^= d.rng << 13
	d.rng ^= d.rng >> 7
	d.rng ^= d.rng << 17
	if j := int(d.rng % uint64(d.itlSeen)); j < itlReservoir {
		d.itl[j] = v
	}
}

// phaseLine is what the live view says the run is doing (the engine's
// words, which the CLI prints too).
// phaseLine is where the run is; the alert, when there is one, has a
// line of its own in the warning colour.
func (d *liveData) phaseLine() string {
	s := d.snap
	s.Alert = ""
	return s.Describe()
}

// alert is what the run says about the server now, capitalised, or "".
func (d *liveData) alert() string {
	a := d.snap.Alert
	if a == "" {
		return ""
	}
	return strings.ToUpper(a[:1]) + a[1:] + "."
}

func (d *liveData) counters() string {
	s := d.snap
	return fmt.Sprintf("ok %d   errors %d   timeouts %d", s.OK, s.Errors, s.Timeouts)
}

// levelProgress is the stage's bar: the share its time left is told from
// (engine.Snapshot.StageProgress), so the two never disagree; the bar
// counted finished requests only, and stood at 44 % beside "a few
// seconds left".
func (d *liveData) levelProgress() float64 {
	if d.snap.Phase == engine.PhasePrompts {
		return d.snap.Read // the stage is reading the prompts file
	}
	return d.snap.StageProgress
}

func (d *liveData) overallProgress() float64 { return d.snap.Progress }

// runName names the run under a saved live chart's title, as a saved
// result's chart is named (chart.RunName): the model asked for and the
// engine its /metrics names, and simulated when it is. Never the
// endpoint: its name and address are the person's own.
func (d *liveData) runName(model string, simulated bool) string {
	engine := ""
	if f := d.snap.ServerFamily; f != "" {
		engine = results.FamilyName(f)
	}
	name := chart.RunName("", model, engine)
	if name == "" && simulated {
		return "simulated"
	}
	return chart.Simulated(name, simulated)
}

// tpsSpan is the least width of the throughput chart's time axis, so its
// first seconds are not stretched across the chart.
const tpsSpan = 20

func (d *liveData) tpsSpec(p chart.Palette) chart.Spec {
	series := []chart.Series{{Name: "measured", X: d.tpsX, Y: d.tpsY, Kind: chart.Line}}
	if len(d.warmX) > 0 {
		series = append(series, chart.Series{Name: "warmup (not measured)", X: d.warmX, Y: d.warmY, Kind: chart.Line, Color: 5})
	}
	return chart.Spec{
		Title: "Output tokens per second, all streams", XLabel: "seconds since the start", YLabel: "tok/s", YFromZero: true, XMinSpan: tpsSpan, Palette: p,
		Series: series,
	}
}

func (d *liveData) ttftSpec(p chart.Palette) chart.Spec {
	return chart.Spec{
		Title: "Time to first token, each finished request", XLabel: "request", YLabel: "ms", YFromZero: true, XInteger: true, Palette: p,
		Series: []chart.Series{{Name: "TTFT", X: d.ttftX, Y: d.ttftY, Kind: chart.Scatter, Color: 1}},
	}
}

func (d *liveData) itlSpec(p chart.Palette) chart.Spec {
	centers, counts := chart.Histogram(d.itl, 30)
	title := "Inter-token latency"
	if n := d.stageName(); n != "" {
		title += ", " + n
	}
	return chart.Spec{
		Title: title, XLabel: "ms" + d.itlLeftOut(" — "), YLabel: "gaps", YFromZero: true, Palette: p,
		Series: []chart.Series{{Name: "ITL", X: centers, Y: counts, Kind: chart.Bars, Color: 2}},
	}
}

// stageName names the stage the ITL histogram is of, in its plan's words
// (a Kovara or speculative-decoding level, one of the three-stage plan's
// stages, a capacity probe, a context depth).
func (d *liveData) stageName() string { return d.snap.StageName }

// waitName names the stage whose first gaps the ITL chart waits for, when
// its plan asks (a context depth, a capacity probe), or "".
func (d *liveData) waitName() string {
	if d.snap.StageNameInWait {
		return d.snap.StageName
	}
	return ""
}

// itlLeftOut says, after sep, how many of the level's gaps the histogram
// leaves out as chunks read together; "" when none were.
func (d *liveData) itlLeftOut(sep string) string {
	switch d.itlMerged {
	case 0:
		return ""
	case 1:
		return sep + "1 chunk read together (0 ms) not shown"
	}
	return sep + fmt.Sprintf("%d chunks read together (0 ms) not shown", d.itlMerged)
}

// ttftPlaceholder is what the TTFT chart says before it has two points.
func (d *liveData) ttftPlaceholder() string {
	if len(d.ttftY) == 1 {
		return fmt.Sprintf("1 request finished (TTFT %.0f ms); the chart starts at the second.", d.ttftY[0])
	}
	return "Waiting for finished requests…"
}

// serverPlaceholder is what the server's queue chart says while it has
// nothing to draw.
func (d *liveData) serverPlaceholder() string {
	if why := d.snap.ServerNone; why != "" {
		return why
	}
	return "Waiting for the server's /metrics (vLLM, SGLang and llama.cpp publish one)…"
}

// kvPlaceholder is what the KV-cache chart says while it has nothing to
// draw: a server that reports its queue but no KV-cache gauge says so.
func (d *liveData) kvPlaceholder() string {
	s := d.snap
	switch {
	case s.ServerNone != "":
		return s.ServerNone
	case s.Server != nil && s.Server.KVCache == nil:
		return "This server's /metrics (" + results.FamilyName(s.ServerFamily) + ") has no KV-cache gauge: there is nothing to chart."
	}
	return "Waiting for the server's /metrics…"
}

// itlPlaceholder is what the ITL chart says while it has no bars to draw.
// Each stage starts its histogram afresh, and a request's gaps arrive when
// it ends: on a deep context the first one takes seconds, so the
// placeholder says whose gaps it waits for.
func (d *liveData) itlPlaceholder() string {
	s := "Waiting for token gaps…"
	if n := d.waitName(); n != "" {
		s = "Waiting for the token gaps of " + n + ": they come as each of its answers ends…"
	}
	if d.itlMerged > 0 {
		return s + d.itlLeftOut(" ")
	}
	return s
}

func (d *liveData) serverSpec(p chart.Palette) chart.Spec {
	return chart.Spec{
		Title: "Server: requests running and waiting", XLabel: "seconds since the start", YLabel: "requests", YFromZero: true, Palette: p,
		Series: []chart.Series{
			{Name: "running", X: d.srvX, Y: d.srvRunning, Kind: chart.Line},
			{Name: "waiting", X: d.srvX, Y: d.srvWaiting, Kind: chart.Line, Color: 1},
		},
	}
}

func (d *liveData) kvSpec(p chart.Palette) chart.Spec {
	return chart.Spec{
		Title: "Server: KV cache in use", XLabel: "seconds since the start", YLabel: "%", YFromZero: true, YAtLeast: 100, Palette: p,
		Series: []chart.Series{{Name: "", X: d.srvX, Y: d.srvKV, Kind: chart.Line, Color: 2}},
	}
}

// powerSpec is the GPUs' power and the wall plug's, whichever the
// endpoint has, and the wall's idle as a flat line once read: the space
// between the wall and its idle is the load's own power.
func (d *liveData) powerSpec(p chart.Palette) chart.Spec {
	spec := chart.Spec{Title: "GPU power (all GPUs)", XLabel: "seconds since the start", YLabel: "W", YFromZero: true, Palette: p}
	if len(d.wallX) == 0 {
		spec.Series = []chart.Series{{Name: "", X: d.gpuX, Y: d.gpuPower, Kind: chart.Line, Color: 3}}
		return spec
	}
	spec.Title = "Power at the wall"
	if len(d.gpuX) > 0 {
		spec.Title = "Power: the wall and the GPUs"
		spec.Series = append(spec.Series, chart.Series{Name: "GPUs", X: d.gpuX, Y: d.gpuPower, Kind: chart.Line, Color: 3})
	}
	spec.Series = append(spec.Series, chart.Series{Name: "wall", X: d.wallX, Y: d.wallPower, Kind: chart.Line, Color: 0})
	if !math.IsNaN(d.wallIdle) {
		x := []float64{d.wallX[0], d.wallX[len(d.wallX)-1]}
		spec.Series = append(spec.Series, chart.Series{Name: "idle", X: x, Y: []float64{d.wallIdle, d.wallIdle}, Kind: chart.Line, Color: 5})
	}
	return spec
}

// powerCounters is what the counters line adds for the power readings:
// "   GPU 212 W   wall 310 W (idle 95 W)".
func (d *liveData) powerCounters() string {
	s := ""
	if g := d.snap.GPU; g != nil && g.PowerW != nil {
		s += fmt.Sprintf("   GPU %.0f W", *g.PowerW)
	}
	if w := d.snap.Wall; w != nil {
		s += fmt.Sprintf("   wall %.0f W", w.PowerW)
		if w.IdleW != nil {
			s += fmt.Sprintf(" (idle %.0f W)", *w.IdleW)
		}
	}
	return s
}

func (d *liveData) utilSpec(p chart.Palette) chart.Spec {
	return chart.Spec{
		Title: "GPU utilisation (mean)", XLabel: "seconds since the start", YLabel: "%", YFromZero: true, YAtLeast: 100, Palette: p,
		Series: []chart.Series{{Name: "", X: d.gpuX, Y: d.gpuUtil, Kind: chart.Line, Color: 4}},
	}
}
