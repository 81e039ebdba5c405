package compare

import (
	"fmt"
	"math"
	"strconv"

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
	widest := rows[0]
	for _, r := range rows[1:] {
		if r.Spread > widest.Spread {
			widest = r
		}
	}
	return fmt.Sprintf("The %d runs of the same plan came out up to %s apart (%s at concurrency %d: %s … %s %s): between two single runs of this server, a difference of that size is noise, not a change.",
		widest.Runs, FormatPercent(widest.Spread), widest.Metric.Label, widest.Concurrency,
		FormatValue(widest.Metric, widest.Min), FormatValue(widest.Metric, widest.Max), widest.Metric.Unit)
}
