package compare

import (
	"math"
	"slices"
	"strconv"

	"github.com/kovara/desktop/engine/results"
)

// Direction says which way a metric improves.
type Direction int

// The zero Direction is deliberately none of these, so a metric whose
// direction was forgotten is caught rather than read as "higher is better".
const (
	HigherBetter Direction = iota + 1
	LowerBetter
	Neutral
)

func (d Direction) String() string {
	switch d {
	case HigherBetter:
		return "higher is better"
	case LowerBetter:
		return "lower is better"
	case Neutral:
		return "neither better nor worse"
	}
	return "Direction(" + strconv.Itoa(int(d)) + ")"
}

// Metric is one number shown side by side for every run.
type Metric struct {
	ID    string // stable machine name, e.g. "ttft_p95"
	Label string // for people, e.g. "TTFT p95"
	Unit  string // "tok/s", "req/s", "ms", "%", "tok", or "" for a count
	Dir   Direction
	// Get reads the metric from a record; ok is false when the record does
	// not have it (a p99 from fewer than 100 requests, no successes, …).
	Get func(results.Run) (value float64, ok bool)
	// GetLocal, when set instead of Get, reads the metric from the file's
	// local section for the record's level (GPU energy lives there, never
	// in the published record).
	GetLocal func(f *results.File, r results.Run) (value float64, ok bool)
}

// EnergyMetrics are shown when some run of a comparison has GPU telemetry.
var EnergyMetrics = []Metric{
	{ID: "tokens_per_joule", Label: "tokens per joule", Unit: "tok/J", Dir: HigherBetter,
		GetLocal: func(f *results.File, r results.Run) (float64, bool) {
			if t := f.Local.Telemetry; t != nil {
				if lv, ok := t.Levels[r.Concurrency]; ok && lv.TokensPerJoule != nil {
					return *lv.TokensPerJoule, true
				}
			}
			return 0, false
		}},
	{ID: "gpu_power_mean", Label: "GPU power (mean)", Unit: "W", Dir: Neutral,
		GetLocal: func(f *results.File, r results.Run) (float64, bool) {
			if t := f.Local.Telemetry; t != nil {
				if lv, ok := t.Levels[r.Concurrency]; ok && lv.MeanPowerW != nil {
					return *lv.MeanPowerW, true
				}
			}
			return 0, false
		}},
}

// WallMetrics are shown when some run of a comparison read a wall plug:
// output tokens per joule of the whole machine (the bill) and its mean
// power. Tokens per joule is judged against noise like any figure, from
// the throughput's spread and the plug's readings in the level's window
// (noise.go); the power is shown, never called.
var WallMetrics = []Metric{
	{ID: "wall_tokens_per_joule", Label: "tok/J at the wall", Unit: "tok/J", Dir: HigherBetter,
		GetLocal: func(f *results.File, r results.Run) (float64, bool) {
			if w := f.Local.Wall; w != nil {
				if lv, ok := w.Levels[r.Concurrency]; ok && lv.TokensPerJoule != nil {
					return *lv.TokensPerJoule, true
				}
			}
			return 0, false
		}},
	{ID: "wall_power_mean", Label: "wall power (mean)", Unit: "W", Dir: Neutral,
		GetLocal: func(f *results.File, r results.Run) (float64, bool) {
			if w := f.Local.Wall; w != nil {
				if lv, ok := w.Levels[r.Concurrency]; ok && lv.MeanPowerW != nil {
					return *lv.MeanPowerW, true
				}
			}
			return 0, false
		}},
}

// GoodputMetrics are shown when the runs compared had one service level
// (local.slo, the same in every run that had one): the share and rate of
// each level's requests that met it.
var GoodputMetrics = []Metric{
	{ID: "goodput_share", Label: "goodput (met the service level)", Unit: "%", Dir: HigherBetter,
		GetLocal: func(f *results.File, r results.Run) (float64, bool) {
			if g := f.GoodputAt(r.Concurrency, false); g != nil {
				return g.Share * 100, true
			}
			return 0, false
		}},
	{ID: "goodput_rate", Label: "goodput req/s", Unit: "req/s", Dir: HigherBetter,
		GetLocal: func(f *results.File, r results.Run) (float64, bool) {
			if g := f.GoodputAt(r.Concurrency, false); g != nil {
				return g.Rate, true
			}
			return 0, false
		}},
}

