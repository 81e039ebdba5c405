package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// Noise says whether a change between two runs stands out of their noise.
type Noise int

const (
	// NoiseUnknown: not judged. A run has no raw samples at the level
	// (saved before they were kept, or imported from a published file),
	// its samples cannot be read, or the metric has no interval (counts,
	// error rate, output length, energy without its readings over time).
	NoiseUnknown Noise = iota
	// WithinNoise: the interval of the change holds no change at all, or
	// the change is smaller than NoiseMargin; the difference is not
	// called a change.
	WithinNoise
	// BeyondNoise: the whole interval lies on one side of no change, and
	// the change is at least NoiseMargin. Only such a change is called:
	// the verdict names it and the table colours it (Cell.Better).
	BeyondNoise
	// TooFew: the samples are too few to bound the statistic in one of
	// the runs (a tail percentile with fewer than minBeyond requests
	// beyond it, a level with fewer than two successes): not judged, and
	// the table says so instead of a colour.
	TooFew
	// TooWide: the interval's ends are more than MaxWidth times apart,
	// so the samples cannot bound the change (a tail that sits where a
	// few rare long gaps begin moves by half or double between resamples
	// of one run): not judged, whatever the interval leaves out.
	TooWide
)

func (n Noise) String() string {
	switch n {
	case NoiseUnknown:
		return "not judged"
	case WithinNoise:
		return "within noise"
	case BeyondNoise:
		return "beyond noise"
	case TooFew:
		return "too few samples to judge"
	case TooWide:
		return "too wide to tell"
	}
	return "Noise(" + strconv.Itoa(int(n)) + ")"
}

// The decision's settings (docs/method.md, "Telling a change from noise").
const (
	// Confidence is how sure the intervals are, for the whole table at
	// once: every judged change's interval together holds the true
	// changes with at least this probability (Bonferroni), so a table of
	// dozens of metrics still calls a false change rarely.
	Confidence = 0.95
	// NoiseMargin is the smallest change that is ever called one, however
	// narrow its interval: smaller differences come between runs for
	// reasons no single run shows in its own samples (a server's warm
	// state, clocks, what else ran on the machine).
	NoiseMargin = 0.05
	// MaxWidth is how far apart (as a ratio of 1 + change) an interval's
	// ends may be for its change to be judged. On seeded levels of 100
	// requests every mean's and median's interval stayed under 1.9 (most
	// under 1.5) and every call of a 10 % slowdown under 2, while an ITL
	// p99 at the edge of rare prompt-reading stalls spanned factors of 4
	// to 400 and called changes between runs of one server (+150.9 %,
	// CI +7.9 … +483.9 %, on two identical real runs).
	MaxWidth = 2.0
)

// noiseReport is what judging a table found, for the verdict's words.
type noiseReport struct {
	runs       int
	unsampled  []int    // runs (file indexes) with no raw samples at all
	asGroups   bool     // the runs are two repeated plans, judged as groups
	unreadable []string // "run 2 at concurrency 8 (why)"
}

