package chart

import (
	"image"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// queuedLevel is a level as a server with slots places serves users
// that each send their next request as soon as the last one ended: the
// requests beyond the slots wait in its queue (first come, first
// served). Each prompt takes prefill, each token interval seconds.
func queuedLevel(users, slots, requests, tokens int, prefill, interval float64) *results.LevelSamples {
	const us = 1e6
	free := make([]float64, slots) // when each server slot is free again
	next := make([]float64, users) // when each user sends again
	for u := range next {
		next[u] = float64(u) * 0.002 // they start a few ms apart
	}
	s := &results.LevelSamples{Slots: users}
	gaps := make([]int64, tokens-1)
	for i := range gaps {
		gaps[i] = int64(interval * us)
	}
	enc := results.EncodeGaps(gaps)
	for range requests {
		u := 0 // the user who sends first
		for j := range next {
			if next[j] < next[u] {
				u = j
			}
		}
		k := 0 // the slot free first
		for j := range free {
			if free[j] < free[k] {
				k = j
			}
		}
		sent := next[u]
		begin := math.Max(sent, free[k])
		first := begin + prefill
		end := first + float64(tokens-1)*interval
		free[k], next[u] = end, end
		s.Requests = append(s.Requests, results.RequestSample{
			Slot: u, StartUs: int64(sent * us), EndUs: int64(end * us),
			TTFTUs: int64((first - sent) * us), ChunkCount: tokens, Gaps: enc,
		})
		s.EndUs = max(s.EndUs, int64(end*us))
	}
	slices.SortStableFunc(s.Requests, func(a, b results.RequestSample) int { return int(a.StartUs - b.StartUs) })
	return s
}

// handLevel is a small level with one of everything, at known times
// (seconds): user 1 waits 0–1 and streams 1–3; user 2 times out with no
// text 0–1.5, reconnects and streams 1.8–3.6 with a stall 2.2–3.2; user 3
// streams 0.4–2 and then loses its connection.
func handLevel() *results.LevelSamples {
	const ms = 1000
	regular := func(from, to float64) []int64 { // a gap every 20 ms
		var g []int64
		for t := from; t < to-1e-9; t += 0.02 {
			g = append(g, 20*ms)
		}
		return g
	}
	user2 := append(regular(1.8, 2.2), 1000*ms)
	user2 = append(user2, regular(3.2, 3.6)...)
	req := func(slot int, start, first, end float64, gaps []int64, class string) results.RequestSample {
		r := results.RequestSample{
			Slot: slot, StartUs: int64(start * 1e6), EndUs: int64(end * 1e6), TTFTUs: -1,
			Error: class,
		}
		if !math.IsNaN(first) {
			r.TTFTUs = int64((first - start) * 1e6)
			r.ChunkCount = len(gaps) + 1
			r.Gaps = results.EncodeGaps(gaps)
		}
		return r
	}
	return &results.LevelSamples{
		StartUs: 0, EndUs: 3_800_000, Slots: 3,
		Requests: []results.RequestSample{
			req(0, 0, 1, 3, regular(1, 3), ""),
			req(1, 0, math.NaN(), 1.5, nil, "timeout"),
			req(2, 0.2, 0.4, 2, regular(0.4, 2), "connection"),
			req(1, 1.6, 1.8, 3.6, user2, ""),
		},
	}
}

// layoutOf is the layout RenderTimeline gives spec.
func layoutOf(t *testing.T, spec TimelineSpec) *timelineLayout {
	t.Helper()
	font, err := chartFont()
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, spec.Width, spec.Height))
	return layoutTimeline(spec, spec.Width, spec.Height, newTextPen(img, font), timelinePalette(spec.Palette))
}

