// Package chart draws the app's and the CLI's charts into images, with no
// display and no cgo: the desktop app shows them in a widget (ui.ChartView),
// the CLI writes them as PNG files (kovara-bench run --png).
//
// This file is the only one in the project that imports go-chart: everything
// else talks to it through Spec, Series and Palette, which are plain Go
// values. Swapping go-chart for a maintained fork (or for another plotting
// library) should only touch this file (docs/architecture.md).
package chart

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/golang/freetype/truetype"
	gochart "github.com/wcharczuk/go-chart/v2"
	"github.com/wcharczuk/go-chart/v2/drawing"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SeriesKind says how a series is drawn.
type SeriesKind int

const (
	// Line joins consecutive points; a NaN Y breaks the line.
	Line SeriesKind = iota
	// Scatter draws one dot per point.
	Scatter
	// Bars draws one bar per point, from zero to Y, centred on X. Several bar
	// series in one chart are grouped side by side.
	Bars
)

// Series is one set of points. X and Y are paired by index; when their
// lengths differ the extra values are ignored. A NaN (or infinite) Y is a gap:
// a line is broken there, never drawn through zero. Points whose X is NaN or
// infinite (or not positive on a log axis) are left out.
type Series struct {
	Name  string // shown in the legend; leave empty to keep a series out of it
	X, Y  []float64
	Kind  SeriesKind
	Color int // index into Palette.Series (wraps around)
}

// Spec describes one chart completely; Render turns it into pixels.
type Spec struct {
	Title, XLabel, YLabel string
	// Subtitle, under the title, names what the chart is of (the run:
	// its label, model and engine), so a saved PNG says it outside the
	// app; the app's own views leave it out (ChartView), where the page
	// says it.
	Subtitle string
	Series   []Series

	// YFromZero makes the y axis start at 0 (bar charts always do).
	YFromZero bool
	// YAtLeast, when set, is a value the y axis always reaches: a
	// percentage chart set to 100 draws 0.3 % as the sliver it is, where an
	// axis of 0–1.0 over a "%" label reads like a ratio.
	YAtLeast float64
	// XLog draws the x axis on a log2 scale, which suits concurrency levels
	// such as 1, 8, 32, 256.
	XLog bool
	// XTicks, when set, are the only labelled x ticks (for example the
	// concurrency levels of a run). The axis is widened to include them.
	XTicks []float64
	// XMinSpan, when set, is the least width of the x axis: a live series
	// of a few points is drawn on a steady scale, not stretched over the
	// fraction of a second it covers so far. The axis grows to the right.
	XMinSpan float64
	// XInteger labels the x axis at whole numbers only (request numbers).
	XInteger bool
	// XTickLabels, when set, name the XTicks in their order (a settings
	// comparison's settings) instead of their numbers.
	XTickLabels []string
	// XPad widens the x axis by this much on each side, so points on the
	// first and last tick stand clear of the frame.
	XPad float64

	// Width and Height are the image size in pixels. Zero means 640×360.
	Width, Height int
	// Scale multiplies text sizes, line widths and margins, for screens with
	// more than one pixel per Fyne unit. Zero means 1.
	Scale float64

	Palette Palette
}

// Palette holds the colours of a chart. Nil fields fall back to Light's;
// an empty Series list falls back to the default series colours.
type Palette struct {
	Background, Foreground, Grid color.Color
	Series                       []color.Color
}

// ErrTooFewPoints is returned by Render when no series has two points to
// draw (for bar series: two bars). Callers show a placeholder instead.
var ErrTooFewPoints = errors.New("chart: not enough data yet (need at least two points)")

// seriesColors read on both Fyne's light (#ffffff) and dark (#171718)
// backgrounds: each has a contrast ratio of at least 3:1 against both. The
// first four (used for 2–4 compared runs) have clearly different hues.
var seriesColors = []color.NRGBA{
	{R: 0x3B, G: 0x82, B: 0xF6, A: 0xFF}, // blue
	{R: 0xD9, G: 0x73, B: 0x0D, A: 0xFF}, // orange
	{R: 0x2E, G: 0x9E, B: 0x4F, A: 0xFF}, // green
	{R: 0xD9, G: 0x46, B: 0xA0, A: 0xFF}, // magenta
	{R: 0x8E, G: 0x6B, B: 0xD8, A: 0xFF}, // violet
	{R: 0x1A, G: 0x9A, B: 0xA8, A: 0xFF}, // teal
	{R: 0xE0, G: 0x5A, B: 0x47, A: 0xFF}, // red
	{R: 0xA8, G: 0x84, B: 0x1A, A: 0xFF}, // ochre
}

// NewPalette is the palette on a background with a text colour: grid
// lines are a faint mix of the two, and the series colours are a fixed set
// that reads on light and dark backgrounds alike. The app builds it from
// its theme (ui.PaletteFor).
func NewPalette(background, foreground color.Color) Palette {
	p := Palette{
		Background: background,
		Foreground: foreground,
		Grid:       mixColor(background, foreground, 0.14),
	}
	for _, c := range seriesColors {
		p.Series = append(p.Series, c)
	}
	return p
}

