package chart

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/golang/freetype"
	"github.com/golang/freetype/truetype"

	"github.com/kovara/desktop/engine/results"
)

// The request timeline of one level: every request a bar on its user's
// row, from the moment it was sent to its last token, the wait for the
// first token shaded lighter than the streaming, stalls and failures
// marked (docs/plans.md, "The request timeline"). It is drawn here
// directly into the image rather than through go-chart: hundreds of rows
// of crisp rectangles are what it is made of, and go-chart has neither
// horizontal bars nor labelled category rows.

// NoTimeline is said instead of a timeline for a run saved before every
// request was kept (results files without local.levels[].samples).
const NoTimeline = "This run was saved before requests were kept one by one; it has no timeline."

// NoSharedTimeline is said instead of runs' timelines side by side when
// they kept no level of the same number of users.
const NoSharedTimeline = "These runs kept no level of the same number of users: no timelines to set side by side."

// Stall marking: a gap between two chunks of one answer is a stall when
// it is at least stallFactor times the level's median gap and at least
// stallFloor seconds, so the ordinary jitter of a decode is never marked.
const (
	stallFactor = 10
	stallFloor  = 0.25
	// chunkTickMaxRequests: a level of at most this many requests draws
	// each chunk's arrival as a notch in its bar (where they are far
	// enough apart to see).
	chunkTickMaxRequests = 64
	// stallSampleMax bounds the gaps the median is taken from.
	stallSampleMax = 8192
)

// TimelineLevel is a level whose requests were kept: one choice of a
// timeline.
type TimelineLevel struct {
	Concurrency int
	Partial     bool // the level a stop interrupted
}

// Label names the level in a chooser: "9 users", "1 user", "4 users
// (stopped)".
func (l TimelineLevel) Label() string {
	s := strconv.Itoa(l.Concurrency) + " users"
	if l.Concurrency == 1 {
		s = "1 user"
	}
	if l.Partial {
		s += " (stopped)"
	}
	return s
}

// TimelineLevels are the levels of f that kept their requests, in the
// file's order; none for a file saved before samples were kept.
func TimelineLevels(f *results.File) []TimelineLevel {
	var out []TimelineLevel
	for _, l := range f.Local.Levels {
		if l.Samples != nil {
			out = append(out, TimelineLevel{Concurrency: l.Concurrency, Partial: l.Partial})
		}
	}
	return out
}

// TimelineTitle is the title of a level's timeline (and, through
// FileName, its PNG's name).
func TimelineTitle(l TimelineLevel) string {
	return "Every request at " + l.Label()
}

// TimelineRequest is one request on the timeline. Times are seconds from
// the level's start.
type TimelineRequest struct {
	Slot       int
	Start, End float64
	// FirstToken is when its first text arrived; NaN when none came.
	FirstToken float64
	// Error is the failure's class; empty for a success.
	Error string
	// Stalls are the spans of its answer with no token for at least the
	// spec's Stall.
	Stalls [][2]float64
	// Chunks are its chunks' arrivals, kept only for a spec with
	// ChunkTicks.
	Chunks []float64
}

// TimelineSpec is one level's requests ready to draw at any size: the
// samples are decoded once (LevelTimeline), then RenderTimeline draws
// them as often as a window is resized.
type TimelineSpec struct {
	Title string
	// Subtitle names the run under the title, as Spec's does.
	Subtitle string
	Slots    int
	Requests []TimelineRequest
	// Span is how many seconds from the level's start the x axis covers at
	// least (the level's window, or its last request's end if later). Set
	// two timelines to the larger of their spans to draw them on one
	// scale.
	Span float64
	// Stall is the least gap, in seconds, drawn as a stall (0: none).
	Stall float64
	// ChunkTicks draws each chunk's arrival as a notch in its bar, where
	// the notches are at least a few pixels apart.
	ChunkTicks bool

	// Width, Height and Scale as in Spec: zero means 640×360 at scale 1.
	Width, Height int
	Scale         float64
	Palette       Palette
}

// errNoRequests says a level kept no request to draw.
var errNoRequests = errors.New("chart: the level kept no request to draw")

