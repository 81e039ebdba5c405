package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// SpreadRow is one metric at one level across the runs of a repeated
// plan: how far apart the same plan's runs came out, which is the noise
// any one run's figure carries (docs/method.md).
type SpreadRow struct {
	Concurrency int
	Metric      Metric
	Runs        int     // runs that have the value
	Mean        float64 // of the runs' values
	Min, Max    float64
	// Spread is (Max − Min) / Mean: 0.08 means the runs lay within 8 %
	// of their mean's size; 0 when Mean is 0.
	Spread float64
	// CV is the runs' standard deviation over their mean (n − 1).
	CV float64
}

// GroupSpread is the spread between the runs of a repeated plan, for each
// level every run measured and each metric of Metrics that has a
// direction (counts and lengths say nothing about noise). Levels only
// some runs reached are left out.
func GroupSpread(files []*results.File) []SpreadRow {
	var rows []SpreadRow
	for _, c := range unionLevels(files) {
		var recs []results.Run
		for _, f := range files {
			for _, r := range f.Runs {
				if r.Concurrency == c {
					recs = append(recs, r)
					break
				}
			}
		}
		if len(recs) < 2 || len(recs) != len(files) {
			continue
		}
		for _, m := range Metrics {
			if m.Dir == Neutral || m.Get == nil {
				continue
			}
			var vals []float64
			for _, r := range recs {
				if v, ok := m.Get(r); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					vals = append(vals, v)
				}
			}
			if len(vals) < 2 {
				continue
			}
			row := SpreadRow{Concurrency: c, Metric: m, Runs: len(vals), Min: vals[0], Max: vals[0]}
			var sum float64
			for _, v := range vals {
				sum += v
				row.Min, row.Max = min(row.Min, v), max(row.Max, v)
			}
			row.Mean = sum / float64(len(vals))
			var ss float64
			for _, v := range vals {
				ss += (v - row.Mean) * (v - row.Mean)
			}
			if row.Mean != 0 {
				row.Spread = (row.Max - row.Min) / math.Abs(row.Mean)
				row.CV = math.Sqrt(ss/float64(len(vals)-1)) / math.Abs(row.Mean)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// FormatPercent writes a share as a percentage with one decimal, "8.1 %".
func FormatPercent(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/10, 'f', 1, 64) + " %"
}

// SpreadSentence says in words how far apart a repeated plan's runs came
// out: the widest metric and what that means for reading one run
// against another. Empty when there is nothing to say.
func SpreadSentence(rows []SpreadRow) string {
	if len(rows) == 0 {
		return ""
	}
	widest, runs := rows[0], rows[0].Runs
	for _, r := range rows[1:] {
		if r.Spread > widest.Spread {
			widest = r
		}
		runs = max(runs, r.Runs)
	}
	// The group's runs are every run a row counts; a metric some runs
	// could not give (a percentile shown as —) says how many it is of.
	by := ""
	if widest.Runs < runs {
		by = fmt.Sprintf(", measured by %d of them", widest.Runs)
	}
	return fmt.Sprintf("The %d runs of the same plan came out up to %s apart (%s at concurrency %d%s: %s … %s %s): between two single runs of this server, a difference of that size is noise, not a change.",
		runs, FormatPercent(widest.Spread), widest.Metric.Label, widest.Concurrency, by,
		FormatValue(widest.Metric, widest.Min), FormatValue(widest.Metric, widest.Max), widest.Metric.Unit)
}

// groupsIn is the repeated plans among the compared runs: each group's id
// and the runs of it (file indexes, in order), for groups with two or
// more runs here.
func groupsIn(files []*results.File) ([]string, map[string][]int) {
	var ids []string
	members := map[string][]int{}
	for i, f := range files {
		if f == nil || f.Local.Group == nil || f.Local.Group.ID == "" {
			continue
		}
		id := f.Local.Group.ID
		if _, seen := members[id]; !seen {
			ids = append(ids, id)
		}
		members[id] = append(members[id], i)
	}
	var kept []string
	for _, id := range ids {
		if len(members[id]) >= 2 {
			kept = append(kept, id)
		} else {
			delete(members, id)
		}
	}
	return kept, members
}

// spreadKey names one metric at one level.
type spreadKey struct {
	level int
	id    string
}

// repeatSpread is, per level and metric, the widest spread between the
// runs of one repeated plan among the compared runs: how far the same
// plan moved from run to run, which no single run's samples show. A
// change no larger than it is noise (docs/method.md).
func repeatSpread(files []*results.File) map[spreadKey]float64 {
	ids, members := groupsIn(files)
	out := map[spreadKey]float64{}
	for _, id := range ids {
		var group []*results.File
		for _, i := range members[id] {
			group = append(group, files[i])
		}
		for _, r := range GroupSpread(group) {
			k := spreadKey{r.Concurrency, r.Metric.ID}
			out[k] = max(out[k], r.Spread)
		}
	}
	return out
}

// repeatLines say which compared runs are one repeated plan, and how far
// apart they came out: the between-run noise the table's decisions
// also hold to.
func repeatLines(files []*results.File) []string {
	ids, members := groupsIn(files)
	var lines []string
	for _, id := range ids {
		var group []*results.File
		for _, i := range members[id] {
			group = append(group, files[i])
		}
		if s := SpreadSentence(GroupSpread(group)); s != "" {
			lines = append(lines, "R"+runNames(members[id])[1:]+" are one repeated plan. "+s+" Here no change is called one unless it is larger than the spread of its own metric between these runs.")
		}
	}
	if twoGroups(files) {
		lines = append(lines, groupChangeLine(files, members[ids[0]], members[ids[1]])...)
	}
	return lines
}

// groupHeadline are the metrics a group against a group is judged on.
var groupHeadline = []string{"output_throughput", "ttft_p50", "latency_p50"}

// groupChangeLine compares two repeated plans by their runs' means, with
// an interval from the spread between each plan's runs (Welch's t on the
// runs' values, Bonferroni over the changes judged): the way to A/B a
// setting when single runs shift whole.
func groupChangeLine(files []*results.File, a, b []int) []string {
	type judged struct {
		level  int
		m      Metric
		ma, mb float64
		se, df float64
	}
	values := func(idx []int, c int, m Metric) []float64 {
		var vs []float64
		for _, i := range idx {
			for _, r := range files[i].Runs {
				if r.Concurrency == c {
					if v, ok := m.Get(r); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
						vs = append(vs, v)
					}
					break
				}
			}
		}
		return vs
	}
	var todo []judged
	for _, c := range unionLevels(files) {
		for _, id := range groupHeadline {
			m, _ := MetricByID(id)
			va, vb := values(a, c, m), values(b, c, m)
			if len(va) < 2 || len(vb) < 2 {
				continue
			}
			ma, sa := meanVar(va)
			mb, sb := meanVar(vb)
			if ma == 0 {
				continue
			}
			ea, eb := sa/float64(len(va)), sb/float64(len(vb))
			todo = append(todo, judged{level: c, m: m, ma: ma, mb: mb, se: math.Sqrt(ea + eb),
				df: welch(ea, float64(len(va)-1), eb, float64(len(vb)-1))})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	var beyond, within []string
	for _, j := range todo {
		half := bonferroniT(len(todo), j.df) * j.se
		change := (j.mb - j.ma) / math.Abs(j.ma)
		low, high := (j.mb-j.ma-half)/math.Abs(j.ma), (j.mb-j.ma+half)/math.Abs(j.ma)
		cell := Cell{Delta: change, HasDelta: true, Noise: WithinNoise, Low: low, High: high}
		text := fmt.Sprintf("%s at %d %s (%s %s)", j.m.Label, j.level, FormatDelta(cell), confidenceWords, FormatInterval(cell))
		if math.Abs(change) >= NoiseMargin && (low > 0 || high < 0) {
			beyond = append(beyond, text)
		} else {
			within = append(within, j.m.Label+" at "+strconv.Itoa(j.level))
		}
	}
	head := fmt.Sprintf("As groups (mean of each plan's runs, the interval from the spread between them): r%s against r%s", runNames(b)[1:], runNames(a)[1:])
	switch {
	case len(beyond) == 0:
		return []string{head + ": no difference beyond noise in " + strings.Join(within, ", ") + "."}
	case len(within) == 0:
		return []string{head + ": " + strings.Join(beyond, "; ") + "."}
	}
	return []string{head + ": " + strings.Join(beyond, "; ") + "; within noise: " + strings.Join(within, ", ") + "."}
}

// Reproduction is the verdict on a run made to reproduce another (run
// again like this): rows from Compared with the original first, again
// the reproduction's place in them. It reads the same calls as the run's
// sentence and the table's colours: "Reproduced" only when no change of
// the run is called, so no cell of it is coloured; else "Not reproduced"
// with the calls, the headline metrics (output tok/s, TTFT p50, latency
// p50) first.
func Reproduction(rows []Row, again int) string {
	var unknown []string
	judged, bounded := false, false
	for _, r := range rows {
		if again >= len(r.Cells) || !r.Cells[again].HasDelta {
			continue
		}
		switch c := r.Cells[again]; {
		case c.Noise != NoiseUnknown:
			judged = true
			bounded = bounded || c.Noise == WithinNoise
		case slices.Contains(groupHeadline, r.Metric.ID):
			unknown = append(unknown, fmt.Sprintf("%s at %d %s", r.Metric.Label, r.Concurrency, FormatDelta(c)))
		}
	}
	cs := calls(rows, again)
	headline := func(c call) bool { return slices.Contains(groupHeadline, c.metric.ID) }
	slices.SortStableFunc(cs, func(a, b call) int {
		switch {
		case headline(a) && !headline(b):
			return -1
		case headline(b) && !headline(a):
			return 1
		}
		return 0
	})
	switch {
	case len(cs) > 0:
		changes := make([]string, len(cs))
		for j, c := range cs {
			changes[j] = fmt.Sprintf("%s at %d %s (%s %s)", c.metric.Label, c.level, FormatDelta(c.cell), confidenceWords, FormatInterval(c.cell))
		}
		return "Not reproduced: " + listed(changes) + "."
	case judged && len(unknown) == 0 && bounded:
		return "Reproduced: no metric differs from the original beyond noise."
	case judged && len(unknown) == 0:
		return "Whether it reproduced cannot be told from noise: " + tooShort + "."
	case len(unknown) > 0:
		return "Whether it reproduced cannot be told from noise: a run has no raw samples (a published file leaves them out). The headline differences are " + strings.Join(unknown, ", ") + "."
	}
	return ""
}

// twoGroups says whether the compared runs are exactly two repeated
// plans, every run in one of them.
func twoGroups(files []*results.File) bool {
	ids, members := groupsIn(files)
	return len(ids) == 2 && len(members[ids[0]])+len(members[ids[1]]) == len(files)
}

// sameGroup says whether runs i and j are runs of one repeated plan.
func sameGroup(files []*results.File, i, j int) bool {
	a, b := files[i], files[j]
	return a != nil && b != nil && a.Local.Group != nil && b.Local.Group != nil &&
		a.Local.Group.ID != "" && a.Local.Group.ID == b.Local.Group.ID
}
