package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// StagesMetrics are the three-stage plan's numbers, side by side.
var StagesMetrics = []DocMetric[results.StagesResult]{
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
	rows := docTable(docs, nil, StagesMetrics)
	singleFigures(rows)
	return rows
}

// StagesVerdict says whether three-stage results measure the same thing:
// the same model and engine, the same mode (quick or full) and users.
func StagesVerdict(docs []*results.StagesResult) (bool, []string) {
	return likeForLike(docs, func(r *results.StagesResult) []setting {
		users := ""
		if r.Users != nil {
			users = fmt.Sprint(r.Users.Users)
		}
		return []setting{{"model", r.Model}, {"engine", engineOf(r.Engine)}, {"mode", quickName(r.Quick)}, {"users", users}}
	})
}

// setting is one named setting a document was made with; "" is unknown
// and differs from nothing.
type setting struct{ name, value string }

// likeForLike holds every document's conditions against the first's and
// names each difference.
func likeForLike[T any](docs []*T, conditions func(*T) []setting) (bool, []string) {
	var diffs []string
	if len(docs) == 0 || docs[0] == nil {
		return true, nil
	}
	first := conditions(docs[0])
	for i := 1; i < len(docs); i++ {
		if docs[i] == nil {
			continue
		}
		for j, c := range conditions(docs[i]) {
			if a := first[j].value; a != "" && c.value != "" && a != c.value {
				diffs = append(diffs, fmt.Sprintf("%s differs (%s vs %s, run %d)", c.name, a, c.value, i+1))
			}
		}
	}
	return len(diffs) == 0, diffs
}

func engineOf(d results.Detection) string { return strings.TrimSpace(d.Family + " " + d.Version) }

func quickName(q bool) string {
	if q {
		return "quick"
	}
	return "full"
}

// DocMetric is one figure of a plan document (a three-stage or capacity
// result), for a metric × run table.
type DocMetric[D any] struct {
	ID, Label, Unit string
	Dir             Direction
	Get             func(*D) (float64, bool)
}

// keysOf is every key (a depth, a rate, a level) the documents' levels
// have, each once, in order; key says a level's, or that it has none (a
// partial one). A missing document has none.
func keysOf[D, L any, K cmp.Ordered](docs []*D, levels func(*D) []L, key func(L) (K, bool)) []K {
	var out []K
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, l := range levels(d) {
			if k, ok := key(l); ok && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// docTable is a metric × run table of plan documents, with the change
// against the first; a missing document has no values.
func docTable[D any](docs []*D, labels []string, metrics []DocMetric[D]) []Row {
	names := runNamesOf(len(docs), labels)
	var rows []Row
	for _, m := range metrics {
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
