package chart

import (
	"math"
	"strings"
	"unicode"

	"github.com/kovara/desktop/engine/results"
)

// What a Kovara result shows as charts, defined once for the app's result
// view and the CLI's --png: the finished levels only (an interrupted level
// is in the table, never on a curve).

// NoCurve is said instead of a result's chart when the run finished fewer
// than two levels.
const NoCurve = "Fewer than two finished levels: no curve to draw."

// ResultCharts are a Kovara result's charts, in the order the app shows
// them: throughput, then time to first token. Each is subtitled with the
// run's model and engine (RunOf; the app adds its label to the PNG it
// saves).
func ResultCharts(f *results.File, p Palette) []Spec {
	return []Spec{Throughput(f, p), TTFT(f, p)}
}

// Throughput is the output throughput of every finished level against its
// concurrency.
func Throughput(f *results.File, p Palette) Spec {
	x := levels(f)
	y := make([]float64, 0, len(f.Runs))
	for _, r := range f.Runs {
		y = append(y, r.Metrics.OutputThroughput)
	}
	return Spec{
		Title: "Output throughput by concurrency", Subtitle: RunOf(f, ""), XLabel: "concurrent streams", YLabel: "tok/s",
		YFromZero: true, XLog: true, XTicks: x, Palette: p,
		Series: []Series{{Name: "output tok/s", X: x, Y: y, Kind: Line}},
	}
}

// TTFT is the time to first token's p50, p95 and p99 of every finished
// level against its concurrency. A percentile the level's sample is too
// small for is a gap in its line, never a made-up tail.
func TTFT(f *results.File, p Palette) Spec {
	x := levels(f)
	var ys [3][]float64
	for _, r := range f.Runs {
		for i, q := range []int{50, 95, 99} {
			v, ok := r.Metrics.TTFTMs.At(q)
			if !ok {
				v = math.NaN()
			}
			ys[i] = append(ys[i], v)
		}
	}
	return Spec{
		Title: "Time to first token by concurrency", Subtitle: RunOf(f, ""), XLabel: "concurrent streams", YLabel: "ms",
		YFromZero: true, XLog: true, XTicks: x, Palette: p,
		Series: []Series{
			{Name: "p50", X: x, Y: ys[0], Kind: Line},
			{Name: "p95", X: x, Y: ys[1], Kind: Line, Color: 1},
			{Name: "p99", X: x, Y: ys[2], Kind: Line, Color: 3},
		},
	}
}

// levels are the finished levels' concurrencies: the x of every point and
// the labelled ticks.
func levels(f *results.File) []float64 {
	x := make([]float64, 0, len(f.Runs))
	for _, r := range f.Runs {
		x = append(x, float64(r.Concurrency))
	}
	return x
}

// FileName is a chart's title as a PNG file name: lower case, every run of
// other characters than letters and digits one dash. The app's Save PNG
// offers it; the CLI's --png writes it.
func FileName(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-") + ".png"
}
