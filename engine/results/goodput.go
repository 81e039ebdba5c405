package results

import (
	"fmt"
	"strconv"
	"strings"
)

// Goodput on Kovara runs (#36 item 2): with a service level given
// (--slo-ttft-p95, --slo-tpot, --slo-user-tps), each level of a results
// file says how many of its requests met it, each judged on its own TTFT
// and TPOT as the rate plan judges them (RateSLO.Met). Kept in local:
// the published Kovara record has no service level.

// GoodputAt is the goodput of the first level at concurrency c (a
// partial level only when partial), or nil without one.
func (f *File) GoodputAt(c int, partial bool) *Goodput {
	for i := range f.Local.Levels {
		if l := &f.Local.Levels[i]; l.Concurrency == c && l.Partial == partial {
			return l.Goodput
		}
	}
	return nil
}

// GoodputColumns follow a Kovara run's columns when it had a service
// level: the share of a level's requests that met it, and their rate.
var GoodputColumns = []string{"Goodput\n%", "Goodput\nreq/s"}

// goodputCells are a level's goodput cells, Missing without one.
func goodputCells(g *Goodput) []string {
	if g == nil {
		return []string{Missing, Missing}
	}
	return []string{strconv.FormatFloat(g.Share*100, 'f', 0, 64), strconv.FormatFloat(g.Rate, 'f', 2, 64)}
}

// GoodputLine says a Kovara run's goodput in a sentence, or "" without a
// service level: "Goodput (the requests that met the service level)
// against TTFT ≤ 500 ms: 100 % of requests at 1 user, 62 % at 16 users
// (4.10 req/s)."
func GoodputLine(f *File) string {
	if f.Local.SLO == nil {
		return ""
	}
	var parts []string
	var last *Goodput
	seen := map[int]bool{}
	for _, r := range f.Runs {
		g := f.GoodputAt(r.Concurrency, false)
		if g == nil || seen[r.Concurrency] {
			continue
		}
		seen[r.Concurrency] = true
		parts = append(parts, fmt.Sprintf("%.0f %% at %d %s", g.Share*100, r.Concurrency, Plural(r.Concurrency, "user", "users")))
		last = g
	}
	if last == nil {
		return ""
	}
	parts[0] = strings.Replace(parts[0], " %", " % of requests", 1)
	return fmt.Sprintf("Goodput (the requests that met the service level) against %s: %s (%s req/s).", f.Local.SLO.FirstWords(), strings.Join(parts, ", "), strconv.FormatFloat(last.Rate, 'f', 2, 64))
}
