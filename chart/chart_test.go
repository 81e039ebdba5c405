package chart

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// -update rewrites the golden images in testdata/charts instead of comparing
// against them.
var updateGolden = flag.Bool("update", false, "rewrite the golden images under testdata/charts")

// Palettes with the app's dark and light colours (Fyne's default theme),
// spelled out: this package knows nothing of Fyne.
var (
	testDark = Palette{
		Background: color.NRGBA{R: 0x17, G: 0x17, B: 0x18, A: 0xFF},
		Foreground: color.NRGBA{R: 0xF3, G: 0xF3, B: 0xF3, A: 0xFF},
		Grid:       color.NRGBA{R: 0x3A, G: 0x3A, B: 0x3B, A: 0xFF},
		Series:     paletteColors(),
	}
	testLight = Palette{
		Background: color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xFF},
		Foreground: color.NRGBA{R: 0x56, G: 0x56, B: 0x56, A: 0xFF},
		Grid:       color.NRGBA{R: 0xE7, G: 0xE7, B: 0xE7, A: 0xFF},
		Series:     paletteColors(),
	}
)

func paletteColors() []color.Color {
	out := make([]color.Color, len(seriesColors))
	for i, c := range seriesColors {
		out[i] = c
	}
	return out
}

func seq(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func rgbaAt(img *image.RGBA, x, y int) color.NRGBA {
	return color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
}

func sameRGB(a color.Color, b color.Color) bool {
	na := color.NRGBAModel.Convert(a).(color.NRGBA)
	nb := color.NRGBAModel.Convert(b).(color.NRGBA)
	return na.R == nb.R && na.G == nb.G && na.B == nb.B
}

func nearRGB(a, b color.Color, tol int) bool {
	na := color.NRGBAModel.Convert(a).(color.NRGBA)
	nb := color.NRGBAModel.Convert(b).(color.NRGBA)
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(na.R, nb.R) <= tol && d(na.G, nb.G) <= tol && d(na.B, nb.B) <= tol
}

func countNear(img *image.RGBA, c color.Color, tol int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if nearRGB(img.At(x, y), c, tol) {
				n++
			}
		}
	}
	return n
}

func TestRenderChartRefusesTooFewPoints(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	cases := []struct {
		name   string
		series []Series
		xlog   bool
	}{
		{"no series", nil, false},
		{"empty series", []Series{{Name: "a"}}, false},
		{"one point", []Series{{X: []float64{1}, Y: []float64{2}}}, false},
		{"one point per series", []Series{
			{X: []float64{1}, Y: []float64{2}},
			{X: []float64{2}, Y: []float64{3}, Kind: Scatter},
		}, false},
		{"second point is a gap", []Series{{X: []float64{1, 2}, Y: []float64{5, nan}}}, false},
		{"infinite y", []Series{{X: []float64{1, 2}, Y: []float64{5, math.Inf(1)}}}, false},
		{"x without y", []Series{{X: []float64{1, 2, 3}, Y: []float64{4}}}, false},
		{"one bar", []Series{{X: []float64{8}, Y: []float64{100}, Kind: Bars}}, false},
		{"bars with a gap", []Series{{X: []float64{1, 8}, Y: []float64{100, nan}, Kind: Bars}}, false},
		{"non-positive x on log axis", []Series{{X: []float64{0, 4}, Y: []float64{1, 2}}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img, err := Render(Spec{Series: tc.series, XLog: tc.xlog, Width: 320, Height: 200, Palette: testLight})
			if !errors.Is(err, ErrTooFewPoints) {
				t.Fatalf("err = %v, want ErrTooFewPoints", err)
			}
			if img != nil {
				t.Fatal("got an image along with the error")
			}
		})
	}
}