// judgeNoise judges each change of a metric with an interval (statOf)
// against noise, from both runs' raw samples at the level: an interval
// for the relative change from each run's resampled spread (spreadOf),
// wide enough for every judged change of the run at once (bonferroniT),
// and a change only where that interval leaves out no change, is no
// wider than MaxWidth and the change is at least NoiseMargin. Then it
// settles the table: Better is set from that decision alone, so a cell
// is coloured exactly when the verdict calls its change (called).
func judgeNoise(rows []Row, files []*results.File) noiseReport {
	rep := noiseReport{runs: len(files), asGroups: len(files) > 1 && twoGroups(files)}
	defer settle(rows)
	for i, f := range files {
		if f != nil && len(f.Runs) > 0 && !f.HasSamples() {
			rep.unsampled = append(rep.unsampled, i)
		}
	}
	if rep.asGroups {
		// Two repeated plans are judged as groups only (repeatLines):
		// run by run, a whole run's shift would read as a change.
		return rep
	}
	type key struct{ file, level int }
	spreads := map[key]*levelSpread{}
	spreadAt := func(i, c int) *levelSpread {
		k := key{i, c}
		if s, seen := spreads[k]; seen {
			return s
		}
		var s *levelSpread
		if f := files[i]; f != nil {
			if ls := f.SamplesAt(c); ls != nil {
				var err error
				if s, err = spreadOf(ls); err != nil {
					rep.unreadable = append(rep.unreadable, fmt.Sprintf("%s at concurrency %d (%v)", runName(i), c, err))
				}
			}
		}
		spreads[k] = s
		return s
	}

	// A repeated plan among the runs shows how far whole runs move;
	// no change within that is called one.
	repeats := repeatSpread(files)
	type judged struct {
		cell        *Cell
		run, level  int
		id          string
		dir         Direction
		est, se, df float64 // the change's logarithm, its standard error and degrees of freedom
	}
	var todo []judged
	perRun := map[int]int{} // the changes judged of each run: its family
	for r := range rows {
		row := &rows[r]
		st, ok := statOf[row.Metric.ID]
		if !ok {
			continue
		}
		for i := 1; i < len(row.Cells); i++ {
			c := &row.Cells[i]
			if !c.HasDelta {
				continue
			}
			a, b := spreadAt(0, row.Concurrency), spreadAt(i, row.Concurrency)
			switch {
			case a == nil || b == nil:
				continue
			case sameGroup(files, 0, i):
				// A repeat of the baseline's own plan: what it differs by
				// is that plan's run-to-run noise, never a change.
				c.Noise = WithinNoise
				continue
			case !a.has[st] || !b.has[st]:
				// Too few to bound: the noise is unknown but large.
				c.Noise, c.Low, c.High = TooFew, -1, math.Inf(1)
				continue
			}
			va, vb := a.sd[st]*a.sd[st], b.sd[st]*b.sd[st]
			perRun[i]++
			todo = append(todo, judged{c, i, row.Concurrency, row.Metric.ID, row.Metric.Dir, math.Log(b.value[st] / a.value[st]), math.Sqrt(va + vb), welch(va, a.df[st], vb, b.df[st])})
		}
	}
	// Tokens per joule is output tokens over the energy: the throughput
	// (its resampled spread, as above) over the mean power (the spread
	// of the readings in the level's window). Judged where both runs
	// kept their readings over time; else shown, never called.
	for r := range rows {
		row := &rows[r]
		readings := powerReadingsOf[row.Metric.ID]
		if readings == nil {
			continue
		}
		for i := 1; i < len(row.Cells); i++ {
			c := &row.Cells[i]
			if !c.HasDelta || sameGroup(files, 0, i) {
				continue
			}
			a, b := spreadAt(0, row.Concurrency), spreadAt(i, row.Concurrency)
			pa, oka := powerSE(readings(files[0], row.Concurrency))
			pb, okb := powerSE(readings(files[i], row.Concurrency))
			if a == nil || b == nil || !a.has[statOutput] || !b.has[statOutput] || !oka || !okb {
				continue
			}
			va, vb := a.sd[statOutput]*a.sd[statOutput]+pa*pa, b.sd[statOutput]*b.sd[statOutput]+pb*pb
			perRun[i]++
			todo = append(todo, judged{c, i, row.Concurrency, row.Metric.ID, row.Metric.Dir, math.Log(c.Value / row.Cells[0].Value), math.Sqrt(va + vb),
				welch(va, a.df[statOutput], vb, b.df[statOutput])})
		}
	}

	for _, j := range todo {
		c := j.cell
		margin := max(NoiseMargin, repeats[spreadKey{j.level, j.id}])
		half := 0.0
		if j.se > 0 {
			half = bonferroniT(perRun[j.run], j.df) * j.se
		}
		c.Low, c.High = math.Expm1(j.est-half), math.Expm1(j.est+half)
		change := math.Expm1(j.est)
		switch {
		case 2*half > math.Log(MaxWidth):
			c.Noise = TooWide
		case math.Abs(change) >= margin && (c.Low > 0 || c.High < 0):
			c.Noise, c.Better = BeyondNoise, better(j.dir, sign(change))
		default:
			c.Noise = WithinNoise
		}
	}
	return rep
}

// called says whether the comparison calls a cell's change one: the one
// rule the table's colours and marks, each run's sentence and the
// reproduction verdict all read (calls).
func called(c Cell) bool { return c.Noise == BeyondNoise && c.Better != 0 }

// settle leaves a Kovara table's cells marked better or worse only where
// their change is called: a difference without an interval (a count, the
// error rate, energy), one of runs without raw samples, and one within
// noise, too few or too wide to judge are shown plain, as no sentence
// names them.
func settle(rows []Row) {
	for r := range rows {
		for i := range rows[r].Cells {
			if c := &rows[r].Cells[i]; c.Noise != BeyondNoise {
				c.Better = 0
			}
		}
	}
}