// sameSLO says the runs that had a service level had the same one, and
// at least one had it: only then is goodput compared.
func sameSLO(files []*results.File) bool {
	var first *results.RateSLO
	for _, f := range files {
		if f == nil || f.Local.SLO == nil {
			continue
		}
		if first != nil && *f.Local.SLO != *first {
			return false
		}
		first = f.Local.SLO
	}
	return first != nil
}

// Metrics is the table of metrics a comparison shows, in display order.
var Metrics = []Metric{
	{ID: "output_throughput", Label: "output tok/s", Unit: "tok/s", Dir: HigherBetter, Get: outputThroughput},
	{ID: "per_user_throughput", Label: "per-user tok/s", Unit: "tok/s", Dir: HigherBetter, Get: PerUserThroughput},
	{ID: "request_throughput", Label: "req/s", Unit: "req/s", Dir: HigherBetter, Get: requestThroughput},
	{ID: "ttft_p50", Label: "TTFT p50", Unit: "ms", Dir: LowerBetter, Get: at(50, ttft)},
	{ID: "ttft_p95", Label: "TTFT p95", Unit: "ms", Dir: LowerBetter, Get: at(95, ttft)},
	{ID: "ttft_p99", Label: "TTFT p99", Unit: "ms", Dir: LowerBetter, Get: at(99, ttft)},
	{ID: "itl_p50", Label: "ITL p50", Unit: "ms", Dir: LowerBetter, Get: itlAt(50)},
	{ID: "itl_p95", Label: "ITL p95", Unit: "ms", Dir: LowerBetter, Get: itlAt(95)},
	{ID: "itl_p99", Label: "ITL p99", Unit: "ms", Dir: LowerBetter, Get: itlAt(99)},
	{ID: "latency_p50", Label: "latency p50", Unit: "ms", Dir: LowerBetter, Get: at(50, latency)},
	{ID: "latency_p99", Label: "latency p99", Unit: "ms", Dir: LowerBetter, Get: at(99, latency)},
	{ID: "tpot_p50", Label: "TPOT p50", Unit: "ms", Dir: LowerBetter, Get: at(50, tpot)},
	{ID: "requests_ok", Label: "ok requests", Unit: "", Dir: Neutral, Get: requestsOK},
	{ID: "error_rate", Label: "errors + timeouts", Unit: "%", Dir: LowerBetter, Get: errorRate},
	{ID: "output_tokens_mean", Label: "output tokens (mean)", Unit: "tok", Dir: Neutral, Get: outputTokensMean},
}

// MetricByID finds a metric of the table by its ID.
func MetricByID(id string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.ID == id })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// Throughputs exist only when the level ran for a measurable time: the
// engine leaves them at zero otherwise, and that zero is not a measurement.
func outputThroughput(r results.Run) (float64, bool) {
	return r.Metrics.OutputThroughput, r.Metrics.DurationS > 0
}

func requestThroughput(r results.Run) (float64, bool) {
	return r.Metrics.RequestThroughput, r.Metrics.DurationS > 0
}

func requestsOK(r results.Run) (float64, bool) {
	return float64(r.Metrics.RequestsOK), true
}

// errorRate is the share of measured requests that failed or timed out, in
// percent.
func errorRate(r results.Run) (float64, bool) {
	m := r.Metrics
	bad := m.RequestsError + m.RequestsTimeout
	total := m.RequestsOK + bad
	if total <= 0 {
		return 0, false
	}
	return 100 * float64(bad) / float64(total), true
}

func outputTokensMean(r results.Run) (float64, bool) {
	if r.Metrics.OutputTokensMean == nil {
		return 0, false
	}
	return *r.Metrics.OutputTokensMean, true
}

func ttft(r results.Run) *results.Dist    { return r.Metrics.TTFTMs }
func latency(r results.Run) *results.Dist { return r.Metrics.LatencyMs }
func tpot(r results.Run) *results.Dist    { return r.Metrics.TPOTMs }

// itlAt picks one ITL percentile where it was measured (results.ITLAt):
// chunks read together are no change to compare.
func itlAt(q int) func(results.Run) (float64, bool) {
	return func(r results.Run) (float64, bool) { return results.ITLAt(r.Metrics.ITLMs, q) }
}