func TestRenderChartDrawsTwoPoints(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec Spec
	}{
		{"line", Spec{Series: []Series{{X: []float64{0, 1}, Y: []float64{3, 7}}}}},
		{"scatter", Spec{Series: []Series{{X: []float64{0, 1}, Y: []float64{3, 7}, Kind: Scatter}}}},
		{"bars", Spec{Series: []Series{{X: []float64{1, 8}, Y: []float64{3, 7}, Kind: Bars}}}},
		{"same x twice", Spec{Series: []Series{{X: []float64{5, 5}, Y: []float64{3, 7}}}}},
		{"flat y", Spec{Series: []Series{{X: []float64{0, 1}, Y: []float64{4, 4}}}}},
		{"all zero", Spec{Series: []Series{{X: []float64{0, 1}, Y: []float64{0, 0}}}, YFromZero: true}},
		{"negative", Spec{Series: []Series{{X: []float64{-3, -1}, Y: []float64{-7, -2}}}}},
		{"log x", Spec{Series: []Series{{X: []float64{1, 256}, Y: []float64{10, 900}}}, XLog: true}},
		{"log x within one octave", Spec{Series: []Series{{X: []float64{5, 7}, Y: []float64{10, 900}}}, XLog: true}},
		{"log x bars", Spec{Series: []Series{{X: []float64{1, 8, 32}, Y: []float64{10, 90, 200}, Kind: Bars}}, XLog: true}},
		{"explicit ticks", Spec{Series: []Series{{X: []float64{1, 8}, Y: []float64{10, 90}}}, XTicks: []float64{1, 8, 32}}},
		{"one good series among empty ones", Spec{Series: []Series{
			{X: []float64{1}, Y: []float64{1}},
			{X: []float64{0, 1}, Y: []float64{3, 7}, Color: 2},
			{},
		}}},
		{"everything labelled, scaled", Spec{
			Title: "Title", XLabel: "x", YLabel: "y", Scale: 2,
			Series: []Series{{Name: "a", X: []float64{0, 1}, Y: []float64{3, 7}}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.spec.Width, tc.spec.Height, tc.spec.Palette = 400, 240, testLight
			img, err := Render(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := img.Bounds().Size(); got != image.Pt(400, 240) {
				t.Fatalf("size %v, want 400x240", got)
			}
			want := testLight.Series[0]
			for _, s := range tc.spec.Series {
				if len(s.X) >= 2 {
					want = testLight.Series[s.Color]
				}
			}
			if n := countNear(img, want, 10); n < 10 {
				t.Fatalf("only %d pixels in the series colour; nothing drawn?", n)
			}
		})
	}
}

func TestRenderChartDefaultsAndErrors(t *testing.T) {
	t.Parallel()
	two := []Series{{X: []float64{0, 1}, Y: []float64{1, 2}}}
	img, err := Render(Spec{Series: two})
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got != image.Pt(640, 360) {
		t.Errorf("default size %v, want 640x360", got)
	}
	if !sameRGB(img.At(0, 0), color.White) {
		t.Errorf("zero palette background %v, want white", img.At(0, 0))
	}
	if _, err := Render(Spec{Series: two, Width: 50, Height: 20}); err == nil || errors.Is(err, ErrTooFewPoints) {
		t.Errorf("tiny chart: err = %v, want a size error", err)
	}
}

// A NaN in a line is a hole: the pixels between the two sides stay background.
func TestRenderChartGapIsNotBridged(t *testing.T) {
	t.Parallel()
	red := color.NRGBA{R: 0xE0, G: 0x20, B: 0x20, A: 0xFF}
	pal := Palette{
		Background: color.NRGBA{R: 0x20, G: 0x20, B: 0x20, A: 0xFF},
		Foreground: color.NRGBA{R: 0xC0, G: 0xC0, B: 0xC0, A: 0xFF},
		Series:     []color.Color{red},
	}
	pal.Grid = pal.Background // no grid lines where we look
	x := seq(21, func(i int) float64 { return float64(i) })
	y := seq(21, func(i int) float64 { return 10 + 0.3*float64(i) })
	gapped := slices.Clone(y)
	for i := 8; i <= 12; i++ {
		gapped[i] = math.NaN()
	}

	render := func(y []float64) *image.RGBA {
		img, err := Render(Spec{Series: []Series{{X: x, Y: y}}, Width: 500, Height: 300, Palette: pal})
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	full, holed := render(y), render(gapped)

	// Columns holding series colour, in the gapped rendering.
	cols := make([]bool, 500)
	rowOf := make([]int, 500)
	for cx := range 500 {
		for cy := range 300 {
			if nearRGB(holed.At(cx, cy), red, 30) {
				cols[cx], rowOf[cx] = true, cy
				break
			}
		}
	}
	first, last := slices.Index(cols, true), -1
	for cx := range cols {
		if cols[cx] {
			last = cx
		}
	}
	if first < 0 {
		t.Fatal("series not drawn")
	}
	// Longest run of empty columns between the ends is the gap.
	bestStart, bestLen := 0, 0
	for cx := first; cx <= last; {
		if cols[cx] {
			cx++
			continue
		}
		start := cx
		for cx <= last && !cols[cx] {
			cx++
		}
		if cx-start > bestLen {
			bestStart, bestLen = start, cx-start
		}
	}
	// The hole spans 6 of 20 x units of a ~440 px wide plot: well over 60 px.
	if bestLen < 60 {
		t.Fatalf("gap is only %d px wide; the line is bridged", bestLen)
	}
	mid := bestStart + bestLen/2
	row := (rowOf[bestStart-1] + rowOf[bestStart+bestLen]) / 2
	if got := rgbaAt(holed, mid, row); !sameRGB(got, pal.Background) {
		t.Errorf("pixel at gap midpoint (%d,%d) = %v, want background", mid, row, got)
	}
	// Without the NaNs the same column is crossed by the line.
	crossed := false
	for cy := range 300 {
		if nearRGB(full.At(mid, cy), red, 30) {
			crossed = true
		}
	}
	if !crossed {
		t.Errorf("control: the unbroken line does not cross column %d", mid)
	}
}

func TestRenderChartUsesPaletteBackground(t *testing.T) {
	t.Parallel()
	spec := func(p Palette) Spec {
		return Spec{
			Title: "Output tokens/s", XLabel: "time (s)", YLabel: "tok/s",
			Series: []Series{
				{Name: "run A", X: seq(50, func(i int) float64 { return float64(i) }), Y: seq(50, func(i int) float64 { return 100 + float64(i%9) })},
				{Name: "run B", X: seq(50, func(i int) float64 { return float64(i) }), Y: seq(50, func(i int) float64 { return 80 + float64(i%5) }), Color: 1},
				{Name: "bars", X: []float64{10, 20, 30}, Y: []float64{50, 60, 70}, Kind: Bars, Color: 2},
			},
			Width: 600, Height: 320, Palette: p,
		}
	}
	cases := []struct {
		name string
		pal  Palette
	}{{"dark", testDark}, {"light", testLight}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			img, err := Render(spec(tc.pal))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []image.Point{{0, 0}, {599, 0}, {0, 319}, {599, 319}, {300, 2}} {
				if got := img.At(p.X, p.Y); !sameRGB(got, tc.pal.Background) {
					t.Errorf("pixel %v = %v, want background %v", p, got, tc.pal.Background)
				}
			}
			bg := countNear(img, tc.pal.Background, 0)
			if share := float64(bg) / (600 * 320); share < 0.6 {
				t.Errorf("only %.0f%% of pixels are background", share*100)
			}
			if tc.name == "dark" {
				// go-chart's defaults are white boxes and #333 text; none may leak.
				if n := countNear(img, color.White, 8); n > 0 {
					t.Errorf("%d near-white pixels on the dark palette (foreground is #f3f3f3 at most)", n)
				}
			}
		})
	}
}

