package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestPlacementSaid: where Ollama put the model (its /api/ps size_vram
// against size, read once the model is loaded) is said in every run's
// result, in proportion: a split model is a problem with what to do, a
// model wholly on the CPU a plain note, all of it in GPU memory nothing.
// The simulator's split model is slower for it, as a real one is.
func TestPlacementSaid(t *testing.T) {
	for _, c := range []struct {
		name     string
		cpuShare float64
		problem  string // among the problems
		note     string // among the notes
	}{
		{"split", 0.38, "Ollama ran 38 % of this model on the CPU: these figures are a split model's, not the GPU's alone — give it more GPU memory (a smaller context or quantisation) or set num_gpu", ""},
		{"all on the CPU", 1, "", "Ollama ran the whole model on the CPU (none of it in GPU memory): these are the CPU's figures"},
		{"all on the GPU", 0, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := ollamaSim(t, func(cfg *sim.Config) { cfg.CPUShare = c.cpuShare })
			f, err := Run(context.Background(), smallPlan(), setup.Endpoint{URL: url}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			p := f.Local.Detection.Placement
			if p == nil || p.Source != results.PlacementOllamaPS || p.CPUShare < c.cpuShare-0.001 || p.CPUShare > c.cpuShare+0.001 {
				t.Fatalf("placement %+v, want %.2f on the CPU from /api/ps", p, c.cpuShare)
			}
			problems, notes := results.Split(results.Warnings(f))
			has := func(xs []string, want string) bool {
				return slices.ContainsFunc(xs, func(x string) bool { return strings.HasPrefix(x, want) })
			}
			if c.problem != "" && !has(problems, c.problem) {
				t.Errorf("problems %q, want %q", problems, c.problem)
			}
			if c.note != "" && (!has(notes, c.note) || len(problems) > 0) {
				t.Errorf("notes %q (problems %q), want the note %q and no problem", notes, problems, c.note)
			}
			if c.problem == "" && c.note == "" && slices.ContainsFunc(append(problems, notes...), func(x string) bool { return strings.Contains(x, "CPU") }) {
				t.Errorf("a model all in GPU memory is said: %q %q", problems, notes)
			}
		})
	}
}

// TestCutShortSaid: answers a server ends with finish_reason "length"
// before the max_tokens asked (its context full) are kept as such in the
// raw samples and said in the result's notes, with how many per level;
// answers of the length asked say nothing.
func TestCutShortSaid(t *testing.T) {
	for _, c := range []struct {
		cutAt int
		want  string
	}{{8, "answers the server ended at its length limit before the 12 tokens asked (8 of 8 at concurrency 1, 8 of 8 at concurrency 4)"}, {0, ""}} {
		_, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, CutAt: c.cutAt})
		f, err := Run(context.Background(), smallPlan(), setup.Endpoint{URL: url}, Observer{})
		if err != nil {
			t.Fatal(err)
		}
		_, notes := results.Split(results.Warnings(f))
		got := slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "answers the server ended at its length limit") })
		if c.want != "" && !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, c.want) }) || c.want == "" && got {
			t.Errorf("cut at %d: notes %q, want %q", c.cutAt, notes, c.want)
		}
	}
}
