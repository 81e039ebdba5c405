package compare

import (
	"fmt"

	"github.com/kovara/desktop/engine/results"
)

// SpecDecMetrics are the speculative-decoding mode's numbers per level,
// side by side.
var SpecDecMetrics = []struct {
	ID, Label, Unit string
	Dir             Direction
	Get             func(results.SpecDecLevel) (float64, bool)
}{
	{"output_tps", "output", "tok/s", HigherBetter, func(l results.SpecDecLevel) (float64, bool) { return opt(l.OutputTPS) }},
	{"mean_decode_tps", "decode per request, mean", "tok/s", HigherBetter, func(l results.SpecDecLevel) (float64, bool) { return opt(l.MeanDecodeTPS) }},
	{"ttft_p50", "TTFT p50", "ms", LowerBetter, func(l results.SpecDecLevel) (float64, bool) { return opt(l.TTFTMsP50) }},
	{"acceptance_rate", "acceptance rate", "%", HigherBetter, func(l results.SpecDecLevel) (float64, bool) {
		if l.Spec == nil || l.Spec.AcceptanceRate == nil {
			return 0, false
		}
		return 100 * *l.Spec.AcceptanceRate, true
	}},
	{"acceptance_length", "mean acceptance length", "tok", HigherBetter, func(l results.SpecDecLevel) (float64, bool) {
		if l.Spec == nil {
			return 0, false
		}
		return opt(l.Spec.MeanAcceptanceLength)
	}},
	{"output_tokens_p50", "answer length p50", "tok", Neutral, func(l results.SpecDecLevel) (float64, bool) {
		if l.OutputTokens == nil {
			return 0, false
		}
		return l.OutputTokens.P50, true
	}},
}

func opt(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// SpecDecTable is a level × metric × run table of speculative-decoding
// results, with the change against the first, as Table is for Kovara
// runs; a level some results lack is a gap.
func SpecDecTable(docs []*results.SpecDecResult, labels []string) []Row {
	names := runNamesOf(len(docs), labels)
	byLevel := make([]map[int]results.SpecDecLevel, len(docs))
	for i, d := range docs {
		byLevel[i] = map[int]results.SpecDecLevel{}
		if d == nil {
			continue
		}
		for _, l := range d.Levels {
			byLevel[i][l.Concurrency] = l
		}
	}
	levels := keysOf(docs, func(r *results.SpecDecResult) []results.SpecDecLevel { return r.Levels },
		func(l results.SpecDecLevel) (int, bool) { return l.Concurrency, true })
	var rows []Row
	for _, c := range levels {
		shared := true
		for i := range docs {
			if _, ok := byLevel[i][c]; !ok {
				shared = false
			}
		}
		for _, m := range SpecDecMetrics {
			cells := row(names, m.Dir, func(i int) (float64, bool) {
				l, ok := byLevel[i][c]
				if !ok {
					return 0, false
				}
				return m.Get(l)
			})
			rows = append(rows, Row{Concurrency: c, Shared: shared,
				Metric: Metric{ID: m.ID, Label: m.Label, Unit: m.Unit, Dir: m.Dir}, Cells: cells})
		}
	}
	singleFigures(rows)
	return rows
}

// SpecDecVerdict says whether speculative-decoding results measure the
// same thing: the same model and engine, answer cap, thinking setting and
// prompt set. The speculative setup itself is what people compare, so
// it is named, not held against them.
func SpecDecVerdict(docs []*results.SpecDecResult) (bool, []string) {
	return likeForLike(docs, func(r *results.SpecDecResult) []setting {
		return []setting{{"model", r.Model}, {"engine", engineOf(r.Engine)}, {"max tokens", fmt.Sprint(r.Settings.MaxTokens)},
			{"thinking", r.Settings.Thinking}, {"prompt set", r.Settings.PromptSet}}
	})
}