// Charts drawn on several goroutines at once are the pictures each spec
// draws alone: the renderers share nothing (the font is loaded once). Each
// picture holds its own line, in its own colour, so two blank pictures
// cannot pass for equal ones.
func TestRenderChartConcurrently(t *testing.T) {
	t.Parallel()
	spec := func(g int) Spec {
		return Spec{
			Title:   fmt.Sprint("chart ", g),
			Series:  []Series{{X: []float64{0, 1, 2}, Y: []float64{1, float64(g), 2}, Color: g}},
			Width:   320,
			Height:  200,
			Palette: testLight,
		}
	}
	var wg sync.WaitGroup
	imgs := make([]*image.RGBA, 8)
	errs := make([]error, len(imgs))
	for g := range imgs {
		wg.Go(func() { imgs[g], errs[g] = Render(spec(g)) })
	}
	wg.Wait()
	for g := range imgs {
		if errs[g] != nil {
			t.Errorf("goroutine %d: %v", g, errs[g])
			continue
		}
		alone, err := Render(spec(g))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(imgs[g].Pix, alone.Pix) {
			t.Errorf("goroutine %d: the chart differs from the same spec drawn alone", g)
		}
		if n := countNear(imgs[g], testLight.Series[g], 10); n < 10 {
			t.Errorf("goroutine %d: only %d pixels in its series colour; nothing drawn?", g, n)
		}
	}
}