// at picks one percentile of a run's distribution.
func at(q int, dist func(results.Run) *results.Dist) func(results.Run) (float64, bool) {
	return func(r results.Run) (float64, bool) { return dist(r).At(q) }
}

// PerUserThroughput is the output rate one stream (one user) received at a
// level, in tokens per second:
//
//	output_tokens_mean / (latency_ms.mean / 1000)
//
// Both means are taken over the same successful requests, so the ratio is
// exactly Σ output tokens / Σ request seconds: the tokens a user got per
// second spent waiting, from sending the request to the end of its stream.
// It includes the wait for the first token (queueing and prefill), because a
// user waits through it too; the decode-only speed is what TPOT already
// shows. It also matches how output_throughput is defined (all tokens over
// wall time), so in the closed loop the two are tied by Little's law:
// output_throughput ≈ concurrency × per-user rate, a little less because
// slots sit idle between requests and as the level winds down — which is
// what makes the per-user versus total curve an honest trade-off. 1000 / tpot_ms.mean is not used: it leaves out
// the time to first token and rests on a different sample (requests with
// at least two tokens).
//
// ok is false when the record lacks either mean or its mean latency is not
// positive (no successes).
func PerUserThroughput(r results.Run) (float64, bool) {
	m := r.Metrics
	if m.OutputTokensMean == nil || m.LatencyMs == nil || m.LatencyMs.N < 1 || !(m.LatencyMs.Mean > 0) {
		return 0, false
	}
	v := *m.OutputTokensMean / (m.LatencyMs.Mean / 1000)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// TradeOffPoint is one level on the per-user versus total throughput curve.
type TradeOffPoint struct {
	Concurrency int
	Total       float64 // output_throughput, tokens/s over all streams
	PerUser     float64 // PerUserThroughput
}

// TradeOff returns a file's points for the per-user versus total throughput
// curve, by ascending concurrency. Levels missing either number are left out
// rather than drawn at zero.
func TradeOff(f *results.File) []TradeOffPoint {
	if f == nil {
		return nil
	}
	var pts []TradeOffPoint
	for _, r := range sortedRuns(f) {
		if len(pts) > 0 && pts[len(pts)-1].Concurrency == r.Concurrency {
			continue // a repeated level: the first record stands, as in Table
		}
		total, ok1 := outputThroughput(r)
		per, ok2 := PerUserThroughput(r)
		if ok1 && ok2 {
			pts = append(pts, TradeOffPoint{Concurrency: r.Concurrency, Total: total, PerUser: per})
		}
	}
	return pts
}

// SameWithin is the relative change below which two values count as the
// same: noise between runs is larger than this.
const SameWithin = 0.005

// Row is one metric at one concurrency level across every run compared.
type Row struct {
	Concurrency int
	// Shared is true when every run has a record at this level; rows of
	// levels only some runs have are kept, with gaps, and say so here.
	Shared bool
	Metric Metric
	Cells  []Cell // one per file, in the order given
}

// Cell is one run's value in a Row.
type Cell struct {
	Label   string // the run's label: labels[i], or "run i+1" when none is given
	Value   float64
	Present bool // false: a gap (no record at this level, or the value is missing); Value is then 0 and means nothing
	// Delta is the relative change against the first run's value: +0.12
	// means 12 % more. HasDelta is false for the first run itself, when
	// either value is missing, and when the first run's value is zero.
	Delta    float64
	HasDelta bool
	// Better is +1 when this value is better than the first run's for the
	// metric's direction, -1 when worse, and 0 when the same or when it
	// cannot be told (either value missing), and always 0 for a Neutral
	// metric. In a comparison of Kovara runs (Table, Compared) only a
	// change the verdict calls (BeyondNoise) is better or worse: it is
	// what the table colours, so a difference no sentence names (within
	// noise, not judged, without raw samples or without an interval) is
	// 0. In the other plans' tables any change of SameWithin or more is;
	// against a zero first value there is no Delta, but Better still
	// follows the direction there: 0 → 3 % errors is worse.
	Better int
	// Noise says whether the change against the first run stands out of
	// the runs' noise, judged from both runs' raw samples (noise.go);
	// NoiseUnknown where it could not be judged.
	Noise Noise
	// Low and High bound the relative change (as Delta) where Noise is
	// judged: the interval holds the true change with 95 % confidence for
	// the whole table at once (docs/method.md).
	Low, High float64
}

// Table lays the runs out for a side-by-side view: one row per concurrency
// level that any file has (ascending) and per metric of Metrics (in table
// order), each with one cell per file. labels name the files' columns; a
// missing or blank label becomes "run N". Every level × metric row is
// present even when all its cells are gaps, so the shape is predictable. A
// file with two records at one level uses the first.
//
// Where both runs have raw samples at a level, each change of a metric
// with an interval is judged against noise (Noise, Low, High) and only a
// change beyond noise is better or worse.
func Table(files []*results.File, labels []string) []Row {
	rows, _ := table(files, labels)
	return rows
}

// table is Table, with what the noise judgement found for the verdict's
// words.
func table(files []*results.File, labels []string) ([]Row, noiseReport) {
	names := runNamesOf(len(files), labels)
	byLevel := make([]map[int]results.Run, len(files))
	for i, f := range files {
		byLevel[i] = map[int]results.Run{}
		if f == nil {
			continue
		}
		for _, r := range f.Runs {
			if _, dup := byLevel[i][r.Concurrency]; !dup {
				byLevel[i][r.Concurrency] = r
			}
		}
	}

	metrics := Metrics
	if slices.ContainsFunc(files, func(f *results.File) bool { return f != nil && f.Local.Telemetry != nil }) {
		metrics = append(slices.Clone(metrics), EnergyMetrics...)
	}
	if slices.ContainsFunc(files, func(f *results.File) bool { return f != nil && f.Local.Wall != nil }) {
		metrics = append(slices.Clone(metrics), WallMetrics...)
	}
	if sameSLO(files) {
		metrics = append(append([]Metric(nil), metrics...), GoodputMetrics...)
	}
	var rows []Row
	for _, c := range unionLevels(files) {
		shared := true
		for i := range files {
			if _, ok := byLevel[i][c]; !ok {
				shared = false
			}
		}
		for _, m := range metrics {
			cells := row(names, m.Dir, func(i int) (float64, bool) {
				r, ok := byLevel[i][c]
				switch {
				case !ok:
					return 0, false
				case m.GetLocal != nil:
					return m.GetLocal(files[i], r)
				}
				return m.Get(r)
			})
			rows = append(rows, Row{Concurrency: c, Shared: shared, Metric: m, Cells: cells})
		}
	}
	return rows, judgeNoise(rows, files)
}

// row is one metric's cells, one per run named in names: value(i) gives
// run i's value, ok false for a gap (as is a value that is not a finite
// number); each cell after the first is compared with the first.
func row(names []string, dir Direction, value func(i int) (float64, bool)) []Cell {
	cells := make([]Cell, len(names))
	for i := range cells {
		cells[i].Label = names[i]
		if v, ok := value(i); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
			cells[i].Value, cells[i].Present = v, true
		}
	}
	compareCells(cells, dir)
	return cells
}

// runNamesOf is each run's name: its label, else "run i+1".
func runNamesOf(n int, labels []string) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = runName(i)
		if i < len(labels) && labels[i] != "" {
			names[i] = labels[i]
		}
	}
	return names
}

// compareCells fills Delta, HasDelta and Better of every cell after the
// first against the first.
func compareCells(cells []Cell, dir Direction) {
	if len(cells) == 0 || !cells[0].Present {
		return
	}
	base := cells[0].Value
	for i := 1; i < len(cells); i++ {
		c := &cells[i]
		if !c.Present {
			continue
		}
		if base == 0 {
			// No relative change from zero; the direction still tells
			// which side of zero is better (0 → 3 % errors is worse).
			c.Better = better(dir, sign(c.Value))
			continue
		}
		c.Delta = (c.Value - base) / math.Abs(base)
		c.HasDelta = true
		if math.Abs(c.Delta) >= SameWithin {
			c.Better = better(dir, sign(c.Delta))
		}
	}
}

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

func better(dir Direction, change int) int {
	switch dir {
	case HigherBetter:
		return change
	case LowerBetter:
		return -change
	}
	return 0
}