// Light is the palette a Spec without one is drawn in: dark grey on white,
// for charts that leave the app (the CLI's PNG files).
func Light() Palette {
	return NewPalette(color.NRGBA{R: 0xFF, G: 0xFF, B: 0xFF, A: 0xFF}, color.NRGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xFF})
}

// EncodePNG writes img as a PNG (the app's Save PNG, the CLI's --png).
func EncodePNG(img image.Image, w io.Writer) error {
	if img == nil {
		return errors.New("chart: no image to save")
	}
	return png.Encode(w, img)
}

// Layout constants, in pixels at Scale 1.
const (
	defaultChartWidth  = 640
	defaultChartHeight = 360
	minRenderWidth     = 120
	minRenderHeight    = 80

	padOuter      = 10.0
	padRight      = 18.0
	titleFontPx   = 14.0
	textFontPx    = 11.0
	lineWidthPx   = 2.0
	gridWidthPx   = 1.0
	lineDotPx     = 3.0
	scatterDotPx  = 2.5
	legendGapPx   = 14.0
	legendSwatch  = 16.0
	barGroupShare = 0.8
)

var (
	fontOnce sync.Once
	fontVal  *truetype.Font
	fontErr  error
)

// chartFont loads go-chart's bundled Roboto once. Loading it here, rather
// than letting every Render do it, also avoids go-chart's unsynchronised lazy
// initialisation when charts render on several goroutines.
func chartFont() (*truetype.Font, error) {
	fontOnce.Do(func() { fontVal, fontErr = gochart.GetDefaultFont() })
	return fontVal, fontErr
}

// plotSeries is a Series after cleaning: x already on the axis scale (log2
// when XLog), y with gaps as NaN, thinned when longer than the chart is wide.
type plotSeries struct {
	name   string
	kind   SeriesKind
	color  drawing.Color
	x, y   []float64
	points int // finite points
}

// renderSize is the pixel size a spec asks for (0 takes the default
// 640×360), or why it is too small to draw.
func renderSize(width, height int) (int, int, error) {
	if width <= 0 {
		width = defaultChartWidth
	}
	if height <= 0 {
		height = defaultChartHeight
	}
	if width < minRenderWidth || height < minRenderHeight {
		return 0, 0, fmt.Errorf("chart: %d×%d pixels is too small to draw", width, height)
	}
	return width, height, nil
}