func TestRenderChartThinsLongSeries(t *testing.T) {
	t.Parallel()
	n := 200_000
	x := seq(n, func(i int) float64 { return float64(i) })
	y := seq(n, func(i int) float64 { return math.Sin(float64(i) / 1000) })
	y[123_456] = 50 // a spike must survive thinning and set the y range
	series, _ := cleanSeries(Spec{Series: []Series{{X: x, Y: y}}}, 640, resolvePalette(Palette{}))
	if got := len(series[0].x); got > 640 {
		t.Fatalf("series kept %d points for a 640 px chart", got)
	}
	if !slices.Contains(series[0].y, 50) {
		t.Fatal("spike lost in thinning")
	}
	if _, err := Render(Spec{Series: []Series{{X: x, Y: y}}, Width: 640, Height: 360}); err != nil {
		t.Fatal(err)
	}
}

func TestThin(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	ramp := func(n int) ([]float64, []float64) {
		return seq(n, func(i int) float64 { return float64(i) }),
			seq(n, func(i int) float64 { return math.Sin(float64(i) / 7) })
	}
	withSpikes := func(n int) ([]float64, []float64) {
		x, y := ramp(n)
		y[n/3] = 100   // spike
		y[2*n/3] = -90 // dip
		return x, y
	}
	withGaps := func(n int) ([]float64, []float64) {
		x, y := ramp(n)
		for i := n / 4; i < n/4+50; i++ {
			y[i] = nan
		}
		y[n/2] = nan // a single missing sample
		y[n/2+1] = math.Inf(1)
		return x, y
	}
	edgesAreGaps := func(n int) ([]float64, []float64) {
		x, y := ramp(n)
		y[0], y[1], y[n-2], y[n-1] = nan, nan, nan, nan
		return x, y
	}
	cases := []struct {
		name string
		data func(int) ([]float64, []float64)
		n    int
		max  int
	}{
		{"short series untouched", ramp, 10, 20},
		{"exactly max", ramp, 20, 20},
		{"spikes", withSpikes, 10_000, 100},
		{"odd max", withSpikes, 9_999, 101},
		{"gaps", withGaps, 10_000, 100},
		{"gap at both ends", edgesAreGaps, 5_000, 64},
		{"tiny max", withGaps, 1_000, 1},
		{"max of four", withGaps, 1_000, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x, y := tc.data(tc.n)
			ox, oy := Thin(x, y, tc.max)
			limit := max(tc.max, 3)
			if len(ox) != len(oy) {
				t.Fatalf("x and y lengths differ: %d, %d", len(ox), len(oy))
			}
			if len(ox) > limit {
				t.Fatalf("%d points, want at most %d", len(ox), limit)
			}
			if tc.n <= tc.max {
				if !slices.Equal(ox, x) || !slices.EqualFunc(oy, y, sameFloat) {
					t.Fatal("short series changed")
				}
				ox[0] = -1
				if x[0] == -1 {
					t.Fatal("short series not copied")
				}
				return
			}
			if ox[0] != x[0] || !sameFloat(oy[0], y[0]) || ox[len(ox)-1] != x[len(x)-1] || !sameFloat(oy[len(oy)-1], y[len(y)-1]) {
				t.Fatal("first or last point not kept")
			}
			if tc.max >= 100 {
				for _, extreme := range []float64{100, -90} {
					if slices.Contains(y, extreme) && !slices.Contains(oy, extreme) {
						t.Errorf("extreme %v lost", extreme)
					}
				}
			}
			// x is the original index: no two consecutive finite output
			// points may have a gap between them in the input.
			for k := 1; k < len(ox); k++ {
				if !slices.IsSorted(ox[:k+1]) {
					t.Fatal("output not in input order")
				}
				if isGap(oy[k-1]) || isGap(oy[k]) {
					continue
				}
				for i := int(ox[k-1]) + 1; i < int(ox[k]); i++ {
					if isGap(y[i]) {
						t.Fatalf("points %v and %v joined across the gap at %d", ox[k-1], ox[k], i)
					}
				}
			}
			if slices.ContainsFunc(y, isGap) && !slices.ContainsFunc(oy, isGap) {
				t.Error("gaps vanished")
			}
		})
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func TestHistogram(t *testing.T) {
	t.Parallel()
	uniform := func(n int, lo, hi float64) []float64 {
		return seq(n, func(i int) float64 { return lo + (hi-lo)*float64(i)/float64(n-1) })
	}
	cases := []struct {
		name       string
		values     []float64
		bins       int
		wantTotal  float64
		maxRegular float64 // highest centre of the regular bins must stay below
		overflow   bool    // the last bin holds the outlier(s)
	}{
		{"plain", uniform(1000, 10, 20), 10, 1000, 20, false},
		{"one far outlier", append(uniform(1000, 10, 20), 10_000), 20, 1001, 20, true},
		{"outlier in a small sample", append(uniform(20, 10, 20), 5_000), 8, 21, 20, true},
		{"NaN and Inf ignored", append(uniform(100, 1, 2), math.NaN(), math.Inf(1), math.Inf(-1)), 5, 100, 2, false},
		{"all equal", []float64{7, 7, 7, 7}, 5, 4, 8, false},
		{"single bin", []float64{1, 2, 3, 100}, 1, 4, 101, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			centers, counts := Histogram(tc.values, tc.bins)
			if len(centers) != tc.bins || len(counts) != tc.bins {
				t.Fatalf("%d centres, %d counts; want %d bins", len(centers), len(counts), tc.bins)
			}
			total := 0.0
			for _, c := range counts {
				total += c
			}
			if total != tc.wantTotal {
				t.Errorf("counts add up to %v, want %v", total, tc.wantTotal)
			}
			if !slices.IsSorted(centers) {
				t.Errorf("centres not ascending: %v", centers)
			}
			regular := centers
			if tc.overflow {
				regular = centers[:len(centers)-1]
				if counts[len(counts)-1] < 1 || counts[len(counts)-1] > tc.wantTotal*0.01+1 {
					t.Errorf("overflow bin holds %v values", counts[len(counts)-1])
				}
				// The overflow bar sits right after the regular ones, not out at the outlier.
				if step := regular[1] - regular[0]; math.Abs(centers[len(centers)-1]-regular[len(regular)-1]-step) > step*1e-9 {
					t.Errorf("overflow bin at %v, want one step after %v", centers[len(centers)-1], regular[len(regular)-1])
				}
			}
			if top := regular[len(regular)-1]; top > tc.maxRegular {
				t.Errorf("regular bins reach %v; the range was stretched", top)
			}
		})
	}
	if c, n := Histogram([]float64{math.NaN()}, 10); c != nil || n != nil {
		t.Error("no finite values should give nil slices")
	}
}