func TestLevelTimeline(t *testing.T) {
	t.Parallel()
	spec, err := LevelTimeline("t", handLevel(), testLight)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := spec.Slots, 3; got != want {
		t.Errorf("slots %d, want %d", got, want)
	}
	if got, want := spec.Span, 3.8; math.Abs(got-want) > 1e-9 {
		t.Errorf("span %v s, want %v s (the level's window)", got, want)
	}
	// The median gap is 20 ms, ten times that is under the floor: a stall
	// is a gap of 250 ms or more, and the one second gap is the only one.
	if got, want := spec.Stall, stallFloor; got != want {
		t.Errorf("stall threshold %v s, want %v s", got, want)
	}
	var stalls [][2]float64
	for _, r := range spec.Requests {
		stalls = append(stalls, r.Stalls...)
	}
	if len(stalls) != 1 || math.Abs(stalls[0][0]-2.2) > 1e-5 || math.Abs(stalls[0][1]-3.2) > 1e-5 {
		t.Errorf("stalls %v, want one from 2.2 s to 3.2 s", stalls)
	}
	timeout := spec.Requests[1]
	if !math.IsNaN(timeout.FirstToken) || timeout.Error != "timeout" || timeout.End != 1.5 || len(timeout.Chunks) != 0 {
		t.Errorf("the timeout without text: %+v", timeout)
	}
	first := spec.Requests[0]
	if first.FirstToken != 1 || !spec.ChunkTicks || len(first.Chunks) != 101 || math.Abs(first.Chunks[100]-3) > 1e-6 {
		t.Errorf("user 1's request: first token %v s, chunk ticks %v, %d chunks ending at %v s; want 1 s, true, 101 ending at 3 s",
			first.FirstToken, spec.ChunkTicks, len(first.Chunks), first.Chunks[len(first.Chunks)-1])
	}

	// Many requests keep no chunks; a slot past the level's count widens it.
	many := queuedLevel(4, 4, chunkTickMaxRequests+1, 8, 0.01, 0.01)
	many.Requests[3].Slot = 6
	spec, err = LevelTimeline("t", many, testLight)
	if err != nil {
		t.Fatal(err)
	}
	if spec.ChunkTicks || spec.Requests[0].Chunks != nil {
		t.Errorf("%d requests keep their chunks", len(many.Requests))
	}
	if spec.Slots != 7 {
		t.Errorf("slots %d, want 7 (a request on user 7)", spec.Slots)
	}
	// Ten times the median gap, when that is above the floor.
	slow := queuedLevel(2, 2, 4, 8, 0.01, 0.05)
	if spec, err = LevelTimeline("t", slow, testLight); err != nil || math.Abs(spec.Stall-0.5) > 1e-9 {
		t.Errorf("stall threshold at 50 ms gaps: %v s (%v), want 0.5 s", spec.Stall, err)
	}

	bad := handLevel()
	bad.Requests[2].Gaps = "!!"
	if _, err := LevelTimeline("t", bad, testLight); err == nil || !strings.Contains(err.Error(), "request 3") {
		t.Errorf("undecodable gaps: %v", err)
	}
	bad = handLevel()
	bad.Requests[0].Slot = -1
	if _, err := LevelTimeline("t", bad, testLight); err == nil {
		t.Error("a negative user was drawn")
	}
	if _, err := LevelTimeline("t", &results.LevelSamples{Slots: 2}, testLight); err == nil {
		t.Error("a level without requests was drawn")
	}
}

func TestTimelineLevels(t *testing.T) {
	t.Parallel()
	f := &results.File{}
	f.Local.Levels = []results.LevelLocal{
		{Concurrency: 1, Samples: handLevel()},
		{Concurrency: 4}, // saved before samples: not offered
		{Concurrency: 8, Samples: handLevel(), Partial: true},
	}
	got := TimelineLevels(f)
	want := []TimelineLevel{{Concurrency: 1}, {Concurrency: 8, Partial: true}}
	if !slices.Equal(got, want) {
		t.Fatalf("levels %v, want %v", got, want)
	}
	for l, want := range map[TimelineLevel]string{
		got[0]: "1 user", got[1]: "8 users (stopped)", {Concurrency: 9}: "9 users",
	} {
		if l.Label() != want {
			t.Errorf("label %q, want %q", l.Label(), want)
		}
	}
	spec, err := ResultTimeline(f, 8, testLight)
	if err != nil || spec.Title != "Every request at 8 users (stopped)" || len(spec.Requests) != 4 {
		t.Errorf("timeline at 8: %q, %d requests, %v", spec.Title, len(spec.Requests), err)
	}
	if _, err := ResultTimeline(f, 4, testLight); err == nil {
		t.Error("a timeline of a level without samples")
	}
	if got := TimelineLevels(&results.File{}); len(got) != 0 {
		t.Errorf("an old file offers %v", got)
	}
}

