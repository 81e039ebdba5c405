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
	// too few successes, or the metric has no interval (counts, error
	// rate, output length, energy).
	NoiseUnknown Noise = iota
	// WithinNoise: the interval of the change holds no change at all, or
	// the change is smaller than NoiseMargin; the difference is not
	// called a change.
	WithinNoise
	// BeyondNoise: the whole interval lies on one side of no change, and
	// the change is at least NoiseMargin.
	BeyondNoise
)

func (n Noise) String() string {
	switch n {
	case NoiseUnknown:
		return "not judged"
	case WithinNoise:
		return "within noise"
	case BeyondNoise:
		return "beyond noise"
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
// wide enough for every judged change of the table at once, and a change
// only where that interval leaves out no change and the change is at
// least NoiseMargin. Better is set from that decision alone.
func judgeNoise(rows []Row, files []*results.File) noiseReport {
	rep := noiseReport{runs: len(files)}
	for i, f := range files {
		if f != nil && len(f.Runs) > 0 && !f.HasSamples() {
			rep.unsampled = append(rep.unsampled, i)
		}
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
		level       int
		id          string
		dir         Direction
		est, se, df float64 // the change's logarithm, its standard error and degrees of freedom
	}
	var todo []judged
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
				c.Noise, c.Better = WithinNoise, 0
				continue
			case !a.has[st] || !b.has[st]:
				// Too few to bound: the noise is unknown but large.
				c.Noise, c.Better, c.Low, c.High = WithinNoise, 0, -1, math.Inf(1)
				continue
			}
			va, vb := a.sd[st]*a.sd[st], b.sd[st]*b.sd[st]
			todo = append(todo, judged{c, row.Concurrency, row.Metric.ID, row.Metric.Dir, math.Log(b.value[st] / a.value[st]), math.Sqrt(va + vb), welch(va, a.df[st], vb, b.df[st])})
		}
	}

	p := 1 - (1-Confidence)/(2*float64(len(todo)))
	for _, j := range todo {
		c := j.cell
		margin := max(NoiseMargin, repeats[spreadKey{j.level, j.id}])
		if j.se == 0 {
			c.Low, c.High = math.Expm1(j.est), math.Expm1(j.est)
		} else {
			half := studentT(p, j.df) * j.se
			c.Low, c.High = math.Expm1(j.est-half), math.Expm1(j.est+half)
		}
		c.Noise, c.Better = WithinNoise, 0
		if change := math.Expm1(j.est); math.Abs(change) >= margin && (c.Low > 0 || c.High < 0) {
			c.Noise, c.Better = BeyondNoise, better(j.dir, sign(change))
		}
	}
	return rep
}

// welch is the Welch–Satterthwaite degrees of freedom of a sum of two
// variances, each resting on its own degrees of freedom.
func welch(va, dfa, vb, dfb float64) float64 {
	if va+vb == 0 {
		return min(dfa, dfb)
	}
	return (va + vb) * (va + vb) / (va*va/dfa + vb*vb/dfb)
}

// Compared is the verdict on these runs together with their Table, the
// verdict's Changes saying in words which differences are beyond noise.
// The CLI and the app show both.
func Compared(files []*results.File, labels []string) (Verdict, []Row) {
	v := VerdictOf(files...)
	rows, rep := table(files, labels)
	if v.Comparable && len(files) > 1 {
		// Two repeated plans side by side are judged as groups: run by
		// run, a whole run's shift would read as a change (the table
		// still marks each run's changes beyond its own noise).
		rep.asGroups = twoGroups(files)
		v.Changes = append(changeLines(rows, rep), repeatLines(files)...)
	}
	return v, rows
}

// changeLines say, for each run against the baseline, the changes beyond
// noise by level, and which runs' differences cannot be told from noise.
func changeLines(rows []Row, rep noiseReport) []string {
	var lines []string
	if !slices.Contains(rep.unsampled, 0) && !rep.asGroups {
		for i := 1; i < rep.runs; i++ {
			if l := runChanges(rows, i); l != "" {
				lines = append(lines, l)
			}
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
			if c.Noise == BeyondNoise && c.HasDelta && math.Abs(c.Delta) < runShift {
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
// one-measurement figures; "" when it has none with a change.
func SingleFigureLegend(rows []Row) string {
	for _, r := range rows {
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
// are within noise." Empty when nothing of the run was judged. Every
// metric with an interval is a speed or a time, so worse is slower.
func runChanges(rows []Row, i int) string {
	type group struct {
		level, better int
		changes       []string
	}
	var groups []group
	judged, within := false, false
	for _, row := range rows {
		c := row.Cells[i]
		switch {
		case c.Noise == WithinNoise:
			judged, within = true, true
		case c.Noise == BeyondNoise && c.Better != 0:
			judged = true
			g := slices.IndexFunc(groups, func(g group) bool { return g.level == row.Concurrency && g.better == c.Better })
			if g < 0 {
				groups = append(groups, group{level: row.Concurrency, better: c.Better})
				g = len(groups) - 1
			}
			groups[g].changes = append(groups[g].changes, row.Metric.Label+" "+FormatDelta(c)+" ("+confidenceWords+" "+FormatInterval(c)+")")
		}
	}
	if !judged {
		return ""
	}
	name := "R" + runName(i)[1:]
	if len(groups) == 0 {
		return name + " does not differ from the baseline beyond noise."
	}
	parts := make([]string, len(groups))
	for j, g := range groups {
		word := "faster"
		if g.better < 0 {
			word = "slower"
		}
		listed := strings.Join(g.changes[:min(len(g.changes), changesListed)], ", ")
		if more := len(g.changes) - changesListed; more > 0 {
			listed += fmt.Sprintf(" and %d more (marked in the table)", more)
		}
		parts[j] = fmt.Sprintf("%s at concurrency %d: %s", word, g.level, listed)
	}
	s := name + " is " + strings.Join(parts, "; ")
	if within {
		s += "; the other differences are within noise"
	}
	return s + "."
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

// NoiseLegend says how the table marks changes beyond noise; empty when
// no change of the table was judged (the verdict then says why).
func NoiseLegend(rows []Row) string {
	for _, r := range rows {
		for _, c := range r.Cells {
			if c.Noise != NoiseUnknown {
				return fmt.Sprintf("In brackets after a change: its %s, shown where the change is beyond noise "+
					"(%s for the whole table at once; a change under %s is never called one); a difference without brackets is within noise.",
					confidenceWords, strconv.FormatFloat(100*Confidence, 'f', -1, 64)+" %", strconv.FormatFloat(100*NoiseMargin, 'f', -1, 64)+" %")
			}
		}
	}
	return ""
}
