package chart

import (
	"errors"
	"image/color"
	"math"
	"slices"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// resultFile is a Kovara result of three finished levels and an
// interrupted fourth; the first level's sample is too small for a p95 or a
// p99, the second's for a p99.
func resultFile() *results.File {
	f := &results.File{}
	p := func(v float64) *float64 { return &v }
	for _, l := range []struct {
		conc     int
		tps      float64
		ttft     results.Dist
		requests int
	}{
		{1, 41.5, results.Dist{N: 10, P50: 120}, 10},
		{8, 290, results.Dist{N: 50, P50: 180, P95: p(260)}, 50},
		{32, 805.25, results.Dist{N: 200, P50: 410, P95: p(700), P99: p(950)}, 200},
	} {
		ttft := l.ttft
		f.Runs = append(f.Runs, results.Run{Concurrency: l.conc, Requests: l.requests,
			Metrics: results.Metrics{RequestsOK: l.requests, OutputThroughput: l.tps, TTFTMs: &ttft}})
	}
	f.Local.PartialRun = &results.Run{Concurrency: 128, Metrics: results.Metrics{OutputThroughput: 9999,
		TTFTMs: &results.Dist{N: 3, P50: 9999}}}
	return f
}

func sameFloats(a, b []float64) bool { return slices.EqualFunc(a, b, sameFloat) }

func TestResultChartsPlotTheFinishedLevels(t *testing.T) {
	t.Parallel()
	f := resultFile()
	nan := math.NaN()
	levels := []float64{1, 8, 32}

	tps := Throughput(f, testDark)
	if got, want := tps.Title, "Output throughput by concurrency"; got != want {
		t.Errorf("throughput title %q, want %q", got, want)
	}
	if len(tps.Series) != 1 {
		t.Fatalf("throughput: %d series, want 1", len(tps.Series))
	}
	if s := tps.Series[0]; !slices.Equal(s.X, levels) || !slices.Equal(s.Y, []float64{41.5, 290, 805.25}) {
		t.Errorf("throughput points x %v y %v, want x %v y [41.5 290 805.25] (the interrupted level left out)", s.X, s.Y, levels)
	}

	ttft := TTFT(f, testDark)
	if got, want := ttft.Title, "Time to first token by concurrency"; got != want {
		t.Errorf("TTFT title %q, want %q", got, want)
	}
	want := []struct {
		name string
		y    []float64
	}{
		{"p50", []float64{120, 180, 410}},
		{"p95", []float64{nan, 260, 700}},
		{"p99", []float64{nan, nan, 950}},
	}
	if len(ttft.Series) != len(want) {
		t.Fatalf("TTFT: %d series, want %d", len(ttft.Series), len(want))
	}
	colours := map[int]bool{}
	for i, w := range want {
		s := ttft.Series[i]
		if s.Name != w.name || !slices.Equal(s.X, levels) || !sameFloats(s.Y, w.y) {
			t.Errorf("TTFT series %d: %q x %v y %v, want %q x %v y %v (a missing tail is a gap)", i, s.Name, s.X, s.Y, w.name, levels, w.y)
		}
		colours[s.Color] = true
	}
	if len(colours) != len(want) {
		t.Errorf("TTFT percentiles share colours: %v", colours)
	}

	for _, spec := range []Spec{tps, ttft} {
		if !slices.Equal(spec.XTicks, levels) || !spec.XLog || !spec.YFromZero {
			t.Errorf("%s: ticks %v, log x %v, y from zero %v; want the levels on a log axis from zero", spec.Title, spec.XTicks, spec.XLog, spec.YFromZero)
		}
		if !sameRGB(spec.Palette.Background, testDark.Background) {
			t.Errorf("%s: palette not the one given", spec.Title)
		}
		if _, err := Render(spec); err != nil {
			t.Errorf("%s: %v", spec.Title, err)
		}
	}

	all := ResultCharts(f, testDark)
	var titles []string
	for _, s := range all {
		titles = append(titles, s.Title)
	}
	if want := []string{tps.Title, ttft.Title}; !slices.Equal(titles, want) {
		t.Errorf("ResultCharts %q, want %q", titles, want)
	}
}

// One finished level has no curve: the charts refuse, and the app and
// the CLI say NoCurve instead.
func TestResultChartsOfOneLevel(t *testing.T) {
	t.Parallel()
	f := resultFile()
	f.Runs = f.Runs[:1]
	for _, spec := range ResultCharts(f, Light()) {
		if _, err := Render(spec); !errors.Is(err, ErrTooFewPoints) {
			t.Errorf("%s of one level: err = %v, want ErrTooFewPoints", spec.Title, err)
		}
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ title, want string }{
		{"Output throughput by concurrency", "output-throughput-by-concurrency.png"},
		{"Time to first token (p50 line, p95 dots)", "time-to-first-token-p50-line-p95-dots.png"},
		{"  GPU power — all GPUs!", "gpu-power-all-gpus.png"},
		{"Débit / utilisateur", "débit-utilisateur.png"},
		{"../../etc/passwd", "etc-passwd.png"},
	} {
		if got := FileName(tc.title); got != tc.want {
			t.Errorf("FileName(%q) = %q, want %q", tc.title, got, tc.want)
		}
	}
}

func TestPalettes(t *testing.T) {
	t.Parallel()
	bg := color.NRGBA{R: 0x10, G: 0x20, B: 0x30, A: 0xFF}
	fg := color.NRGBA{R: 0xF0, G: 0xE0, B: 0xD0, A: 0xFF}
	p := NewPalette(bg, fg)
	if !sameRGB(p.Background, bg) || !sameRGB(p.Foreground, fg) {
		t.Errorf("background %v, foreground %v; want the ones given", p.Background, p.Foreground)
	}
	if sameRGB(p.Grid, bg) || sameRGB(p.Grid, fg) || !nearRGB(p.Grid, bg, 0x30) {
		t.Errorf("grid %v: want a faint mix, close to the background %v", p.Grid, bg)
	}
	if len(p.Series) != len(seriesColors) {
		t.Errorf("%d series colours, want %d", len(p.Series), len(seriesColors))
	}

	// A spec without a palette is drawn in Light's colours.
	light := Light()
	if !sameRGB(light.Background, color.White) {
		t.Errorf("Light background %v, want white", light.Background)
	}
	two := []Series{{X: []float64{0, 1}, Y: []float64{1, 2}}}
	plain, err := Render(Spec{Series: two, Width: 320, Height: 200})
	if err != nil {
		t.Fatal(err)
	}
	lit, err := Render(Spec{Series: two, Width: 320, Height: 200, Palette: light})
	if err != nil {
		t.Fatal(err)
	}
	if string(plain.Pix) != string(lit.Pix) {
		t.Error("a spec without a palette differs from one in Light")
	}
}