// Render draws spec into a new image of spec.Width × spec.Height pixels
// using go-chart's raster renderer directly (no PNG encode/decode). It returns
// ErrTooFewPoints unless some series has at least two finite points (for bar
// series: two bars). Line and scatter series longer than the chart is wide
// are thinned with Thin first. Safe for concurrent use.
func Render(spec Spec) (*image.RGBA, error) {
	width, height, err := renderSize(spec.Width, spec.Height)
	if err != nil {
		return nil, err
	}
	scale := spec.Scale
	if scale <= 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		scale = 1
	}
	px := func(v float64) int { return int(math.Round(v * scale)) }

	pal := resolvePalette(spec.Palette)
	series, enough := cleanSeries(spec, width, pal)
	if !enough {
		return nil, ErrTooFewPoints
	}
	font, err := chartFont()
	if err != nil {
		return nil, fmt.Errorf("chart: loading font: %w", err)
	}

	raster, err := gochart.PNG(width, height)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	r := &backdropRenderer{Renderer: raster}
	r.SetDPI(72) // with 72 dpi a font size in points is a size in pixels
	textPx := textFontPx * scale
	titlePx := titleFontPx * scale
	measure := func(s string, size float64) (int, int) {
		r.SetFont(font)
		r.SetFontSize(size)
		b := r.MeasureText(s)
		return b.Width(), b.Height()
	}

	// Vertical layout of the band above the plot: title, then a row with the
	// y-axis label on the left and the legend on the right.
	pad := px(padOuter)
	top := pad
	titleBaseline, subtitleBaseline := 0, 0
	// A title or subtitle wider than the image is cut short, never
	// drawn past its edge.
	title := fitText(spec.Title, width-2*pad, titlePx, measure)
	subtitle := fitText(spec.Subtitle, width-2*pad, textPx, measure)
	if title != "" {
		titleBaseline = top + int(math.Round(titlePx*0.92))
		top += int(math.Round(titlePx * 1.45))
	}
	if subtitle != "" {
		subtitleBaseline = top + int(math.Round(textPx*0.92))
		top += int(math.Round(textPx * 1.6))
	}
	yLabelW := 0
	if spec.YLabel != "" {
		yLabelW, _ = measure(spec.YLabel, textPx)
	}
	legendRows := layoutLegend(series, width-2*pad-yLabelW-px(legendGapPx), textPx, scale, measure)
	rowH := int(math.Round(textPx * 1.5))
	headerBaseline := top + int(math.Round(textPx*0.92))
	headerRows := len(legendRows)
	if headerRows == 0 && spec.YLabel != "" {
		headerRows = 1
	}
	top += headerRows*rowH + px(6)

	// Rough plot area, used to choose how many ticks fit.
	bottomBand := px(26)
	if spec.XLabel != "" {
		bottomBand += int(math.Round(textPx * 1.6))
	}
	plotH := max(height-top-bottomBand, 20)

	xr := xAxisRange(spec, series)
	ymin, ymax := yExtent(spec, series)
	yTicks := niceTicks(ymin, ymax, clampInt(plotH/max(1, px(38)), 2, 8))
	yFmt := tickFormatter(yTicks)
	yTickW := 0
	for i := range yTicks {
		yTicks[i].Label = yFmt(yTicks[i].Value)
		w, _ := measure(yTicks[i].Label, textPx)
		yTickW = max(yTickW, w)
	}
	plotW := max(width-pad-px(padRight)-yTickW-px(12), 20)
	xTicks := xAxisTicks(spec, series, xr, plotW, scale, textPx, measure)

	fg := toDrawing(pal.Foreground)
	bg := backdropColor // painted at the end, see backdropRenderer
	grid := toDrawing(pal.Grid)
	axis := toDrawing(mixColor(pal.Background, pal.Foreground, 0.45))

	axisStyle := gochart.Style{
		Font:        font,
		FontSize:    textPx,
		FontColor:   fg,
		StrokeColor: axis,
		StrokeWidth: math.Max(1, scale),
	}
	gridStyle := gochart.Style{StrokeColor: grid, StrokeWidth: gridWidthPx * scale}

	c := gochart.Chart{
		Width:        width,
		Height:       height,
		DPI:          72,
		Font:         font,
		ColorPalette: chartPalette{pal: pal},
		Background: gochart.Style{
			FillColor: bg,
			Padding: gochart.Box{
				Top: top, Left: pad, Right: px(padRight), Bottom: pad, IsSet: true,
			},
		},
		Canvas: gochart.Style{FillColor: bg},
		XAxis: gochart.XAxis{
			Name:           spec.XLabel,
			NameStyle:      gochart.Style{Font: font, FontSize: textPx, FontColor: fg},
			Style:          axisStyle,
			Ticks:          xTicks,
			GridLines:      innerGridLines(xTicks, xr.min, xr.max),
			GridMajorStyle: gridStyle,
			GridMinorStyle: gridStyle,
		},
		// go-chart draws its primary y axis on the right. All series are put
		// on the secondary axis, which sits on the left where readers expect
		// it; the primary one is hidden but carries the same ticks, because
		// go-chart reads the secondary axis range from the primary's ticks.
		YAxis: gochart.YAxis{Style: gochart.Hidden(), Ticks: yTicks},
		YAxisSecondary: gochart.YAxis{
			Style:          axisStyle,
			Ticks:          yTicks,
			GridLines:      innerGridLines(yTicks, yTicks[0].Value, yTicks[len(yTicks)-1].Value),
			GridMajorStyle: gridStyle,
			GridMinorStyle: gridStyle,
		},
	}
	c.Series = buildChartSeries(series, xr, plotW, scale)
	if xr.slot > 0 {
		// Bars carry their own x positions; vertical grid lines only clutter.
		c.XAxis.GridLines = nil
		c.XAxis.GridMajorStyle = gochart.Hidden()
		c.XAxis.GridMinorStyle = gochart.Hidden()
	}

	header := func(r gochart.Renderer, cb gochart.Box, _ gochart.Style) {
		r.ClearTextRotation()
		r.SetFont(font)
		r.SetFontColor(fg)
		if title != "" {
			r.SetFontSize(titlePx)
			r.Text(title, pad, titleBaseline)
		}
		r.SetFontSize(textPx)
		if subtitle != "" {
			r.Text(subtitle, pad, subtitleBaseline)
		}
		if spec.YLabel != "" {
			r.Text(spec.YLabel, pad, headerBaseline)
		}
		drawLegend(r, legendRows, width-px(padRight), headerBaseline, rowH, textPx, scale, fg, font)
	}
	c.Elements = []gochart.Renderable{header}

	iw := &gochart.ImageWriter{}
	provider := func(int, int) (gochart.Renderer, error) { return r, nil }
	if err := c.Render(provider, iw); err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	out, err := iw.Image()
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	rgba, ok := out.(*image.RGBA)
	if !ok {
		return nil, errors.New("chart: renderer did not produce an RGBA image")
	}
	paintBehind(rgba, pal.Background)
	return rgba, nil
}

// backdropColor marks the chart background and plot-area fills. go-chart
// paints both as full rectangles through its anti-aliasing rasterizer, which
// is over a third of the render time for an 800×400 gochart. backdropRenderer
// skips those two fills, everything else is drawn onto a transparent image,
// and paintBehind then puts the background colour under it in one pass.
// Compositing "over" is associative, so the result is the same picture.
var backdropColor = drawing.Color{R: 1, G: 2, B: 3, A: 0}

type backdropRenderer struct {
	gochart.Renderer
	fill drawing.Color
}

func (b *backdropRenderer) SetFillColor(c drawing.Color) {
	b.fill = c
	b.Renderer.SetFillColor(c)
}