// call is one change a comparison calls.
type call struct {
	level  int
	metric Metric
	cell   Cell
}

// calls are the changes called for run i against the baseline, in the
// table's order: what its sentence names and its cells' colours show.
func calls(rows []Row, i int) []call {
	var out []call
	for _, r := range rows {
		if i < len(r.Cells) && called(r.Cells[i]) {
			out = append(out, call{r.Concurrency, r.Metric, r.Cells[i]})
		}
	}
	return out
}

// welch is the Welch–Satterthwaite degrees of freedom of a sum of two
// variances, each resting on its own degrees of freedom.
func welch(va, dfa, vb, dfb float64) float64 {
	if va+vb == 0 {
		return min(dfa, dfb)
	}
	return (va + vb) * (va + vb) / (va*va/dfa + vb*vb/dfb)
}

// Compared is the one verdict on these runs, with their Table. Which
// changes are called is decided once, below (judgeNoise), and everything
// shown reads that decision: each run's sentence in the verdict's Changes
// (for a run made again like the baseline, its reproduction verdict in
// its place), the cells' colours and marks (Cell.Better, set exactly on
// the called changes) and the legend. So the sentence, the table and the
// reproduction verdict cannot disagree; the CLI and the app show them and
// decide nothing of their own.
func Compared(files []*results.File, labels []string) (Verdict, []Row) {
	v := VerdictOf(files...)
	rows, rep := table(files, labels)
	if v.Comparable && len(files) > 1 {
		v.Changes = append(changeLines(rows, rep, files), repeatLines(files)...)
		for i := 1; i < len(files) && !rep.asGroups; i++ {
			if madeLike(files, i) && len(calls(rows, i)) > 0 {
				v.notReproduced = true
			}
		}
	}
	return v, rows
}

// madeLike says whether run i was made again like the baseline (run again
// like this, --like): its local.like names the baseline.
func madeLike(files []*results.File, i int) bool {
	if i <= 0 || i >= len(files) || files[0] == nil || files[i] == nil {
		return false
	}
	l := files[i].Local.Like
	return l != nil && l.CreatedAt == files[0].CreatedAt
}

