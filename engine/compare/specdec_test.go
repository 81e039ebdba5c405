package compare

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

func specDoc(model string, levels ...results.SpecDecLevel) *results.SpecDecResult {
	return &results.SpecDecResult{PlanHeader: results.PlanHeader{Model: model}, Settings: results.SpecDecSettings{MaxTokens: 512, Thinking: "off", PromptSet: "v1"}, Levels: levels}
}

func specLevel(c int, tps, rate, length float64) results.SpecDecLevel {
	return results.SpecDecLevel{Concurrency: c, OutputTPS: &tps,
		Spec: &results.SpecWindow{AcceptanceRate: &rate, MeanAcceptanceLength: &length}}
}

func TestSpecDecTable(t *testing.T) {
	t.Parallel()
	a := specDoc("m", specLevel(1, 100, 0.5, 2.5), specLevel(4, 300, 0.5, 2.5))
	b := specDoc("m", specLevel(1, 120, 0.7, 3.1))
	rows := SpecDecTable([]*results.SpecDecResult{a, b}, []string{"ngram", "eagle"})
	find := func(c int, id string) Row {
		for _, r := range rows {
			if r.Concurrency == c && r.Metric.ID == id {
				return r
			}
		}
		t.Fatalf("no row %d %s", c, id)
		return Row{}
	}
	r := find(1, "acceptance_rate")
	if !r.Shared || r.Cells[1].Value != 70 || r.Cells[1].Better != 1 || r.Cells[0].Label != "ngram" {
		t.Errorf("acceptance at 1: %+v", r)
	}
	if r := find(4, "output_tps"); r.Shared || !r.Cells[0].Present || r.Cells[1].Present {
		t.Errorf("level only the first has: %+v", r)
	}
	if r := find(1, "output_tokens_p50"); r.Cells[0].Present {
		t.Errorf("answer length without a spread: %+v", r)
	}
	if ok, diffs := SpecDecVerdict([]*results.SpecDecResult{a, b}); !ok {
		t.Errorf("same model and settings: %v", diffs)
	}
	c := specDoc("other")
	c.Settings.MaxTokens = 256
	ok, diffs := SpecDecVerdict([]*results.SpecDecResult{a, c})
	if ok || len(diffs) != 2 || !strings.Contains(diffs[0], "model differs") || !strings.Contains(diffs[1], "max tokens differs (512 vs 256") {
		t.Errorf("verdict %v %v", ok, diffs)
	}
}