func TestEncodePNGRoundTrip(t *testing.T) {
	t.Parallel()
	img, err := Render(Spec{
		Title:   "round trip",
		Series:  []Series{{X: []float64{0, 1, 2}, Y: []float64{1, 3, 2}}},
		Width:   320,
		Height:  200,
		Palette: testDark,
	})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := EncodePNG(img, &buf); err != nil {
		t.Fatal(err)
	}
	back, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Bounds() != img.Bounds() {
		t.Fatalf("bounds %v, want %v", back.Bounds(), img.Bounds())
	}
	for y := 0; y < 200; y++ {
		for x := 0; x < 320; x++ {
			if !sameRGB(back.At(x, y), img.At(x, y)) {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, back.At(x, y), img.At(x, y))
			}
		}
	}
	if err := EncodePNG(nil, &buf); err == nil {
		t.Error("EncodePNG(nil) succeeded")
	}
}

// goldenSpecs are the charts pinned under testdata/charts.
func goldenSpecs() map[string]Spec {
	tm := seq(240, func(i int) float64 { return float64(i) * 0.25 })
	runA := seq(240, func(i int) float64 {
		return 900 + 250*math.Sin(float64(i)/18) + 40*math.Sin(float64(i)*1.7)
	})
	runB := seq(240, func(i int) float64 { return 650 + 180*math.Cos(float64(i)/22) })
	for i := 100; i < 125; i++ {
		runB[i] = math.NaN() // telemetry dropped out
	}
	runA[170] = 1900 // one burst

	reqT := seq(120, func(i int) float64 { return 0.4*float64(i) + 0.13*float64(i%5) })
	ttft := seq(120, func(i int) float64 {
		return 180 + 6*float64(i%17) + 0.9*float64(i) + 40*math.Sin(float64(i)/9)
	})
	ttft[77] = 520

	levels := []float64{1, 8, 32, 128}
	return map[string]Spec{
		"line": {
			Title: "Output tokens per second", XLabel: "time (s)", YLabel: "tok/s",
			Series: []Series{
				{Name: "vLLM", X: tm, Y: runA},
				{Name: "llama-server", X: tm, Y: runB, Color: 1},
			},
			YFromZero: true, Width: 640, Height: 360, Palette: testDark,
		},
		"scatter": {
			Title: "Time to first token", XLabel: "request finished (s)", YLabel: "ms",
			Series:    []Series{{X: reqT, Y: ttft, Kind: Scatter, Color: 2}},
			YFromZero: true, Width: 640, Height: 360, Palette: testLight,
		},
		"bars": {
			Title: "Throughput vs concurrency", XLabel: "concurrent requests", YLabel: "output tok/s",
			Series: []Series{
				{Name: "run 1", X: levels, Y: []float64{82, 540, 1460, 2210}, Kind: Bars},
				{Name: "run 2", X: levels, Y: []float64{88, 575, 1530, 2390}, Kind: Bars, Color: 1},
			},
			XLog: true, XTicks: levels, Width: 640, Height: 360, Palette: testDark,
		},
	}
}