// changeLines say, for each run against the baseline, the changes called
// by level (for a run made again like the baseline, whether it
// reproduced), and which runs' differences cannot be told from noise.
func changeLines(rows []Row, rep noiseReport, files []*results.File) []string {
	var lines []string
	for i := 1; i < rep.runs && !rep.asGroups; i++ {
		var l string
		switch {
		case madeLike(files, i):
			if l = Reproduction(rows, i); l != "" && rep.runs > 2 {
				l = "R" + runName(i)[1:] + ": " + l
			}
		case !slices.Contains(rep.unsampled, 0):
			l = runChanges(rows, i)
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	if smallChange(rows) && !rep.asGroups {
		lines = append(lines, singleRunsLine)
	}
	if len(rep.unsampled) > 0 {
		lines = append(lines, unsampledLine(rep))
	}
	for _, u := range rep.unreadable {
		lines = append(lines, "The raw samples of "+u+" cannot be read, so the differences there cannot be told from noise.")
	}
	return lines
}

// runShift is how far a whole run moved between runs in a row of one
// setting, with nothing inside either run showing it: four runs of a real
// llama-server on a machine where other work came and went gave 344, 372,
// 369 and 339 output tok/s at one user, each steady within itself
// (docs/method.md). A change beyond noise but under it is said with that
// caution.
const runShift = 0.10

// singleRunsLine is the caution.
var singleRunsLine = "Each run was measured once, and the intervals hold only the noise inside a run: other work on the machine or the server's state can shift a whole run without showing inside it (by 9 % between two runs in a row on a busy machine), so repeat the runs before trusting a change under " +
	strconv.FormatFloat(100*runShift, 'f', -1, 64) + " %."

// smallChange says whether some change beyond noise is under runShift.
func smallChange(rows []Row) bool {
	for _, r := range rows {
		for _, c := range r.Cells {
			if called(c) && c.HasDelta && math.Abs(c.Delta) < runShift {
				return true
			}
		}
	}
	return false
}

// singleFigures leaves unmarked each change of a plan document's figure
// that is one measurement (a three-stage stage, a capacity probe's answer,
// a speculative-decoding level) and under runShift: one figure carries no
// spread of its own, and whole runs in a row moved by that much with
// nothing changed. Larger changes stay marked; the table's legend says
// why the smaller are not (SingleFigureLegend).
func singleFigures(rows []Row) {
	for r := range rows {
		for i := range rows[r].Cells {
			if c := &rows[r].Cells[i]; c.HasDelta && c.Noise == NoiseUnknown && math.Abs(c.Delta) < runShift {
				c.Better = 0
			}
		}
	}
}

// DocLegends are the lines under a plan document's comparison table, for
// the CLI and the app alike: how its changes were judged.
func DocLegends(rows []Row) []string {
	var out []string
	for _, l := range []string{NoiseLegend(rows), SingleFigureLegend(rows)} {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// SingleFigureLegend says how a plan document's comparison marks its
// one-measurement figures; "" when it has none with a change. A Neutral
// metric's change is never marked, whatever its size (an answers
// comparison's drifts, each judged against its own floor).
func SingleFigureLegend(rows []Row) string {
	for _, r := range rows {
		if r.Metric.Dir == Neutral {
			continue
		}
		for _, c := range r.Cells {
			if c.HasDelta && c.Noise == NoiseUnknown {
				return "Each figure here is one measurement, without a spread of its own: a change under " +
					strconv.FormatFloat(100*runShift, 'f', -1, 64) + " % is shown but not marked better or worse, as whole runs in a row moved by that much with nothing changed (docs/method.md §12)."
			}
		}
	}
	return ""
}

// changesListed is how many changes of one level a sentence names; the
// table marks the rest.
const changesListed = 3

// runChanges is one run's sentence: "Run 2 is slower at concurrency 32:
// output tok/s −12.0 % (95 % CI −15.1 … −8.8 %); the other differences
// are within noise." It names the run's calls, every one (the fourth and
// later of a level counted, "marked in the table"), and nothing else.
// Empty when nothing of the run was judged. Every metric with an
// interval is a speed or a time, so worse is slower.
func runChanges(rows []Row, i int) string {
	judged, within := false, false
	for _, row := range rows {
		if i < len(row.Cells) && row.Cells[i].Noise != NoiseUnknown {
			judged = true
			within = within || row.Cells[i].Noise == WithinNoise
		}
	}
	if !judged {
		return ""
	}
	type group struct {
		level, better int
		changes       []string
	}
	var groups []group
	for _, c := range calls(rows, i) {
		g := slices.IndexFunc(groups, func(g group) bool { return g.level == c.level && g.better == c.cell.Better })
		if g < 0 {
			groups = append(groups, group{level: c.level, better: c.cell.Better})
			g = len(groups) - 1
		}
		groups[g].changes = append(groups[g].changes, c.metric.Label+" "+FormatDelta(c.cell)+" ("+confidenceWords+" "+FormatInterval(c.cell)+")")
	}
	name := "R" + runName(i)[1:]
	switch {
	case len(groups) == 0 && !within:
		// Every change too few or too wide to judge: "does not differ"
		// would claim what the samples cannot show.
		return "Whether " + runName(i) + " differs from the baseline cannot be told from noise: " + tooShort + "."
	case len(groups) == 0:
		return name + " does not differ from the baseline beyond noise."
	}
	parts := make([]string, len(groups))
	for j, g := range groups {
		word := "faster"
		if g.better < 0 {
			word = "slower"
		}
		parts[j] = fmt.Sprintf("%s at concurrency %d: %s", word, g.level, listed(g.changes))
	}
	s := name + " is " + strings.Join(parts, "; ")
	if within {
		s += "; the other differences are within noise"
	}
	return s + "."
}

// tooShort says why no change of a run could be judged.
const tooShort = "the runs are too short to bound any difference (the table says which figures have too few samples or too wide an interval); measure more requests per level"

// listed joins a sentence's changes, the first changesListed named and
// the rest counted: the table marks them all.
func listed(changes []string) string {
	s := strings.Join(changes[:min(len(changes), changesListed)], ", ")
	if more := len(changes) - changesListed; more > 0 {
		s += fmt.Sprintf(" and %d more (marked in the table)", more)
	}
	return s
}

// unsampledLine says once which runs have no raw samples.
func unsampledLine(rep noiseReport) string {
	const why = "saved before raw samples were kept, or imported from a published file, which leaves them out"
	switch {
	case len(rep.unsampled) == rep.runs:
		return "These runs have no raw samples (" + why + "), so their differences cannot be told from noise."
	case rep.unsampled[0] == 0:
		return "Run 1, the baseline, has no raw samples (" + why + "), so no difference can be told from noise."
	case len(rep.unsampled) == 1:
		return "R" + runName(rep.unsampled[0])[1:] + " has no raw samples (" + why + "), so its differences cannot be told from noise."
	}
	return "R" + runNames(rep.unsampled)[1:] + " have no raw samples (" + why + "), so their differences cannot be told from noise."
}

// confidenceWords names the intervals: "95 % CI".
var confidenceWords = strconv.FormatFloat(100*Confidence, 'f', -1, 64) + " % CI"

// NoiseLegend says how the table marks changes beyond noise, and what
// "too few samples" and "too wide" mean where the table says them; empty
// when no change of the table was judged (the verdict then says why).
func NoiseLegend(rows []Row) string {
	seen := map[Noise]bool{}
	for _, r := range rows {
		for _, c := range r.Cells {
			seen[c.Noise] = true
		}
	}
	if !seen[WithinNoise] && !seen[BeyondNoise] && !seen[TooFew] && !seen[TooWide] {
		return ""
	}
	pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', -1, 64) + " %" }
	s := fmt.Sprintf("In brackets after a change: its %s, shown where the change is beyond noise, and only such a change is coloured "+
		"(%s for each run's changes at once; a change under %s is never called one); a difference without brackets is within noise.",
		confidenceWords, pct(Confidence), pct(NoiseMargin))
	if seen[TooFew] {
		s += fmt.Sprintf(" \"%s\": a percentile needs at least %d requests with a value beyond it in each run (a p95 200 requests, a p99 1,000), and any figure a level of two successful requests or more, or its noise cannot be bounded.",
			TooFew, minBeyond)
	}
	if seen[TooWide] {
		s += fmt.Sprintf(" \"%s\": the interval's ends are more than %s times apart, so the samples cannot bound the change either way.",
			TooWide, strconv.FormatFloat(MaxWidth, 'f', -1, 64))
	}
	return s
}

// powerReadingsOf reads, for each tokens-per-joule metric, the power
// readings inside a level's window: the wall plug's series, or the GPUs'
// total.
var powerReadingsOf = map[string]func(f *results.File, c int) []float64{
	"wall_tokens_per_joule": func(f *results.File, c int) []float64 {
		w := f.Local.Wall
		if w == nil || w.Series == nil {
			return nil
		}
		lv, ok := w.Levels[c]
		if !ok {
			return nil
		}
		return within(w.Series.TS, w.Series.PowerW, 0, lv.StartS, lv.EndS)
	},
	"tokens_per_joule": func(f *results.File, c int) []float64 {
		t := f.Local.Telemetry
		if t == nil {
			return nil
		}
		lv, ok := t.Levels[c]
		if !ok {
			return nil
		}
		ys := make([]float64, len(t.Series.PowerW))
		for k, p := range t.Series.PowerW {
			ys[k] = math.NaN()
			if p != nil {
				ys[k] = *p
			}
		}
		return within(t.Series.TS, ys, t.Series.ZeroS, lv.StartS, lv.EndS)
	},
}

// within is the readings ys whose times ts (shifted by zero) fall in
// [from, to]; nil for a window never recorded (from = to: an older
// file).
func within(ts, ys []float64, zero, from, to float64) []float64 {
	if to <= from {
		return nil
	}
	var out []float64
	for k, t := range ts {
		if t+zero >= from && t+zero <= to && k < len(ys) && !math.IsNaN(ys[k]) {
			out = append(out, ys[k])
		}
	}
	return out
}

// powerSE is the standard error of the logarithm of a window's mean
// power from its readings: their spread over the mean, over √n. Five
// readings at least, as fewer say little of their spread; the readings
// of one window lean on each other, so this is the least the mean moves.
func powerSE(ys []float64) (float64, bool) {
	if len(ys) < 5 {
		return 0, false
	}
	var mean, m2 float64
	for k, y := range ys {
		d := y - mean
		mean += d / float64(k+1)
		m2 += d * (y - mean)
	}
	if mean <= 0 {
		return 0, false
	}
	sd := math.Sqrt(m2 / float64(len(ys)-1))
	return sd / mean / math.Sqrt(float64(len(ys))), true
}
