package results

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/telemetry"
)

// HardwareTitle is the hardware table's title wherever it is shown.
const HardwareTitle = "What the hardware did"

// hardwareColumn is one column of the hardware table: its heading and
// its cell for one window, "" where the window has no figure for it.
type hardwareColumn struct {
	heading string
	cell    func(lt LevelTelemetry) string
}

var hardwareColumns = []hardwareColumn{
	{"Slowed\n% of time", func(lt LevelTelemetry) string {
		if lt.ThrottledShare == nil {
			return ""
		}
		return pct(*lt.ThrottledShare)
	}},
	{"Slowed\nfor", func(lt LevelTelemetry) string {
		if lt.ThrottledShare == nil {
			return ""
		}
		return SlowdownWhy(lt.ClockEventS)
	}},
	{"Clock\n% of max", func(lt LevelTelemetry) string {
		if lt.SMClockShare == nil {
			return ""
		}
		return pct(*lt.SMClockShare)
	}},
	{"Hottest\n°C", func(lt LevelTelemetry) string {
		if lt.PeakTempC == nil {
			return ""
		}
		return Num(lt.PeakTempC, 0)
	}},
	{"GPU memory\npeak MiB", func(lt LevelTelemetry) string {
		sum, any := 0.0, false
		for _, g := range lt.GPUs {
			if g.PeakMemMiB != nil {
				sum, any = sum+*g.PeakMemMiB, true
			}
		}
		if !any {
			return ""
		}
		return strconv.FormatFloat(sum, 'f', 0, 64)
	}},
	{"Swapped in\n+ out MiB", func(lt LevelTelemetry) string {
		if lt.Host == nil || lt.Host.SwapInBytes == nil || lt.Host.SwapOutBytes == nil {
			return ""
		}
		return strconv.FormatFloat(float64(*lt.Host.SwapInBytes+*lt.Host.SwapOutBytes)/(1<<20), 'f', 1, 64)
	}},
}

// pct is a share as a plain percentage, its unit in the heading (a
// spreadsheet reads the CSV's cell as a number).
func pct(share float64) string { return strconv.FormatFloat(share*100, 'f', 1, 64) }

// SlowdownWhy names the slowdown reasons active in a window (its
// ClockEventS), the longest first — "power cap, heat" — or "none".
func SlowdownWhy(secs map[string]float64) string {
	var rs []ClockEventReason
	for name, s := range secs {
		if r, ok := telemetry.ReasonNamed(name); ok && r.Slowdown && s > 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return "none"
	}
	slices.SortFunc(rs, func(a, b ClockEventReason) int {
		return cmp.Or(cmp.Compare(secs[b.Name], secs[a.Name]), cmp.Compare(a.Bit, b.Bit))
	})
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Short
	}
	return strings.Join(names, ", ")
}

// HardwareTable is what p's GPUs and the server's machine did in each
// measured window (issue #50), a row per window in the plan's order: how
// long the cards slowed themselves and for what, their clock against its
// maximum, the hottest reading, the cards' memory and the swapping. A
// column is shown where some window has its figure; a window without one
// reads Missing. Nil where the run read none of them (no GPU source, or
// one that says none: an exporter without clocks or temperatures).
func HardwareTable(p Powered) *Table {
	tel, _ := p.Power()
	if tel == nil {
		return nil
	}
	heading, keys := p.EnergyKeys()
	var cols []hardwareColumn
	for _, c := range hardwareColumns {
		for _, k := range keys {
			if lt, ok := tel.Levels[k.Key]; ok && c.cell(lt) != "" {
				cols = append(cols, c)
				break
			}
		}
	}
	if len(cols) == 0 {
		return nil
	}
	t := &Table{Columns: []string{heading}}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.heading)
	}
	for _, k := range keys {
		lt, ok := tel.Levels[k.Key]
		if !ok {
			continue
		}
		row := []string{k.Label}
		for _, c := range cols {
			v := c.cell(lt)
			if v == "" {
				v = Missing
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// SlowdownShares are, for each slowdown reason active in any of p's
// windows, its share of each window (0 to 1; NaN where the window has no
// reasons), in ClockEventReasons' order, with the windows' labels: what
// the hardware chart draws.
func SlowdownShares(p Powered) (labels []string, reasons []ClockEventReason, shares [][]float64) {
	tel, _ := p.Power()
	if tel == nil {
		return nil, nil, nil
	}
	_, keys := p.EnergyKeys()
	var lts []LevelTelemetry
	for _, k := range keys {
		if lt, ok := tel.Levels[k.Key]; ok {
			labels, lts = append(labels, k.Label), append(lts, lt)
		}
	}
	for _, r := range telemetry.ClockEventReasons {
		if !r.Slowdown {
			continue
		}
		row := make([]float64, len(lts))
		active := false
		for i, lt := range lts {
			row[i] = math.NaN()
			if lt.ThrottledShare == nil || lt.DurationS <= 0 {
				continue
			}
			row[i] = min(lt.ClockEventS[r.Name]/lt.DurationS, 1)
			active = active || row[i] > 0
		}
		if active {
			reasons, shares = append(reasons, r), append(shares, row)
		}
	}
	return labels, reasons, shares
}