func TestRenderChartGolden(t *testing.T) {
	t.Parallel()
	for name, spec := range goldenSpecs() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			img, err := Render(spec)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "charts", name+".png"), img)
		})
	}
}

// checkGolden compares img with the PNG at path, or rewrites it under
// -update. Text may rasterise slightly differently across platforms, so the
// images are compared as averages of 4×4 blocks, and a few differing blocks
// are tolerated.
func checkGolden(t *testing.T, path string, img *image.RGBA) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := EncodePNG(img, &buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	want, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want.Bounds().Size() != img.Bounds().Size() {
		t.Fatalf("size %v, golden %v", img.Bounds().Size(), want.Bounds().Size())
	}
	const block, tol = 4, 16
	b := img.Bounds()
	blocks, bad := 0, 0
	for by := 0; by+block <= b.Dy(); by += block {
		for bx := 0; bx+block <= b.Dx(); bx += block {
			var got, exp [3]int
			for y := by; y < by+block; y++ {
				for x := bx; x < bx+block; x++ {
					g := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
					e := color.NRGBAModel.Convert(want.At(x+want.Bounds().Min.X, y+want.Bounds().Min.Y)).(color.NRGBA)
					got[0], got[1], got[2] = got[0]+int(g.R), got[1]+int(g.G), got[2]+int(g.B)
					exp[0], exp[1], exp[2] = exp[0]+int(e.R), exp[1]+int(e.G), exp[2]+int(e.B)
				}
			}
			blocks++
			for c := range 3 {
				if d := (got[c] - exp[c]) / (block * block); d > tol || d < -tol {
					bad++
					break
				}
			}
		}
	}
	if bad > blocks/200 {
		out := filepath.Join(t.TempDir(), filepath.Base(path))
		var buf bytes.Buffer
		_ = EncodePNG(img, &buf)
		_ = os.WriteFile(out, buf.Bytes(), 0o644)
		t.Errorf("%s: %d of %d blocks differ (allowed %d); got image kept at %s; run with -update if the change is intended",
			path, bad, blocks, blocks/200, out)
	}
}

