package chart

import (
	"slices"

	"github.com/kovara/desktop/engine/results"
)

// Titles of a rate result's two charts (docs/plans.md, the rate plan),
// which also name their PNG files.
const (
	RateLatencyTitle    = "Latency by offered rate"
	RateThroughputTitle = "Achieved rate and goodput by offered rate"
)

// RateOfferedName is the legend of the line where achieved equals
// offered: the rate a server that keeps up reaches.
const RateOfferedName = "offered req/s (all served)"

// RateCharts are what a rate result shows against the offered rate, on a
// log axis labelled at the rates measured (a sweep doubles): latency p50
// and p95 from each request's intended send, in ms; and, in req/s, the
// rate achieved and the goodput (with a service level) beside the offered
// rate itself, so where the server stops keeping up the achieved line
// falls away from it; goodput is drawn as dots. The two are apart because their units are: on one
// axis seconds of latency would flatten the rates.
func RateCharts(r *results.RateResult, p Palette) []Spec {
	if r.Replay != nil {
		return replayCharts(r.Replay, p)
	}
	series := func(s results.RateSeries, color int) Series {
		out := Series{Name: s.String(), Kind: Line, Color: color}
		for _, pt := range r.Points(s) {
			out.X, out.Y = append(out.X, pt.Rate), append(out.Y, pt.Y)
		}
		return out
	}
	achieved := series(results.RateAchieved, 0)
	// The offered line spans the rates with an achieved figure: a
	// partial rate has none, and no point of its own.
	offered := Series{Name: RateOfferedName, Kind: Line, Color: 3, X: achieved.X, Y: achieved.X}
	rates := []Series{offered, achieved}
	// Goodput as dots: where every request met the service level they
	// sit on the achieved line, which a second line would hide.
	g := series(results.RateGoodputRate, 2)
	g.Kind = Scatter
	rates = append(rates, g)
	frame := func(title, ylabel string, all ...Series) Spec {
		// A series with no point stays out of the legend: a p95 needs
		// more requests a rate than a short run sends.
		var s []Series
		for _, x := range all {
			if len(x.X) > 0 {
				s = append(s, x)
			}
		}
		return Spec{Title: title, XLabel: "offered rate (req/s)", YLabel: ylabel, XLog: true, YFromZero: true,
			XTicks: achieved.X, Series: s, Palette: p}
	}
	return []Spec{
		frame(RateLatencyTitle, "ms", series(results.RateLatencyP50, 0), series(results.RateLatencyP95, 1)),
		frame(RateThroughputTitle, "req/s", rates...),
	}
}

// RateResultCharts are every chart a rate result shows, the app's view
// and the HTML report alike: RateCharts' two, then, with conversations,
// RateTurnsChart.
func RateResultCharts(r *results.RateResult, p Palette) []Spec {
	specs := RateCharts(r, p)
	if s, ok := RateTurnsChart(r, p); ok {
		specs = append(specs, s)
	}
	return specs
}

// RateTurnsTitle is the title of a conversation run's chart by turn.
const RateTurnsTitle = "Time to first token by turn"

// RateTurnsChart is a run of conversations' time to first token (p50,
// from the intended send) at each turn, a line for each rate, so a cache
// that keeps the history shows as turns that do not grow slower; false
// without turns. A partial rate is left out, as in RateCharts.
func RateTurnsChart(r *results.RateResult, p Palette) (Spec, bool) {
	spec := Spec{Title: RateTurnsTitle, XLabel: "turn of the conversation", YLabel: "ms (p50)", YFromZero: true, XInteger: true, XPad: 0.2, Palette: p}
	turns := 0
	for _, l := range r.Sorted() {
		if l.Partial || len(l.ByTurn) == 0 {
			continue
		}
		s := Series{Name: results.RateName(l.Rate), Kind: Line, Color: len(spec.Series)}
		for _, t := range l.ByTurn {
			if v, ok := t.TTFTMs.At(50); ok {
				s.X, s.Y = append(s.X, float64(t.Turn)), append(s.Y, v)
				turns = max(turns, t.Turn)
			}
		}
		if len(s.X) > 0 {
			spec.Series = append(spec.Series, s)
		}
	}
	for t := 1; t <= turns; t++ {
		spec.XTicks = append(spec.XTicks, float64(t))
	}
	return spec, len(spec.Series) > 0
}

// Titles of a trace's replay's two charts.
const (
	ReplayTTFTTitle   = "Time to first token over the replay"
	ReplayPromptTitle = "Prompt tokens, replayed against recorded"
)

// replayCharts are what a trace's replay shows in place of the charts
// against the offered rate (it has one level): each request's time to
// first token at the time it was due, replayed beside what the client saw
// when it was recorded, so a queue or a cold cache shows where it came;
// and each request's prompt tokens replayed against recorded, on the line
// where they are equal, so a prompt made too long or short shows apart.
func replayCharts(m *results.ReplayMatch, p Palette) []Spec {
	var at, rec, rep, in, out []float64
	var atRec []float64
	for _, q := range m.Requests {
		if q.ReplayedTTFTMs != nil {
			at, rep = append(at, q.AtS), append(rep, *q.ReplayedTTFTMs)
		}
		if q.RecordedTTFTMs != nil {
			atRec, rec = append(atRec, q.AtS), append(rec, *q.RecordedTTFTMs)
		}
		if q.RecordedIn > 0 && q.ReplayedIn > 0 {
			in, out = append(in, float64(q.RecordedIn)), append(out, float64(q.ReplayedIn))
		}
	}
	ttft := Spec{Title: ReplayTTFTTitle, XLabel: "seconds into the replay (when each request was due)", YLabel: "ms", YFromZero: true, Palette: p,
		Series: []Series{{Name: "replayed", X: at, Y: rep, Kind: Scatter, Color: 0}}}
	if len(rec) > 0 {
		ttft.Series = append(ttft.Series, Series{Name: "when recorded", X: atRec, Y: rec, Kind: Scatter, Color: 1})
	}
	prompts := Spec{Title: ReplayPromptTitle, XLabel: "recorded prompt tokens", YLabel: "replayed prompt tokens", YFromZero: true, Palette: p,
		Series: []Series{{Name: "a request", X: in, Y: out, Kind: Scatter, Color: 0}}}
	if len(in) > 0 {
		top := slices.Max(in)
		prompts.Series = append(prompts.Series, Series{Name: "equal", X: []float64{0, top}, Y: []float64{0, top}, Kind: Line, Color: 3})
	}
	return []Spec{ttft, prompts}
}