// ResultTimeline is the timeline of f's level at concurrency c.
func ResultTimeline(f *results.File, c int, p Palette) (TimelineSpec, error) {
	for _, l := range TimelineLevels(f) {
		if l.Concurrency == c {
			return LevelTimeline(TimelineTitle(l), f.SamplesAt(c), p)
		}
	}
	return TimelineSpec{}, fmt.Errorf("chart: no requests were kept at %d users", c)
}

// LevelTimeline decodes a level's samples into a timeline: times from
// the level's start in seconds, the stalls found (stallFactor, stallFloor)
// and, for a level of few requests, every chunk's arrival.
func LevelTimeline(title string, s *results.LevelSamples, p Palette) (TimelineSpec, error) {
	if s == nil || len(s.Requests) == 0 {
		return TimelineSpec{}, errNoRequests
	}
	spec := TimelineSpec{
		Title:      title,
		Slots:      s.Slots,
		Span:       float64(s.EndUs-s.StartUs) / 1e6,
		ChunkTicks: len(s.Requests) <= chunkTickMaxRequests,
		Palette:    p,
		Requests:   make([]TimelineRequest, len(s.Requests)),
	}
	sec := func(us int64) float64 { return float64(us-s.StartUs) / 1e6 }

	// Every gap of the level, decoded once: from[i] is where request i's
	// gaps begin.
	total := 0
	for _, r := range s.Requests {
		// Room for every gap at once (growing the slice cost five
		// times the decoding), never more than the text can hold: a
		// varint is at least a byte, four base64 characters three.
		total += min(max(r.ChunkCount-1, 0), len(r.Gaps)*3/4)
	}
	gaps := make([]int64, 0, total)
	from := make([]int, len(s.Requests)+1)
	for i, r := range s.Requests {
		if r.Slot < 0 {
			return TimelineSpec{}, fmt.Errorf("chart: request %d of the level has user %d", i+1, r.Slot)
		}
		spec.Slots = max(spec.Slots, r.Slot+1)
		from[i] = len(gaps)
		var err error
		if gaps, err = results.DecodeGaps(gaps, r.Gaps); err != nil {
			return TimelineSpec{}, fmt.Errorf("chart: request %d of the level: %w", i+1, err)
		}
	}
	from[len(s.Requests)] = len(gaps)
	spec.Stall = stallThreshold(gaps)

	for i, r := range s.Requests {
		tr := TimelineRequest{
			Slot: r.Slot, Start: sec(r.StartUs), End: sec(r.EndUs),
			FirstToken: math.NaN(), Error: r.Error,
		}
		if r.TTFTUs >= 0 {
			at := r.StartUs + r.TTFTUs
			tr.FirstToken = sec(at)
			if spec.ChunkTicks {
				tr.Chunks = append(tr.Chunks, tr.FirstToken)
			}
			for _, g := range gaps[from[i]:from[i+1]] {
				if spec.Stall > 0 && float64(g)/1e6 >= spec.Stall {
					tr.Stalls = append(tr.Stalls, [2]float64{sec(at), sec(at + g)})
				}
				at += g
				if spec.ChunkTicks {
					tr.Chunks = append(tr.Chunks, sec(at))
				}
			}
		}
		spec.Span = math.Max(spec.Span, tr.End)
		spec.Requests[i] = tr
	}
	return spec, nil
}

// stallThreshold is the least gap (seconds) that is a stall: stallFactor
// times the median gap, and never under stallFloor. The median is taken
// over at most stallSampleMax gaps spread evenly through the level.
func stallThreshold(gaps []int64) float64 {
	if len(gaps) == 0 {
		return 0
	}
	step := max(1, (len(gaps)+stallSampleMax-1)/stallSampleMax)
	sample := make([]int64, 0, len(gaps)/step+1)
	for i := 0; i < len(gaps); i += step {
		sample = append(sample, gaps[i])
	}
	slices.Sort(sample)
	median := float64(sample[len(sample)/2]) / 1e6
	return math.Max(stallFactor*median, stallFloor)
}

