package compare

import (
	"fmt"

	"github.com/kovara/desktop/engine/results"
)

// StagesMetrics are the three-stage plan's numbers, side by side.
var StagesMetrics = []struct {
	ID, Label, Unit string
	Dir             Direction
	Get             func(*results.StagesResult) (float64, bool)
}{
	{"decode_code", "decode, code prompt", "tok/s", HigherBetter, stagesDecode("code")},
	{"decode_json", "decode, JSON prompt", "tok/s", HigherBetter, stagesDecode("json")},
	{"decode_prose", "decode, prose prompt", "tok/s", HigherBetter, stagesDecode("prose")},
	{"decode_agg", "many users, aggregate", "tok/s", HigherBetter, func(r *results.StagesResult) (float64, bool) {
		if r.Users != nil && r.Users.AggregateTPS != nil {
			return *r.Users.AggregateTPS, true
		}
		return 0, false
	}},
	{"per_user_min", "many users, slowest user", "tok/s", HigherBetter, func(r *results.StagesResult) (float64, bool) {
		if r.Users != nil && r.Users.PerUserMinTPS != nil {
			return *r.Users.PerUserMinTPS, true
		}
		return 0, false
	}},
	{"prefill_tps", "cold prefill", "tok/s", HigherBetter, func(r *results.StagesResult) (float64, bool) {
		if r.Prefill != nil && r.Prefill.PrefillTPS != nil {
			return *r.Prefill.PrefillTPS, true
		}
		return 0, false
	}},
	{"prefill_ttft", "cold prefill, time to first token", "ms", LowerBetter, func(r *results.StagesResult) (float64, bool) {
		if r.Prefill != nil && r.Prefill.TTFTMs != nil {
			return *r.Prefill.TTFTMs, true
		}
		return 0, false
	}},
}

func stagesDecode(kind string) func(*results.StagesResult) (float64, bool) {
	return func(r *results.StagesResult) (float64, bool) {
		for _, d := range r.Decode {
			if d.Prompt == kind && d.DecodeTPS != nil {
				return *d.DecodeTPS, true
			}
		}
		return 0, false
	}
}

// StagesTable is a metric × run table of three-stage results, with the
// change against the first, as Table is for Kovara runs.
func StagesTable(docs []*results.StagesResult) []Row {
	names := runNamesOf(len(docs), nil)
	var rows []Row
	for _, m := range StagesMetrics {
		cells := row(names, m.Dir, func(i int) (float64, bool) {
			if docs[i] == nil {
				return 0, false
			}
			return m.Get(docs[i])
		})
		rows = append(rows, Row{Shared: true, Metric: Metric{ID: m.ID, Label: m.Label, Unit: m.Unit, Dir: m.Dir}, Cells: cells})
	}
	return rows
}

// StagesVerdict says whether three-stage results measure the same thing:
// the same model and engine, the same mode (quick or full) and users.
func StagesVerdict(docs []*results.StagesResult) (bool, []string) {
	var diffs []string
	for i := 1; i < len(docs); i++ {
		a, b := docs[0], docs[i]
		if a == nil || b == nil {
			continue
		}
		check := func(what, x, y string) {
			if x != y {
				diffs = append(diffs, fmt.Sprintf("%s differs (%s vs %s, run %d)", what, x, y, i+1))
			}
		}
		check("model", a.Model, b.Model)
		check("engine", a.Engine.Family+" "+a.Engine.Version, b.Engine.Family+" "+b.Engine.Version)
		check("mode", quickName(a.Quick), quickName(b.Quick))
		if a.Users != nil && b.Users != nil {
			check("users", fmt.Sprint(a.Users.Users), fmt.Sprint(b.Users.Users))
		}
	}
	return len(diffs) == 0, diffs
}

func quickName(q bool) string {
	if q {
		return "quick"
	}
	return "full"
}