func (b *backdropRenderer) Fill() {
	if b.fill == backdropColor {
		b.discardPath()
		return
	}
	b.Renderer.Fill()
}

func (b *backdropRenderer) FillStroke() {
	if b.fill == backdropColor {
		b.discardPath()
		return
	}
	b.Renderer.FillStroke()
}

// discardPath clears the pending path: a stroke of zero width covers no
// pixels, and the raster renderer resets its path after every paint.
func (b *backdropRenderer) discardPath() {
	b.Renderer.SetStrokeWidth(0)
	b.Renderer.SetStrokeColor(backdropColor)
	b.Renderer.Stroke()
}

// paintBehind composites img (premultiplied, drawn on transparent) over bg.
func paintBehind(img *image.RGBA, bg color.Color) {
	br, bgG, bb, ba := bg.RGBA()
	r8, g8, b8, a8 := br>>8, bgG>>8, bb>>8, ba>>8
	pix := img.Pix
	for i := 0; i+3 < len(pix); i += 4 {
		a := uint32(pix[i+3])
		switch a {
		case 0xFF:
			continue
		case 0:
			pix[i], pix[i+1], pix[i+2], pix[i+3] = uint8(r8), uint8(g8), uint8(b8), uint8(a8)
			continue
		}
		ia := 0xFF - a
		pix[i] = uint8(min(0xFF, uint32(pix[i])+(r8*ia+0x7F)/0xFF))
		pix[i+1] = uint8(min(0xFF, uint32(pix[i+1])+(g8*ia+0x7F)/0xFF))
		pix[i+2] = uint8(min(0xFF, uint32(pix[i+2])+(b8*ia+0x7F)/0xFF))
		pix[i+3] = uint8(min(0xFF, a+(a8*ia+0x7F)/0xFF))
	}
}

// cleanSeries applies the axis transform, drops unusable points, thins long
// series and reports whether any series has enough points to draw.
func cleanSeries(spec Spec, width int, pal Palette) ([]plotSeries, bool) {
	out := make([]plotSeries, 0, len(spec.Series))
	enough := false
	for _, s := range spec.Series {
		n := min(len(s.X), len(s.Y))
		ps := plotSeries{
			name:  s.Name,
			kind:  s.Kind,
			color: toDrawing(pal.Series[wrapIndex(s.Color, len(pal.Series))]),
			x:     make([]float64, 0, n),
			y:     make([]float64, 0, n),
		}
		for i := range n {
			x, y := s.X[i], s.Y[i]
			if isGap(x) || (spec.XLog && x <= 0) {
				continue
			}
			if spec.XLog {
				x = math.Log2(x)
			}
			if isGap(y) {
				if s.Kind == Bars {
					continue
				}
				y = math.NaN()
			} else {
				ps.points++
			}
			ps.x = append(ps.x, x)
			ps.y = append(ps.y, y)
		}
		if s.Kind != Bars && len(ps.x) > width {
			ps.x, ps.y = Thin(ps.x, ps.y, width)
		}
		if ps.points >= 2 {
			enough = true
		}
		if ps.points == 0 {
			// Nothing of it measured (a p95 of levels under 20
			// successes): no legend entry over nothing drawn.
			continue
		}
		out = append(out, ps)
	}
	return out, enough
}

// axisRange is the x extent on the axis scale, plus the bar slot width.
type axisRange struct {
	min, max float64
	slot     float64 // width given to one group of bars; 0 without bars
}