// Layout of a timeline, in pixels at scale 1 (the text sizes, paddings
// and colours follow Render's, so a timeline sits among the other charts).
const (
	timelineBarMaxPx   = 22.0 // a bar is never thicker, however few the users
	timelineCrossPx    = 4.0  // half the width of a failure's ×
	timelineTickGapPx  = 3.0  // least median spacing of chunk notches
	timelineLabelGapPx = 6.0
	waitShade          = 0.5 // the wait's colour: the bar's, this far from the background
)

// Colours of the timeline, by index into Palette.Series.
const (
	timelineOK     = 0 // blue
	timelineFailed = 6 // red
	timelineStall  = 7 // ochre
)

// timelineColors are the timeline's resolved colours.
type timelineColors struct {
	bg, fg, grid, axis, stripe color.RGBA
	wait, stream               color.RGBA // a success
	failWait, failStream       color.RGBA // a failure
	stall, cross               color.RGBA
}

func timelinePalette(p Palette) timelineColors {
	p = resolvePalette(p)
	series := func(i int) color.Color { return p.Series[wrapIndex(i, len(p.Series))] }
	rgba := func(c color.Color) color.RGBA {
		n := color.NRGBAModel.Convert(c).(color.NRGBA)
		return color.RGBA{R: n.R, G: n.G, B: n.B, A: 0xFF}
	}
	return timelineColors{
		bg:         rgba(p.Background),
		fg:         rgba(p.Foreground),
		grid:       rgba(p.Grid),
		axis:       rgba(mixColor(p.Background, p.Foreground, 0.45)),
		stripe:     rgba(mixColor(p.Background, p.Foreground, 0.05)),
		wait:       rgba(mixColor(p.Background, series(timelineOK), waitShade)),
		stream:     rgba(series(timelineOK)),
		failWait:   rgba(mixColor(p.Background, series(timelineFailed), waitShade)),
		failStream: rgba(series(timelineFailed)),
		stall:      rgba(series(timelineStall)),
		cross:      rgba(series(timelineFailed)),
	}
}

// timelineLayout is where everything of a timeline goes.
type timelineLayout struct {
	scale           float64
	textPx, titlePx float64
	// title and subtitle as drawn: cut short to the image's width.
	title, subtitle                 string
	titleBaseline, subtitleBaseline int
	legend                          [][]timelineLegendEntry
	legendBaseline                  int
	rowStep                         int // between legend rows

	plot  image.Rectangle // the rows; x = 0 s at plot.Min.X
	axisS float64         // seconds at plot.Max.X
	rowH  float64         // one user's row (may be under a pixel)
	barH  float64         // a bar's thickness within its row
	ticks []timelineTick  // x
	users []int           // labelled users, 0-based
	xName int             // the x axis name's baseline
}

type timelineTick struct {
	sec   float64
	label string
}

// timelineLegendEntry is one item of the legend: a swatch and its words.
type timelineLegendEntry struct {
	text   string
	swatch func(img *image.RGBA, r image.Rectangle)
	width  int
}

// x is the pixel column of a time in seconds.
func (l *timelineLayout) x(sec float64) float64 {
	return float64(l.plot.Min.X) + sec/l.axisS*float64(l.plot.Dx())
}

// row is the pixel rows [top, bottom) of a user's row.
func (l *timelineLayout) row(slot int) (int, int) {
	top := int(math.Round(float64(l.plot.Min.Y) + float64(slot)*l.rowH))
	bottom := int(math.Round(float64(l.plot.Min.Y) + float64(slot+1)*l.rowH))
	return top, max(bottom, top+1)
}

// bar is the pixel rows [top, bottom) of a user's bars: centred in the
// row, thinner than it where rows are tall enough to leave a gap.
func (l *timelineLayout) bar(slot int) (int, int) {
	mid := float64(l.plot.Min.Y) + (float64(slot)+0.5)*l.rowH
	top := int(math.Round(mid - l.barH/2))
	return top, max(int(math.Round(mid+l.barH/2)), top+1)
}