// TestTimelinePixels holds each part of a timeline at the place it
// belongs: the wait shaded, the streaming solid, a failure's bar and ×,
// a stall, an empty row, the gap between rows, the users' labels.
func TestTimelinePixels(t *testing.T) {
	t.Parallel()
	for _, pal := range []Palette{testLight, testDark} {
		spec, err := LevelTimeline("Every request at 3 users", handLevel(), pal)
		if err != nil {
			t.Fatal(err)
		}
		spec.ChunkTicks = false // notches have their own test
		spec.Width, spec.Height = 640, 360
		img, err := RenderTimeline(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := layoutOf(t, spec)
		col := timelinePalette(pal)
		mid := func(slot int) int { top, bottom := l.bar(slot); return (top + bottom) / 2 }
		at := func(sec float64) int { return int(math.Round(l.x(sec))) }
		cases := []struct {
			what string
			x, y int
			want color.RGBA
		}{
			{"user 1 waiting", at(0.5), mid(0), col.wait},
			{"user 1 streaming", at(2), mid(0), col.stream},
			{"user 1 after its answer", at(3.4), mid(0), col.bg},
			{"user 2's timeout waiting", at(0.6), mid(1), col.failWait},
			{"user 2's timeout ×", at(1.5), mid(1), col.cross},
			{"user 2 again, waiting", at(1.7), mid(1), col.wait},
			{"user 2 streaming", at(2.1), mid(1), col.stream},
			{"user 2's stall", at(2.7), mid(1), col.stall},
			{"user 2 streaming after the stall", at(3.4), mid(1), col.stream},
			{"user 3's lost connection, streaming", at(1.2), mid(2), col.failStream},
			{"user 3's lost connection ×", at(2), mid(2), col.cross},
			{"user 3 after it", at(3.3), mid(2), col.bg},
			{"between users 1 and 2", at(2.3), l.plot.Min.Y + int(l.rowH) - 1, col.bg},
			{"row 2 stripe between its bars", at(1.55) + 8, l.plot.Min.Y + int(l.rowH) + 1, col.stripe},
		}
		for _, c := range cases {
			if got := img.RGBAAt(c.x, c.y); got != c.want {
				t.Errorf("%v: %s at (%d,%d) is %v, want %v", pal.Background, c.what, c.x, c.y, got, c.want)
			}
		}
		// Every colour the timeline tells apart is its own.
		named := map[color.RGBA]string{}
		for name, c := range map[string]color.RGBA{
			"background": col.bg, "stripe": col.stripe, "wait": col.wait, "stream": col.stream,
			"failed wait": col.failWait, "failed stream": col.failStream, "stall": col.stall,
		} {
			if other, ok := named[c]; ok {
				t.Errorf("%s and %s are both %v", name, other, c)
			}
			named[c] = name
		}
		// Each user's words left of its row, in the text colour.
		for slot := range 3 {
			top, bottom := l.row(slot)
			if n := countNear(img.SubImage(image.Rect(0, top, l.plot.Min.X-2, bottom)).(*image.RGBA), col.fg, 40); n < 10 {
				t.Errorf("%v: user %d's label has %d text pixels", pal.Background, slot+1, n)
			}
		}
		// The legend names the failures and the stall.
		if got := legendTexts(spec, col); !slices.Equal(got, []string{
			"waiting for the first token", "streaming",
			"stalled: no token for 250 ms or more (1)",
			"failed (connection: 1, timeout: 1)",
		}) {
			t.Errorf("legend %q", got)
		}
	}
}

func legendTexts(spec TimelineSpec, col timelineColors) []string {
	var out []string
	for _, row := range timelineLegend(spec, col, 10000, 1, func(s string) int { return 7 * len(s) }) {
		for _, e := range row {
			out = append(out, e.text)
		}
	}
	return out
}

// TestTimelineChunkNotches: a level of few requests shows each chunk's
// arrival as a notch in its bar where they are a few pixels apart, and
// none where they would merge.
func TestTimelineChunkNotches(t *testing.T) {
	t.Parallel()
	spec, err := LevelTimeline("t", handLevel(), testLight)
	if err != nil {
		t.Fatal(err)
	}
	col := timelinePalette(testLight)
	notches := func(spec TimelineSpec) int {
		img, err := RenderTimeline(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := layoutOf(t, spec)
		top, bottom := l.bar(0)
		y := (top + bottom) / 2
		n := 0
		for x := int(l.x(1.05)); x < int(l.x(2.95)); x++ {
			if img.RGBAAt(x, y) == col.bg {
				n++
			}
		}
		return n
	}
	// 20 ms apart: at 2400 px wide that is about 12 px, at 640 about 3.
	spec.Width, spec.Height = 2400, 300
	if n := notches(spec); n < 80 {
		t.Errorf("%d notches in user 1's 2 s of 20 ms chunks at 2400 px, want about 95", n)
	}
	spec.Width = 400
	if n := notches(spec); n != 0 {
		t.Errorf("%d notches at 400 px, where they would be 2 px apart", n)
	}
	spec.Width, spec.ChunkTicks = 2400, false
	if n := notches(spec); n != 0 {
		t.Errorf("%d notches without ChunkTicks", n)
	}
}

// TestTimelineRowsAt256Users: at 256 users the rows thin to a pixel or
// two, the labels to round numbers that never touch, from user 1 to user
// 256; every row still has its bars.
func TestTimelineRowsAt256Users(t *testing.T) {
	t.Parallel()
	spec, err := LevelTimeline("t", queuedLevel(256, 64, 512, 64, 0.05, 0.02), testDark)
	if err != nil {
		t.Fatal(err)
	}
	spec.Width, spec.Height = 1200, 675
	l := layoutOf(t, spec)
	if l.users[0] != 0 || l.users[len(l.users)-1] != 255 || len(l.users) < 8 || len(l.users) > 40 {
		t.Errorf("labelled users %v: want 1 … 256, a readable number of them", l.users)
	}
	for i := 1; i < len(l.users); i++ {
		if gap := float64(l.users[i]-l.users[i-1]) * l.rowH; gap < l.textPx*1.3 {
			t.Errorf("users %d and %d are labelled %.1f px apart", l.users[i-1]+1, l.users[i]+1, gap)
		}
	}
	img, err := RenderTimeline(spec)
	if err != nil {
		t.Fatal(err)
	}
	col := timelinePalette(testDark)
	for slot := range 256 {
		top, bottom := l.bar(slot)
		found := false
		for x := l.plot.Min.X; x < l.plot.Max.X && !found; x++ {
			for y := top; y < bottom; y++ {
				if c := img.RGBAAt(x, y); c == col.wait || c == col.stream {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("user %d's row (y %d–%d) has no bar", slot+1, top, bottom)
			break
		}
	}
}

// TestTimelineSharedSpan: two timelines given one span draw one second
// the same width, so two runs side by side compare by eye.
func TestTimelineSharedSpan(t *testing.T) {
	t.Parallel()
	short, _ := LevelTimeline("a", queuedLevel(4, 4, 8, 16, 0.05, 0.02), testLight)
	long, _ := LevelTimeline("b", queuedLevel(4, 2, 8, 16, 0.05, 0.02), testLight)
	if short.Span >= long.Span {
		t.Fatalf("spans %v and %v: the queued level should take longer", short.Span, long.Span)
	}
	short.Span = long.Span
	for _, s := range []*TimelineSpec{&short, &long} {
		s.Width, s.Height = 640, 360
	}
	a, b := layoutOf(t, short), layoutOf(t, long)
	if a.axisS != b.axisS || a.x(1) != b.x(1) {
		t.Errorf("one second ends at %v px and %v px (axes to %v s and %v s)", a.x(1), b.x(1), a.axisS, b.axisS)
	}
}

func TestRenderTimelineRefuses(t *testing.T) {
	t.Parallel()
	spec, _ := LevelTimeline("t", handLevel(), testLight)
	spec.Width, spec.Height = 100, 60
	if _, err := RenderTimeline(spec); err == nil {
		t.Error("drew at 100×60")
	}
	if _, err := RenderTimeline(TimelineSpec{Slots: 3}); err == nil {
		t.Error("drew a timeline without requests")
	}
}

// timelineGoldens are the timelines pinned under testdata/timeline: 9
// users queued for 8 slots with a stall and two failures (dark), and 256
// users × 512 requests against 64 slots (light).
func timelineGoldens(t testing.TB) map[string]TimelineSpec {
	np8 := queuedLevel(9, 8, 27, 48, 0.08, 0.02)
	// User 4's second answer stalls for 0.6 s; user 6's first loses its
	// connection after 20 tokens, and user 2's last times out unanswered.
	stalled := false
	for i := range np8.Requests {
		r := &np8.Requests[i]
		switch {
		case r.Slot == 3 && i > 9 && !stalled:
			stalled = true
			gaps, _ := results.DecodeGaps(nil, r.Gaps)
			gaps[20] += 600_000
			r.Gaps, r.EndUs = results.EncodeGaps(gaps), r.EndUs+600_000
			np8.EndUs = max(np8.EndUs, r.EndUs)
		case r.Slot == 5 && i < 9:
			gaps, _ := results.DecodeGaps(nil, r.Gaps)
			r.Gaps, r.ChunkCount, r.Error = results.EncodeGaps(gaps[:19]), 20, "connection"
			r.EndUs = r.StartUs + r.TTFTUs + 19*20_000
		case r.Slot == 1 && i > 18:
			r.TTFTUs, r.Gaps, r.ChunkCount, r.Error = -1, "", 0, "timeout"
		}
	}
	a, err := LevelTimeline("Every request at 9 users", np8, testDark)
	if err != nil {
		t.Fatal(err)
	}
	a.Width, a.Height = 800, 450
	b, err := LevelTimeline("Every request at 256 users", queuedLevel(256, 64, 512, 64, 0.05, 0.02), testLight)
	if err != nil {
		t.Fatal(err)
	}
	b.Width, b.Height = 800, 450
	return map[string]TimelineSpec{"np8": a, "users256": b}
}

func TestRenderTimelineGolden(t *testing.T) {
	t.Parallel()
	for name, spec := range timelineGoldens(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			img, err := RenderTimeline(spec)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "timeline", name+".png"), img)
		})
	}
}

// BenchmarkTimeline: decoding a level of 256 users × 512 requests of 256
// tokens (build) and drawing it at the CLI's PNG size and at a window's
// (docs/performance.md, "The request timeline").
func BenchmarkTimeline(b *testing.B) {
	level := queuedLevel(256, 64, 512, 256, 0.05, 0.02)
	b.Run("build-256x512", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := LevelTimeline("t", level, testDark); err != nil {
				b.Fatal(err)
			}
		}
	})
	spec, err := LevelTimeline("Every request at 256 users", level, testDark)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range [][2]int{{1200, 675}, {800, 400}} {
		spec.Width, spec.Height = size[0], size[1]
		b.Run("render-256x512-"+strconv.Itoa(size[0])+"x"+strconv.Itoa(size[1]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := RenderTimeline(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