func xAxisRange(spec Spec, series []plotSeries) axisRange {
	lo, hi := math.Inf(1), math.Inf(-1)
	var barX []float64
	for _, s := range series {
		if s.points == 0 {
			continue
		}
		for i, x := range s.x {
			if s.kind != Line && isGap(s.y[i]) {
				continue
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
			if s.kind == Bars {
				barX = append(barX, x)
			}
		}
	}
	for _, t := range spec.XTicks {
		if isGap(t) || (spec.XLog && t <= 0) {
			continue
		}
		if spec.XLog {
			t = math.Log2(t)
		}
		lo, hi = math.Min(lo, t), math.Max(hi, t)
	}
	r := axisRange{min: lo, max: hi}
	if len(barX) > 0 {
		slices.Sort(barX)
		slot := math.Inf(1)
		for i := 1; i < len(barX); i++ {
			if d := barX[i] - barX[i-1]; d > 1e-12 && d < slot {
				slot = d
			}
		}
		if math.IsInf(slot, 1) {
			slot = 1
			if hi > lo {
				slot = hi - lo
			}
		}
		r.slot = slot
		r.min -= slot / 2
		r.max += slot / 2
	}
	r.min, r.max = r.min-spec.XPad, r.max+spec.XPad
	if span := spec.XMinSpan; span > 0 && !spec.XLog && r.max-r.min < span {
		r.max = r.min + span
	}
	if r.max-r.min <= 0 {
		r.min, r.max = r.min-0.5, r.max+0.5
	}
	return r
}

func yExtent(spec Spec, series []plotSeries) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	fromZero := spec.YFromZero
	for _, s := range series {
		if s.kind == Bars && s.points > 0 {
			fromZero = true
		}
		for _, y := range s.y {
			if !isGap(y) {
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
	}
	if fromZero {
		lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	}
	if spec.YAtLeast != 0 && !math.IsInf(lo, 0) {
		lo, hi = math.Min(lo, spec.YAtLeast), math.Max(hi, spec.YAtLeast)
	}
	if hi == lo {
		d := math.Abs(hi) * 0.1
		if d == 0 {
			d = 1
		}
		if fromZero && lo == 0 {
			hi += d
		} else {
			lo, hi = lo-d, hi+d
		}
	}
	return lo, hi
}

// niceStep returns a round step (1, 2, 2.5 or 5 times a power of ten) that
// cuts span into about n parts.
func niceStep(span float64, n int) float64 {
	raw := span / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		return mag
	case f <= 2:
		return 2 * mag
	case f <= 2.5:
		return 2.5 * mag
	case f <= 5:
		return 5 * mag
	default:
		return 10 * mag
	}
}

// niceTicks covers [lo, hi] with round ticks; the first and last tick are the
// axis ends.
func niceTicks(lo, hi float64, n int) []gochart.Tick {
	step := niceStep(hi-lo, n)
	start := math.Floor(lo/step+1e-9) * step
	end := math.Ceil(hi/step-1e-9) * step
	var ticks []gochart.Tick
	for i := 0; ; i++ {
		v := start + float64(i)*step
		if v > end+step*1e-6 || i > 100 {
			break
		}
		v = math.Round(v/step) * step
		if v == 0 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, gochart.Tick{Value: v})
	}
	if len(ticks) < 2 {
		ticks = []gochart.Tick{{Value: lo}, {Value: hi}}
	}
	return ticks
}

// xAxisTicks picks labelled x ticks and adds unlabelled ticks at the ends of
// the range (go-chart takes the axis range from the outermost ticks). Labels
// that would overlap their left neighbour are blanked.
func xAxisTicks(spec Spec, series []plotSeries, xr axisRange, plotW int, scale, textPx float64, measure func(string, float64) (int, int)) []gochart.Tick {
	var ticks []gochart.Tick
	switch {
	case len(spec.XTicks) > 0:
		for i, t := range spec.XTicks {
			if isGap(t) || (spec.XLog && t <= 0) {
				continue
			}
			v := t
			if spec.XLog {
				v = math.Log2(t)
			}
			label := formatNumber(t)
			if i < len(spec.XTickLabels) {
				label = spec.XTickLabels[i]
			}
			ticks = append(ticks, gochart.Tick{Value: v, Label: label})
		}
	case xr.slot > 0 && distinctBarXs(series) <= 16:
		seen := map[float64]bool{}
		for _, s := range series {
			if s.kind != Bars {
				continue
			}
			for _, x := range s.x {
				if !seen[x] {
					seen[x] = true
					ticks = append(ticks, gochart.Tick{Value: x, Label: formatNumber(unscaleX(spec, x))})
				}
			}
		}
	case spec.XLog:
		first, last := math.Ceil(xr.min-1e-9), math.Floor(xr.max+1e-9)
		every := math.Max(1, math.Ceil((last-first+1)/float64(clampInt(plotW/int(math.Max(1, 70*scale)), 2, 10))))
		for e := first; e <= last; e += every {
			ticks = append(ticks, gochart.Tick{Value: e, Label: formatNumber(math.Exp2(e))})
		}
		if len(ticks) < 2 {
			// Less than two powers of two in range: use round values instead.
			ticks = ticks[:0]
			lo, hi := math.Exp2(xr.min), math.Exp2(xr.max)
			inner := niceTicks(lo, hi, 4)
			f := tickFormatter(inner)
			for _, t := range inner {
				if t.Value >= lo && t.Value <= hi && t.Value > 0 {
					ticks = append(ticks, gochart.Tick{Value: math.Log2(t.Value), Label: f(t.Value)})
				}
			}
		}
	default:
		inner := niceTicks(xr.min, xr.max, clampInt(plotW/int(math.Max(1, 90*scale)), 2, 10))
		if spec.XInteger && len(inner) > 1 {
			if step := inner[1].Value - inner[0].Value; step != math.Trunc(step) {
				// A step of 0.2 or 2.5 would label request 1.2 or 7.5:
				// use whole numbers, the next whole step apart.
				step = math.Max(1, math.Ceil(step))
				inner = inner[:0]
				for v := math.Ceil(xr.min/step) * step; v <= xr.max+1e-9; v += step {
					inner = append(inner, gochart.Tick{Value: v})
				}
			}
		}
		f := tickFormatter(inner)
		for _, t := range inner {
			if t.Value >= xr.min-1e-9*(xr.max-xr.min) && t.Value <= xr.max+1e-9*(xr.max-xr.min) {
				ticks = append(ticks, gochart.Tick{Value: t.Value, Label: f(t.Value)})
			}
		}
	}
	slices.SortFunc(ticks, func(a, b gochart.Tick) int {
		switch {
		case a.Value < b.Value:
			return -1
		case a.Value > b.Value:
			return 1
		}
		return 0
	})

	// Blank labels that would collide with the previous shown one.
	span := xr.max - xr.min
	lastRight := math.Inf(-1)
	gap := 8 * scale
	for i := range ticks {
		if ticks[i].Label == "" {
			continue
		}
		w, _ := measure(ticks[i].Label, textPx)
		centre := (ticks[i].Value - xr.min) / span * float64(plotW)
		left := centre - float64(w)/2
		if left < lastRight+gap {
			ticks[i].Label = ""
			continue
		}
		lastRight = centre + float64(w)/2
	}

	eps := span * 1e-9
	if len(ticks) == 0 || ticks[0].Value > xr.min+eps {
		ticks = append([]gochart.Tick{{Value: xr.min}}, ticks...)
	}
	if ticks[len(ticks)-1].Value < xr.max-eps {
		ticks = append(ticks, gochart.Tick{Value: xr.max})
	}
	return ticks
}

