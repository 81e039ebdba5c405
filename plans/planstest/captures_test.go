package planstest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// TestCapturesB4748: every plan without a b9749 capture has one from
// llama-server b4748, read as its plan, from the tiny model, with what
// its comment says of it, and with no API key in the file.
func TestCapturesB4748(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file, plan string
		doc        plans.Doc
		check      func(plans.Doc) bool
	}{
		{"kovara.json", results.PlanKovara, plans.Kovara{File: LlamaKovara(t)}, func(d plans.Doc) bool {
			runs := d.(plans.Kovara).File.Runs
			return len(runs) == 2 && runs[0].Concurrency == 1 && runs[1].Concurrency == 2 && runs[1].Requests == 24
		}},
		{"stages.json", results.PlanStages, plans.NewStages(LlamaStages(t)), func(d plans.Doc) bool {
			return plans.ResultOf[*results.StagesResult](d).Quick
		}},
		{"specdec.json", results.PlanSpecDec, plans.NewSpecDec(LlamaSpecDec(t)), func(d plans.Doc) bool {
			r := plans.ResultOf[*results.SpecDecResult](d)
			return len(r.Levels) == 2 && r.Counters == "" && r.Levels[0].OK == 10
		}},
		{"rate.json", results.PlanRate, plans.NewRate(LlamaRate(t)), func(d plans.Doc) bool {
			r := plans.ResultOf[*results.RateResult](d)
			return len(r.Levels) == 2 && r.Levels[0].Rate == 1 && r.Levels[1].Rate == 2 && r.Levels[1].OK == 20
		}},
		{"tune.json", results.PlanTune, plans.NewTune(LlamaTune(t)), func(d plans.Doc) bool {
			r := plans.ResultOf[*results.TuneResult](d)
			return len(r.Settings) == 2 && len(r.Runs) == 6 && len(r.Verdicts) > 0
		}},
	}
	for _, c := range cases {
		t.Run(c.plan, func(t *testing.T) {
			d := c.doc
			if got := d.Kind().ID; got != c.plan {
				t.Fatalf("read as %q, want %q", got, c.plan)
			}
			s := d.Summary()
			if !d.Complete() || d.Failed() || !strings.HasSuffix(d.Model(), "tiny.gguf") || !strings.Contains(s.Engine, "b4748") {
				t.Errorf("complete %v, failed %v, model %q, engine %q", d.Complete(), d.Failed(), d.Model(), s.Engine)
			}
			if !c.check(d) {
				t.Errorf("%s is not the run its comment describes", c.file)
			}
			data, err := os.ReadFile(filepath.Join(capturesB4748(), c.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"api_key", "sk-", "Bearer"} {
				if bytes.Contains(data, []byte(key)) {
					t.Errorf("%s holds %q", c.file, key)
				}
			}
			back, err := plans.Decode(data)
			if err != nil || back.Kind() != d.Kind() {
				t.Fatalf("plans.Decode: %v", err)
			}
		})
	}
}