func BenchmarkRenderChart(b *testing.B) {
	n := 3000
	tm := seq(n, func(i int) float64 { return float64(i) * 0.25 })
	a := seq(n, func(i int) float64 { return 1000 + 300*math.Sin(float64(i)/40) + float64(i%11)*9 })
	c := seq(n, func(i int) float64 { return 800 + 200*math.Cos(float64(i)/50) })
	for i := 1000; i < 1100; i++ {
		c[i] = math.NaN()
	}
	centers, counts := Histogram(seq(5000, func(i int) float64 { return 20 + float64(i%97)*0.3 }), 30)
	levels := []float64{1, 8, 32, 128}
	cases := []struct {
		name string
		spec Spec
	}{
		{"line-2x3000pts", Spec{
			Title: "Output tokens per second", XLabel: "time (s)", YLabel: "tok/s", YFromZero: true,
			Series: []Series{{Name: "A", X: tm, Y: a}, {Name: "B", X: tm, Y: c, Color: 1}},
		}},
		{"scatter-800pts", Spec{
			Title: "Time to first token", XLabel: "s", YLabel: "ms",
			Series: []Series{{X: tm[:800], Y: a[:800], Kind: Scatter}},
		}},
		{"bars-2x4", Spec{
			Title: "Throughput vs concurrency", XLabel: "concurrency", YLabel: "tok/s", XLog: true, XTicks: levels,
			Series: []Series{
				{Name: "run 1", X: levels, Y: []float64{80, 520, 1400, 2100}, Kind: Bars},
				{Name: "run 2", X: levels, Y: []float64{85, 560, 1500, 2300}, Kind: Bars, Color: 1},
			},
		}},
		{"histogram-30bins", Spec{
			Title: "Inter-token latency", XLabel: "ms", YLabel: "count",
			Series: []Series{{X: centers, Y: counts, Kind: Bars}},
		}},
	}
	for _, tc := range cases {
		tc.spec.Width, tc.spec.Height, tc.spec.Palette = 800, 400, testDark
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(tc.spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Request axes label whole requests only, and a live series of a few
// points keeps a steady scale instead of stretching over 0.3 seconds.
func TestXAxisIntegerTicksAndMinSpan(t *testing.T) {
	t.Parallel()
	measure := func(s string, _ float64) (int, int) { return 7 * len(s), 10 }
	for _, r := range []axisRange{{min: 1, max: 3}, {min: 1, max: 7}, {min: 1, max: 14}, {min: 1, max: 240}} {
		ticks := xAxisTicks(Spec{XInteger: true}, nil, r, 600, 1, 12, measure)
		labelled := 0
		for _, tk := range ticks {
			if tk.Label == "" {
				continue
			}
			labelled++
			if tk.Value != math.Trunc(tk.Value) {
				t.Errorf("range %v: tick %v (%q) is not a whole request", r, tk.Value, tk.Label)
			}
		}
		if labelled < 2 {
			t.Errorf("range %v: %d labelled ticks", r, labelled)
		}
	}
	series := []plotSeries{{x: []float64{20, 20.25, 20.5}, y: []float64{1, 2, 3}, kind: Line, points: 3}}
	if r := xAxisRange(Spec{XMinSpan: 10}, series); r.min != 20 || r.max != 30 {
		t.Errorf("min span 10 over 20…20.5: got %v…%v, want 20…30", r.min, r.max)
	}
	if r := xAxisRange(Spec{}, series); r.max != 20.5 {
		t.Errorf("without a min span the axis should end at the data: %v", r.max)
	}
}

func TestFormatNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"},
		{8, "8"},
		{2.5, "2.5"},
		{1024, "1024"},
		{16384, "16,384"},
		{131072, "131,072"},
		{12500, "12.5k"},
		{20000, "20k"},
		{-16384, "-16,384"},
		{12345678, "12,345,678"},
		{25e6, "25M"},
		{0.125, "0.125"},
	}
	for _, tt := range tests {
		if got := formatNumber(tt.v); got != tt.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestYAtLeast(t *testing.T) {
	t.Parallel()
	s := Spec{YFromZero: true, YAtLeast: 100, Series: []Series{{X: []float64{0, 1, 2}, Y: []float64{0.1, 0.3, 0.2}}}}
	ps, _ := cleanSeries(s, 640, Light())
	lo, hi := yExtent(s, ps)
	if lo != 0 || hi != 100 {
		t.Errorf("y axis %v–%v, want 0–100 for a percentage of 0.3", lo, hi)
	}
	s.YAtLeast = 0
	if _, hi := yExtent(s, ps); hi >= 1 {
		t.Errorf("without YAtLeast the axis reaches %v, want the data's 0.3", hi)
	}
}

// TestNothingMeasuredHasNoLegendEntry: a series with no point (a p95 of
// levels under 20 successes) is left out of what is drawn, and so of the
// legend; one with a gap keeps its entry.
func TestNothingMeasuredHasNoLegendEntry(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	spec := Spec{Series: []Series{
		{Name: "p50", X: []float64{1, 2}, Y: []float64{300, 450}, Kind: Line},
		{Name: "p95", X: []float64{1, 2}, Y: []float64{nan, nan}, Kind: Line},
		{Name: "p99", X: []float64{1, 2}, Y: []float64{nan, 900}, Kind: Line},
	}}
	got, _ := cleanSeries(spec, 800, Light())
	var names []string
	for _, s := range got {
		names = append(names, s.name)
	}
	if want := []string{"p50", "p99"}; !slices.Equal(names, want) {
		t.Errorf("drawn series %q, want %q", names, want)
	}
}

// TestTickLabelsOfTinyValues: an axis of KL divergences of 1e-10 nats
// (two builds of the same kernels) labels its ticks apart, as
// significant digits, where fixed decimals read "0.0000000" on each.
func TestTickLabelsOfTinyValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{0, 2.1e-10, []string{"0", "1e-10", "2e-10", "3e-10"}},
		{0, 1.1e-10, []string{"0", "5e-11", "1e-10", "1.5e-10"}},
		{0, 1.4e-4, []string{"0", "5e-05", "0.0001", "0.00015"}},
		{0, 0.04, []string{"0", "0.01", "0.02", "0.03", "0.04"}},
	}
	for _, tt := range tests {
		ticks := niceTicks(tt.lo, tt.hi, 4)
		f := tickFormatter(ticks)
		var got []string
		for _, tk := range ticks {
			got = append(got, f(tk.Value))
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("ticks of [%g, %g]: %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}