func distinctBarXs(series []plotSeries) int {
	seen := map[float64]bool{}
	for _, s := range series {
		if s.kind == Bars {
			for _, x := range s.x {
				seen[x] = true
			}
		}
	}
	return len(seen)
}

func unscaleX(spec Spec, x float64) float64 {
	if spec.XLog {
		return math.Exp2(x)
	}
	return x
}

// innerGridLines draws a grid line at every tick strictly inside the range
// (the ends are the axis lines or the plot edge).
func innerGridLines(ticks []gochart.Tick, lo, hi float64) []gochart.GridLine {
	eps := (hi - lo) * 1e-9
	var gl []gochart.GridLine
	for _, t := range ticks {
		if t.Value > lo+eps && t.Value < hi-eps {
			gl = append(gl, gochart.GridLine{Value: t.Value})
		}
	}
	if len(gl) == 0 {
		// go-chart generates its own lines from an empty list; a line at the
		// axis end is invisible under the axis itself.
		gl = []gochart.GridLine{{Value: lo}}
	}
	return gl
}

// buildChartSeries turns cleaned series into go-chart series. Lines are cut
// into one go-chart series per unbroken run, all in the same colour, so a gap
// is never bridged; a lone point between gaps is drawn as a dot.
func buildChartSeries(series []plotSeries, xr axisRange, plotW int, scale float64) []gochart.Series {
	var out []gochart.Series
	barCount := 0
	for _, s := range series {
		if s.kind == Bars && s.points > 0 {
			barCount++
		}
	}
	barIndex := 0
	for _, s := range series {
		if s.points == 0 {
			continue
		}
		switch s.kind {
		case Bars:
			group := xr.slot * barGroupShare
			w := group / float64(barCount)
			out = append(out, barSeries{
				x: s.x, y: s.y, color: s.color,
				offset: -group/2 + float64(barIndex)*w,
				width:  w,
			})
			barIndex++
		case Scatter:
			xs, ys := finitePoints(s.x, s.y)
			out = append(out, dotSeries(xs, ys, s.color, scatterDotPx*scale))
		default:
			withDots := s.points <= plotW/int(math.Max(1, 16*scale))
			start := -1
			for i := 0; i <= len(s.y); i++ {
				if i < len(s.y) && !isGap(s.y[i]) {
					if start < 0 {
						start = i
					}
					continue
				}
				if start < 0 {
					continue
				}
				xs, ys := s.x[start:i], s.y[start:i]
				if len(xs) == 1 {
					out = append(out, dotSeries(xs, ys, s.color, lineDotPx*scale))
				} else {
					st := gochart.Style{StrokeColor: s.color, StrokeWidth: lineWidthPx * scale}
					if withDots {
						st.DotColor, st.DotWidth = s.color, lineDotPx*scale
					}
					out = append(out, gochart.ContinuousSeries{
						Style: st, YAxis: gochart.YAxisSecondary, XValues: xs, YValues: ys,
					})
				}
				start = -1
			}
		}
	}
	return out
}

func dotSeries(xs, ys []float64, c drawing.Color, radius float64) gochart.Series {
	return gochart.ContinuousSeries{
		Style: gochart.Style{
			StrokeWidth: gochart.Disabled,
			DotColor:    c,
			DotWidth:    radius,
		},
		YAxis:   gochart.YAxisSecondary,
		XValues: xs,
		YValues: ys,
	}
}

