package hw

import (
	"math"
	"slices"
	"time"

	"github.com/kovara/desktop/telemetry"
)

// LevelWindow marks one level for NewTelemetry: when it started and ended
// (time.Now() readings, which carry the monotonic clock) and how many
// output tokens its successful requests produced.
type LevelWindow struct {
	// Key is the window's key in Telemetry.Levels: a level's concurrency,
	// or, where one plan measures the same concurrency twice (the
	// three-stage plan's decode and prefill stages, both one user), the
	// stage's number. 0 means Concurrency.
	Key          int
	Concurrency  int
	Start, End   time.Time
	OutputTokens int64
}

// NewTelemetry assembles local.telemetry after the run. inventory may be
// nil (it failed: put its error in warnings); s may be nil (sampling never
// started). warnings come first, then the sampler's; duplicates are dropped.
// Call it after s.Stop() so that the series and warnings are final.
func NewTelemetry(src Source, inventory []telemetry.GPU, s *Sampler, levels []LevelWindow, warnings ...string) telemetry.Telemetry {
	t := telemetry.Telemetry{Inventory: inventory, Levels: map[int]telemetry.LevelTelemetry{}, Warnings: []string{}}
	if t.Inventory == nil {
		t.Inventory = []telemetry.GPU{}
	}
	if src != nil {
		t.Source, t.Host, t.GPUs = src.Kind(), src.Host(), src.GPUs()
	}
	all := slices.Clone(warnings)
	if s != nil {
		all = append(all, s.Warnings()...)
	}
	for _, w := range all {
		if w != "" && !slices.Contains(t.Warnings, w) {
			t.Warnings = append(t.Warnings, w)
		}
	}
	if s == nil {
		t.Series = NewSeries(nil, time.Second)
		t.Series.BucketS = 0
		return t
	}
	t.IntervalMS = s.Interval().Milliseconds()
	samples := s.Samples()
	host := s.hostReadings()
	t.HostMemory = hostMemory(host)
	t.GPUProcesses = s.gpuProcesses()
	for _, lv := range levels {
		le := Energy(samples, s.Offset(lv.Start), s.Offset(lv.End), nil)
		clockShares(&le, inventory)
		lt := telemetry.LevelTelemetry{Concurrency: lv.Concurrency, LevelEnergy: le, OutputTokens: lv.OutputTokens,
			Host: hostLevel(host, s.Offset(lv.Start), s.Offset(lv.End), hangIntervals*s.Interval())}
		if v := le.TokensPerJoule(lv.OutputTokens); v > 0 {
			lt.TokensPerJoule = &v
		}
		if v := le.JoulesPerToken(lv.OutputTokens); v > 0 {
			lt.JoulesPerToken = &v
		}
		key := lv.Key
		if key == 0 {
			key = lv.Concurrency
		}
		t.Levels[key] = lt
	}
	var span time.Duration
	if n := len(samples); n > 0 {
		span = samples[n-1].T - samples[0].T
	}
	bucket := max(time.Second, s.Interval(), span/maxSeriesPoints)
	t.Series = NewSeries(samples, bucket)
	return t
}

// maxSeriesPoints bounds the stored series: past an hour at 1 s the
// buckets widen.
const maxSeriesPoints = 3600

// NewSeries averages ticks into buckets of the given width (at least one
// interval; 1 s gives at most one point a second).
func NewSeries(samples []Sample, bucket time.Duration) telemetry.Series {
	if bucket <= 0 {
		bucket = time.Second
	}
	out := telemetry.Series{BucketS: bucket.Seconds(), TS: []float64{}, PowerW: []*float64{}, UtilPct: []*float64{},
		MemUsedMiB: []*float64{}, TempC: []*float64{}, SMClockMHz: []*float64{}}
	points := ticksOf(samples)
	for i := 0; i < len(points); {
		b := points[i].T / bucket
		j := i
		for j < len(points) && points[j].T/bucket == b {
			j++
		}
		group := points[i:j]
		var tsum float64
		for _, p := range group {
			tsum += p.T.Seconds()
		}
		out.TS = append(out.TS, roundTo(tsum/float64(len(group)), 3))
		out.PowerW = append(out.PowerW, meanOf(group, func(p Point) *float64 { return p.PowerW }, 2))
		out.UtilPct = append(out.UtilPct, meanOf(group, func(p Point) *float64 { return p.UtilPct }, 1))
		out.MemUsedMiB = append(out.MemUsedMiB, meanOf(group, func(p Point) *float64 { return p.MemUsedMiB }, 0))
		out.TempC = append(out.TempC, meanOf(group, func(p Point) *float64 { return p.TempC }, 1))
		out.SMClockMHz = append(out.SMClockMHz, meanOf(group, func(p Point) *float64 { return p.SMClockMHz }, 0))
		i = j
	}
	return out
}

// ticksOf groups samples by their shared T, in time order.
func ticksOf(samples []Sample) []Point {
	sorted := slices.Clone(samples)
	slices.SortStableFunc(sorted, func(a, b Sample) int {
		switch {
		case a.T < b.T:
			return -1
		case a.T > b.T:
			return 1
		}
		return 0
	})
	var out []Point
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j].T == sorted[i].T {
			j++
		}
		out = append(out, pointOf(sorted[i].T, sorted[i:j]))
		i = j
	}
	return out
}

func meanOf(group []Point, get func(Point) *float64, decimals int) *float64 {
	var sum float64
	n := 0
	for _, p := range group {
		if v := get(p); v != nil {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	v := roundTo(sum/float64(n), decimals)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