// RenderTimeline draws a timeline into a new image of spec.Width ×
// spec.Height pixels. Safe for concurrent use.
func RenderTimeline(spec TimelineSpec) (*image.RGBA, error) {
	width, height, err := renderSize(spec.Width, spec.Height)
	if err != nil {
		return nil, err
	}
	if spec.Slots <= 0 || len(spec.Requests) == 0 {
		return nil, errNoRequests
	}
	font, err := chartFont()
	if err != nil {
		return nil, fmt.Errorf("chart: loading font: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	col := timelinePalette(spec.Palette)
	fill(img, img.Bounds(), col.bg)

	pen := newTextPen(img, font)
	l := layoutTimeline(spec, width, height, pen, col)
	drawTimelineFrame(img, l, col, spec.Slots)
	drawTimelineBars(img, l, col, spec)

	// Words last, over everything.
	ctx := pen.context(l.titlePx, col.fg)
	if l.title != "" {
		pen.draw(ctx, l.title, int(math.Round(padOuter*l.scale)), l.titleBaseline)
	}
	ctx = pen.context(l.textPx, col.fg)
	if l.subtitle != "" {
		pen.draw(ctx, l.subtitle, int(math.Round(padOuter*l.scale)), l.subtitleBaseline)
	}
	right := width - int(math.Round(padRight*l.scale))
	swatchW := int(math.Round(legendSwatch * l.scale))
	gap := int(math.Round(legendGapPx * l.scale))
	for ri, row := range l.legend {
		total := -gap
		for _, e := range row {
			total += gap + e.width
		}
		x := right - total
		base := l.legendBaseline + ri*l.rowStep
		mid := base - int(math.Round(l.textPx*0.35))
		for _, e := range row {
			e.swatch(img, image.Rect(x, mid-int(math.Round(4.5*l.scale)), x+swatchW, mid+int(math.Round(4.5*l.scale))))
			pen.draw(ctx, e.text, x+swatchW+int(math.Round(5*l.scale)), base)
			x += e.width + gap
		}
	}
	labelGap := int(math.Round(timelineLabelGapPx * l.scale))
	for _, u := range l.users {
		top, bottom := l.row(u)
		text := "user " + strconv.Itoa(u+1)
		w := pen.measure(ctx, text)
		pen.draw(ctx, text, l.plot.Min.X-labelGap-w, (top+bottom)/2+int(math.Round(l.textPx*0.35)))
	}
	tickBase := l.plot.Max.Y + int(math.Round(5*l.scale+l.textPx))
	for _, t := range l.ticks {
		if t.label == "" {
			continue
		}
		w := pen.measure(ctx, t.label)
		x := int(math.Round(l.x(t.sec))) - w/2
		x = min(max(x, 0), width-w)
		pen.draw(ctx, t.label, x, tickBase)
	}
	const xName = "seconds from the level's start"
	pen.draw(ctx, xName, l.plot.Min.X+(l.plot.Dx()-pen.measure(ctx, xName))/2, l.xName)
	return img, nil
}

// layoutTimeline places the title, the legend, the rows and the axes.
func layoutTimeline(spec TimelineSpec, width, height int, pen *textPen, col timelineColors) *timelineLayout {
	scale := spec.Scale
	if scale <= 0 || isGap(scale) {
		scale = 1
	}
	px := func(v float64) int { return int(math.Round(v * scale)) }
	l := &timelineLayout{scale: scale, textPx: textFontPx * scale, titlePx: titleFontPx * scale}
	ctx := pen.context(l.textPx, col.fg)

	pad := px(padOuter)
	top := pad
	l.title = pen.fit(pen.context(l.titlePx, col.fg), spec.Title, width-2*pad)
	l.subtitle = pen.fit(ctx, spec.Subtitle, width-2*pad)
	if l.title != "" {
		l.titleBaseline = top + int(math.Round(l.titlePx*0.92))
		top += int(math.Round(l.titlePx * 1.45))
	}
	if l.subtitle != "" {
		l.subtitleBaseline = top + int(math.Round(l.textPx*0.92))
		top += int(math.Round(l.textPx * 1.6))
	}
	l.rowStep = int(math.Round(l.textPx * 1.5))
	l.legendBaseline = top + int(math.Round(l.textPx*0.92))
	l.legend = timelineLegend(spec, col, width-2*pad, scale, func(s string) int { return pen.measure(ctx, s) })
	top += max(len(l.legend), 1)*l.rowStep + px(6)

	bottom := height - pad - int(math.Round(l.textPx*1.6)) - px(22)
	plotH := max(bottom-top, 10)
	l.rowH = float64(plotH) / float64(spec.Slots)
	l.barH = l.rowH
	if l.rowH >= 5 {
		l.barH = math.Min(l.rowH*0.7, timelineBarMaxPx*scale)
	}

	// Users labelled: every one where the rows are tall enough for their
	// words, else every k-th (k a round number), always the first and the
	// last.
	minGap := l.textPx * 1.3
	k := 1
	for _, step := range []int{1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000} {
		k = step
		if float64(step)*l.rowH >= minGap {
			break
		}
	}
	candidates := []int{0}
	for u := k - 1; u < spec.Slots; u += k {
		if u > 0 {
			candidates = append(candidates, u)
		}
	}
	if last := spec.Slots - 1; candidates[len(candidates)-1] != last {
		candidates = append(candidates, last)
	}
	for _, u := range candidates {
		if n := len(l.users); n > 0 && float64(u-l.users[n-1])*l.rowH < minGap {
			if u != spec.Slots-1 {
				continue
			}
			if n > 1 { // the last user displaces its too-close neighbour
				l.users = l.users[:n-1]
			} else {
				continue
			}
		}
		l.users = append(l.users, u)
	}
	labelW := pen.measure(ctx, "user "+strconv.Itoa(spec.Slots))
	left := pad + labelW + px(timelineLabelGapPx)
	right := width - px(padRight)
	l.plot = image.Rect(left, top, max(right, left+10), top+plotH)

	// The x axis: round ticks from 0 to the first round number past the
	// span.
	span := spec.Span
	for _, r := range spec.Requests {
		span = math.Max(span, r.End)
	}
	if span <= 0 || isGap(span) {
		span = 1
	}
	inner := niceTicks(0, span, clampInt(l.plot.Dx()/max(1, px(90)), 2, 10))
	f := tickFormatter(inner)
	l.axisS = inner[len(inner)-1].Value
	lastRight := math.Inf(-1)
	for _, t := range inner {
		label := f(t.Value)
		w := float64(pen.measure(ctx, label))
		centre := l.x(t.Value)
		if centre-w/2 < lastRight+8*scale {
			label = ""
		} else {
			lastRight = centre + w/2
		}
		l.ticks = append(l.ticks, timelineTick{sec: t.Value, label: label})
	}
	l.xName = height - pad
	return l
}

// timelineLegend is the legend: what the two shades mean, and the stalls
// and failures when there are any, with their counts, flowed into
// right-aligned rows no wider than avail.
func timelineLegend(spec TimelineSpec, col timelineColors, avail int, scale float64, measure func(string) int) [][]timelineLegendEntry {
	rect := func(c color.RGBA) func(*image.RGBA, image.Rectangle) {
		return func(img *image.RGBA, r image.Rectangle) { fill(img, r, c) }
	}
	entries := []timelineLegendEntry{
		{text: "waiting for the first token", swatch: rect(col.wait)},
		{text: "streaming", swatch: rect(col.stream)},
	}
	stalls := 0
	failures := map[string]int{}
	for _, r := range spec.Requests {
		stalls += len(r.Stalls)
		if r.Error != "" {
			failures[r.Error]++
		}
	}
	if stalls > 0 {
		entries = append(entries, timelineLegendEntry{
			text:   fmt.Sprintf("stalled: no token for %s or more (%d)", results.Seconds(spec.Stall*1000), stalls),
			swatch: rect(col.stall),
		})
	}
	if len(failures) > 0 {
		arm := int(math.Round(timelineCrossPx * scale))
		entries = append(entries, timelineLegendEntry{
			text: "failed (" + results.ErrorClasses(failures) + ")",
			swatch: func(img *image.RGBA, r image.Rectangle) {
				fill(img, image.Rect(r.Min.X, r.Min.Y+r.Dy()/4, (r.Min.X+r.Max.X)/2, r.Max.Y-r.Dy()/4), col.failStream)
				cross(img, (r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2, arm, scale, col)
			},
		})
	}
	var rows [][]timelineLegendEntry
	gap := int(math.Round(legendGapPx * scale))
	rowW := 0
	for _, e := range entries {
		e.width = int(math.Round((legendSwatch+5)*scale)) + measure(e.text)
		if len(rows) == 0 || rowW+gap+e.width > avail {
			rows = append(rows, nil)
			rowW = -gap
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		rowW += gap + e.width
	}
	return rows
}

// drawTimelineFrame draws what is behind the bars: every other row
// faintly striped where rows are tall enough to tell apart, the grid at
// the x ticks, the axes and a tick at each labelled user.
func drawTimelineFrame(img *image.RGBA, l *timelineLayout, col timelineColors, slots int) {
	if l.rowH >= 4 {
		for u := 1; u < slots; u += 2 {
			top, bottom := l.row(u)
			fill(img, image.Rect(l.plot.Min.X, top, l.plot.Max.X, bottom), col.stripe)
		}
	}
	line := max(1, int(math.Round(l.scale)))
	for _, t := range l.ticks {
		x := int(math.Round(l.x(t.sec)))
		if x > l.plot.Min.X {
			fill(img, image.Rect(x, l.plot.Min.Y, x+line, l.plot.Max.Y), col.grid)
		}
		fill(img, image.Rect(x, l.plot.Max.Y, x+line, l.plot.Max.Y+int(math.Round(4*l.scale))), col.axis)
	}
	fill(img, image.Rect(l.plot.Min.X-line, l.plot.Min.Y, l.plot.Min.X, l.plot.Max.Y+line), col.axis)
	fill(img, image.Rect(l.plot.Min.X-line, l.plot.Max.Y, l.plot.Max.X, l.plot.Max.Y+line), col.axis)
	tick := int(math.Round(3 * l.scale))
	for _, u := range l.users {
		top, bottom := l.row(u)
		mid := (top + bottom) / 2
		fill(img, image.Rect(l.plot.Min.X-line-tick, mid, l.plot.Min.X-line, mid+line), col.axis)
	}
}

// drawTimelineBars draws every request: its wait, its streaming, its
// stalls and chunk notches, then every failure's × over all bars.
func drawTimelineBars(img *image.RGBA, l *timelineLayout, col timelineColors, spec TimelineSpec) {
	clip := l.plot
	xi := func(sec float64) int { return int(math.Round(l.x(sec))) }
	// Chunk notches only where they stay a few pixels apart: the level's
	// median spacing on screen.
	ticks := spec.ChunkTicks && l.barH >= 5 && medianSpacing(spec.Requests)*float64(l.plot.Dx())/l.axisS >= timelineTickGapPx*l.scale
	for _, r := range spec.Requests {
		top, bottom := l.bar(r.Slot)
		wait, stream := col.wait, col.stream
		if r.Error != "" {
			wait, stream = col.failWait, col.failStream
		}
		x0, x2 := xi(r.Start), xi(r.End)
		x2 = max(x2, x0+1)
		x1 := x2
		if !isGap(r.FirstToken) {
			x1 = min(max(xi(r.FirstToken), x0), x2)
		}
		fill(img, image.Rect(x0, top, x1, bottom).Intersect(clip), wait)
		fill(img, image.Rect(x1, top, x2, bottom).Intersect(clip), stream)
		if x2-x0 >= 4 {
			// A pixel of background where it was sent: one user's
			// back-to-back requests stay apart.
			fill(img, image.Rect(x0, top, x0+1, bottom).Intersect(clip), col.bg)
		}
		for _, s := range r.Stalls {
			a, b := xi(s[0]), xi(s[1])
			fill(img, image.Rect(a, top, max(b, a+1), bottom).Intersect(clip), col.stall)
		}
		if ticks {
			for _, c := range r.Chunks {
				x := xi(c)
				fill(img, image.Rect(x, top, x+1, bottom).Intersect(clip), col.bg)
			}
		}
	}
	arm := int(math.Round(timelineCrossPx * l.scale))
	for _, r := range spec.Requests {
		if r.Error == "" {
			continue
		}
		top, bottom := l.bar(r.Slot)
		cross(img, max(xi(r.End), xi(r.Start)+1), (top+bottom)/2, arm, l.scale, col)
	}
}

// medianSpacing is the median time between consecutive chunks of one
// answer, over the requests that kept their chunks; +Inf when none did.
func medianSpacing(rs []TimelineRequest) float64 {
	var d []float64
	for _, r := range rs {
		for i := 1; i < len(r.Chunks); i++ {
			d = append(d, r.Chunks[i]-r.Chunks[i-1])
		}
	}
	if len(d) == 0 {
		return math.Inf(1)
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// cross draws a failure's ×: centred at (cx, cy), arm pixels each way,
// in the failure colour with a background halo, so it shows on its own
// bar, on another and on nothing.
func cross(img *image.RGBA, cx, cy, arm int, scale float64, col timelineColors) {
	thick := max(2, int(math.Round(1.5*scale)))
	stroke := func(t int, c color.RGBA) {
		for d := -arm; d <= arm; d++ {
			fill(img, image.Rect(cx+d-t/2, cy+d-t/2, cx+d-t/2+t, cy+d-t/2+t), c)
			fill(img, image.Rect(cx+d-t/2, cy-d-t/2, cx+d-t/2+t, cy-d-t/2+t), c)
		}
	}
	stroke(thick+2, col.bg)
	stroke(thick, col.cross)
}

// fill paints r (clipped to the image) in an opaque colour: its first
// row pixel by pixel, the others copied from it. (draw.Draw with an
// image.Uniform allocated once per rectangle, nine in ten of a
// timeline's allocations.)
func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return
	}
	w := 4 * r.Dx()
	first := img.Pix[img.PixOffset(r.Min.X, r.Min.Y):][:w]
	for i := 0; i < w; i += 4 {
		first[i], first[i+1], first[i+2], first[i+3] = c.R, c.G, c.B, c.A
	}
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		copy(img.Pix[img.PixOffset(r.Min.X, y):][:w], first)
	}
}

// textPen draws and measures text in the charts' font with freetype
// directly. One context per size: changing a context's size empties its
// glyph cache.
type textPen struct {
	dst  *image.RGBA
	font *truetype.Font
	ctxs map[float64]*freetype.Context
}

func newTextPen(dst *image.RGBA, font *truetype.Font) *textPen {
	return &textPen{dst: dst, font: font, ctxs: map[float64]*freetype.Context{}}
}

// context is the pen's context at a size, drawing in c.
func (p *textPen) context(size float64, c color.RGBA) *freetype.Context {
	ctx, ok := p.ctxs[size]
	if !ok {
		ctx = freetype.NewContext()
		ctx.SetDPI(72) // a size in points is then a size in pixels
		ctx.SetFont(p.font)
		ctx.SetFontSize(size)
		ctx.SetDst(p.dst)
		p.ctxs[size] = ctx
	}
	ctx.SetSrc(&image.Uniform{C: c})
	return ctx
}

// draw writes s with its baseline at y.
func (p *textPen) draw(ctx *freetype.Context, s string, x, y int) {
	ctx.SetClip(p.dst.Bounds())
	_, _ = ctx.DrawString(s, freetype.Pt(x, y)) // errors only for a font without glyphs
}

// measure is s's advance in pixels, drawn nowhere.
func (p *textPen) measure(ctx *freetype.Context, s string) int {
	ctx.SetClip(image.Rectangle{})
	end, err := ctx.DrawString(s, freetype.Pt(0, 0))
	if err != nil {
		return 0
	}
	return end.X.Ceil()
}

// fit is s cut short to avail pixels (fitText).
func (p *textPen) fit(ctx *freetype.Context, s string, avail int) string {
	return fitText(s, avail, 0, func(s string, _ float64) (int, int) { return p.measure(ctx, s), 0 })
}