func finitePoints(x, y []float64) ([]float64, []float64) {
	xs := make([]float64, 0, len(x))
	ys := make([]float64, 0, len(y))
	for i := range y {
		if !isGap(y[i]) {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
	}
	return xs, ys
}

// barSeries draws filled bars from zero; go-chart's own bar chart is a
// separate chart type without shared axes, so bars are a custom series here.
type barSeries struct {
	x, y          []float64
	color         drawing.Color
	offset, width float64 // bar i spans [x+offset, x+offset+width]
}

func (b barSeries) GetName() string             { return "" }
func (b barSeries) GetYAxis() gochart.YAxisType { return gochart.YAxisSecondary }
func (b barSeries) GetStyle() gochart.Style     { return gochart.Style{} }
func (b barSeries) Validate() error             { return nil }

func (b barSeries) Render(r gochart.Renderer, cb gochart.Box, xr, yr gochart.Range, _ gochart.Style) {
	zero := cb.Bottom - yr.Translate(0)
	zero = max(cb.Top, min(cb.Bottom, zero))
	for i := range b.x {
		left := cb.Left + xr.Translate(b.x[i]+b.offset)
		right := cb.Left + xr.Translate(b.x[i]+b.offset+b.width)
		if right-left < 1 {
			right = left + 1
		}
		y := cb.Bottom - yr.Translate(b.y[i])
		y = max(cb.Top, min(cb.Bottom, y))
		if y == zero {
			continue
		}
		r.SetFillColor(b.color)
		r.MoveTo(left, y)
		r.LineTo(right, y)
		r.LineTo(right, zero)
		r.LineTo(left, zero)
		r.Close()
		r.Fill()
	}
}

// legendEntry is one named series in the legend.
type legendEntry struct {
	name  string
	kind  SeriesKind
	color drawing.Color
	width int // swatch + gap + text
}

// layoutLegend flows the named series into right-aligned rows no wider than
// avail pixels. Each spec series appears once, however many pieces its gaps
// cut it into.
func layoutLegend(series []plotSeries, avail int, textPx, scale float64, measure func(string, float64) (int, int)) [][]legendEntry {
	var rows [][]legendEntry
	rowW := 0
	gap := int(math.Round(legendGapPx * scale))
	for _, s := range series {
		if s.name == "" {
			continue
		}
		// One name is never wider than the row: a long run name is cut
		// short rather than drawn past the image's left edge.
		swatch := int(math.Round((legendSwatch + 5) * scale))
		name := fitText(s.name, avail-swatch, textPx, measure)
		tw, _ := measure(name, textPx)
		e := legendEntry{
			name:  name,
			kind:  s.kind,
			color: s.color,
			width: swatch + tw,
		}
		if len(rows) == 0 || (rowW+gap+e.width > avail && len(rows[len(rows)-1]) > 0) {
			rows = append(rows, nil)
			rowW = -gap
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		rowW += gap + e.width
	}
	return rows
}

func drawLegend(r gochart.Renderer, rows [][]legendEntry, right, baseline, rowH int, textPx, scale float64, fg drawing.Color, font *truetype.Font) {
	gap := int(math.Round(legendGapPx * scale))
	swatch := int(math.Round(legendSwatch * scale))
	mid := int(math.Round(textPx * 0.35)) // from baseline up to about x-height middle
	for ri, row := range rows {
		total := -gap
		for _, e := range row {
			total += gap + e.width
		}
		x := right - total
		y := baseline + ri*rowH
		for _, e := range row {
			cy := y - mid
			switch e.kind {
			case Bars:
				h := int(math.Round(9 * scale))
				r.SetFillColor(e.color)
				left := x + (swatch-h)/2
				r.MoveTo(left, cy-h/2)
				r.LineTo(left+h, cy-h/2)
				r.LineTo(left+h, cy-h/2+h)
				r.LineTo(left, cy-h/2+h)
				r.Close()
				r.Fill()
			case Scatter:
				r.SetFillColor(e.color)
				r.SetStrokeColor(e.color)
				r.SetStrokeWidth(1)
				r.Circle(3.5*scale, x+swatch/2, cy)
				r.FillStroke()
			default:
				r.SetStrokeColor(e.color)
				r.SetStrokeWidth(lineWidthPx * scale)
				r.SetStrokeDashArray(nil)
				r.MoveTo(x, cy)
				r.LineTo(x+swatch, cy)
				r.Stroke()
			}
			r.SetFont(font)
			r.SetFontSize(textPx)
			r.SetFontColor(fg)
			r.Text(e.name, x+swatch+int(math.Round(5*scale)), y)
			x += e.width + gap
		}
	}
}

// fitText is s, cut short with an ellipsis where it is wider than avail
// pixels at size.
func fitText(s string, avail int, size float64, measure func(string, float64) (int, int)) string {
	if s == "" {
		return s
	}
	if w, _ := measure(s, size); w <= avail {
		return s
	}
	r := []rune(s)
	lo, hi := 0, len(r) // the longest prefix that fits lies in [lo, hi)
	for lo < hi-1 {
		mid := (lo + hi) / 2
		if w, _ := measure(string(r[:mid])+"…", size); w <= avail {
			lo = mid
		} else {
			hi = mid
		}
	}
	cut := strings.TrimRight(string(r[:lo]), " ·,")
	return cut + "…"
}

// tickFormatter chooses one number format for a set of evenly spaced ticks:
// enough decimals to tell neighbours apart, and k/M suffixes for big values.
func tickFormatter(ticks []gochart.Tick) func(float64) string {
	step := math.Inf(1)
	maxAbs := 0.0
	for i, t := range ticks {
		maxAbs = math.Max(maxAbs, math.Abs(t.Value))
		if i > 0 {
			step = math.Min(step, math.Abs(t.Value-ticks[i-1].Value))
		}
	}
	if math.IsInf(step, 1) || step == 0 {
		step = math.Max(maxAbs, 1)
	}
	div, suffix := 1.0, ""
	switch {
	case maxAbs >= 1e7:
		div, suffix = 1e6, "M"
	case maxAbs >= 1e4:
		div, suffix = 1e3, "k"
	}
	if step < 1e-4 {
		// A KL divergence of 1e-10 nats: fixed decimals would read
		// "0.0000000" on every tick; as many significant digits as tell
		// the ticks apart ("5e-11", "1e-10", "1.5e-10").
		prec := max(int(math.Ceil(math.Log10(maxAbs/step)-1e-9))+1, 1)
		return func(v float64) string {
			if v == 0 {
				return "0"
			}
			return strconv.FormatFloat(v, 'g', prec, 64)
		}
	}
	decimals := 0
	if s := step / div; s < 1 {
		decimals = min(int(math.Ceil(-math.Log10(s)-1e-9)), 6)
		if math.Abs(s*math.Pow(10, float64(decimals))-math.Round(s*math.Pow(10, float64(decimals)))) > 1e-6 {
			decimals++ // steps like 0.25 need one more digit
		}
	} else if s-math.Floor(s) > 1e-9 {
		decimals = 1 // steps like 2.5
	}
	return func(v float64) string {
		if v == 0 {
			return "0"
		}
		return strconv.FormatFloat(v/div, 'f', decimals, 64) + suffix
	}
}

// formatNumber prints a single value compactly (up to three decimals,
// trailing zeros dropped, k/M for big values). A big whole number that k
// or M would print with more than one decimal is printed whole, with
// thousands separators: "16.384k" reads like sixteen and a fraction.
func formatNumber(v float64) string {
	div, suffix := 1.0, ""
	switch a := math.Abs(v); {
	case a >= 1e7:
		div, suffix = 1e6, "M"
	case a >= 1e4:
		div, suffix = 1e3, "k"
	}
	s := strconv.FormatFloat(v/div, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	if div > 1 && v == math.Trunc(v) && math.Abs(v) < 1e15 {
		if _, frac, ok := strings.Cut(s, "."); ok && len(frac) > 1 {
			return thousands.Sprintf("%d", int64(v))
		}
	}
	return s + suffix
}

// thousands prints whole numbers as the results' tables do ("16,384").
var thousands = message.NewPrinter(language.English)

// chartPalette gives go-chart our colours for everything it might otherwise
// default to white or grey.
type chartPalette struct{ pal Palette }

func (p chartPalette) BackgroundColor() drawing.Color       { return backdropColor }
func (p chartPalette) BackgroundStrokeColor() drawing.Color { return backdropColor }
func (p chartPalette) CanvasColor() drawing.Color           { return backdropColor }
func (p chartPalette) CanvasStrokeColor() drawing.Color     { return backdropColor }
func (p chartPalette) AxisStrokeColor() drawing.Color {
	return toDrawing(mixColor(p.pal.Background, p.pal.Foreground, 0.45))
}
func (p chartPalette) TextColor() drawing.Color { return toDrawing(p.pal.Foreground) }
func (p chartPalette) GetSeriesColor(i int) drawing.Color {
	return toDrawing(p.pal.Series[wrapIndex(i, len(p.pal.Series))])
}

// resolvePalette fills unset palette fields from Light.
func resolvePalette(p Palette) Palette {
	light := Light()
	if p.Background == nil {
		p.Background = light.Background
	}
	if p.Foreground == nil {
		p.Foreground = light.Foreground
	}
	if p.Grid == nil {
		p.Grid = mixColor(p.Background, p.Foreground, 0.14)
	}
	if len(p.Series) == 0 {
		p.Series = light.Series
	}
	return p
}

// toDrawing converts any colour to go-chart's non-premultiplied colour. A
// fully transparent colour becomes an almost-transparent one, because
// go-chart treats the all-zero colour as "unset" and substitutes white.
func toDrawing(c color.Color) drawing.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	if n.A == 0 {
		return drawing.Color{R: 1, G: 1, B: 1, A: 0}
	}
	return drawing.Color{R: n.R, G: n.G, B: n.B, A: n.A}
}

// mixColor returns a + t·(b − a), opaque.
func mixColor(a, b color.Color, t float64) color.NRGBA {
	na := color.NRGBAModel.Convert(a).(color.NRGBA)
	nb := color.NRGBAModel.Convert(b).(color.NRGBA)
	mix := func(x, y uint8) uint8 {
		return uint8(math.Round(float64(x) + t*(float64(y)-float64(x))))
	}
	return color.NRGBA{R: mix(na.R, nb.R), G: mix(na.G, nb.G), B: mix(na.B, nb.B), A: 0xFF}
}

func isGap(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

func wrapIndex(i, n int) int {
	if n <= 0 {
		return 0
	}
	i %= n
	if i < 0 {
		i += n
	}
	return i
}

func clampInt(v, lo, hi int) int { return max(lo, min(v, hi)) }
