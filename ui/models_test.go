package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

// TestModelChosenFromTheServersList: a server that serves several models
// (as Ollama lists every model pulled) offers them in the Benchmark form's
// Model field; Run waits for a choice, the run asks for the model chosen,
// and the next visit to the endpoint starts from it.
func TestModelChosenFromTheServersList(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.Ollama, Models: []string{"tinyloop:latest", "tiny:latest"},
		TokenInterval: time.Millisecond, PrefillRate: 1e6, BatchCapacity: 8})
	h.addEndpoint("ollama box", url, "")
	b := h.u.bench
	h.locked(func() {
		b.endpointSelect.SetSelected(SimulatorName)
		if got, want := b.modelSelect.Selected, "kovara-sim-8b"; got != want {
			t.Errorf("simulator: model %q, want %q", got, want)
		}
		b.endpointSelect.SetSelected("ollama box")
		h.setPlan("1,2", "4", "16")
	})
	h.waitFor("the model list", 20*time.Second, func() bool { return b.models.listed })
	h.locked(func() {
		if got, want := b.modelSelect.Options, []string{"tiny:latest", "tinyloop:latest"}; !slices.Equal(got, want) {
			t.Errorf("models offered %q, want %q", got, want)
		}
		if b.modelSelect.Selected != "" || !b.runButton.Disabled() {
			t.Errorf("several models and none chosen: model %q, run enabled=%v", b.modelSelect.Selected, !b.runButton.Disabled())
		}
		if got, want := b.planNote.Text, "choose the model to benchmark: ollama box serves 2 models"; got != want {
			t.Errorf("note %q, want %q", got, want)
		}
		b.modelSelect.SetSelected("tiny:latest")
		if b.runButton.Disabled() {
			t.Fatalf("model chosen, run disabled: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
	list, err := h.u.lib.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("library: %+v %v", list, err)
	}
	if got, want := list[0].Model, "tiny:latest"; got != want {
		t.Errorf("the run measured %q, want %q", got, want)
	}
	h.locked(func() {
		test.Tap(b.result.newRun)
		b.endpointSelect.SetSelected(SimulatorName)
		b.endpointSelect.SetSelected("ollama box")
	})
	h.waitFor("the model list again", 20*time.Second, func() bool { return b.models.listed })
	h.locked(func() {
		if got, want := b.modelSelect.Selected, "tiny:latest"; got != want || b.runButton.Disabled() {
			t.Errorf("back on the endpoint: model %q (want %q), run enabled=%v: %q", got, want, !b.runButton.Disabled(), b.planNote.Text)
		}
	})
}

// TestModelListFailureLeavesRunToSayWhy: an endpoint whose models cannot
// be listed (the server is down) says so under the plan, and leaves Run on:
// the run's own check then says what is wrong, where.
func TestModelListFailureLeavesRunToSayWhy(t *testing.T) {
	h := newHarness(t)
	srv, url, err := sim.Start(sim.Config{}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // nothing listens there now
	h.addEndpoint("down box", url, "")
	b := h.u.bench
	h.locked(func() { b.endpointSelect.SetSelected("down box") })
	h.waitFor("the failed listing", 20*time.Second, func() bool { return b.models.listed })
	h.locked(func() {
		if b.modelSelect.PlaceHolder != modelsUnlisted || b.modelSelect.Selected != "" {
			t.Errorf("model field: placeholder %q, selected %q", b.modelSelect.PlaceHolder, b.modelSelect.Selected)
		}
		if b.runButton.Disabled() || !strings.Contains(b.planNote.Text, "\nThe models could not be listed: ") {
			t.Errorf("run enabled=%v, note %q", !b.runButton.Disabled(), b.planNote.Text)
		}
	})
}

// TestContextCheckIsPerModel: what a check learned of one model's context
// does not refuse a plan for another model on the same endpoint (Ollama
// gives each model its own context).
func TestContextCheckIsPerModel(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, ContextLength: 2048, Models: []string{"a", "b"},
		TokenInterval: time.Millisecond, PrefillRate: 1e6})
	h.addEndpoint("two models", url, "")
	s := h.u.endpointS
	h.locked(func() { test.Tap(s.testButton) }) // checks the first, "a"
	h.waitFor("the Test result", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Context length: 2048 tokens") })
	b := h.u.bench
	h.locked(func() { b.endpointSelect.SetSelected("two models") })
	h.waitFor("the model list", 20*time.Second, func() bool { return b.models.listed })
	h.locked(func() {
		b.kovara.inputEntry.SetText("3000")
		b.modelSelect.SetSelected("a")
		if !b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "Cannot run: ") {
			t.Errorf("model a, checked at 2048 tokens: run enabled=%v, %q", !b.runButton.Disabled(), b.planNote.Text)
		}
		b.modelSelect.SetSelected("b")
		if b.runButton.Disabled() {
			t.Errorf("model b was never checked: %q", b.planNote.Text)
		}
	})
}

// TestSimulatorModelsAreThePlansDemo: with the built-in simulator, the
// Model field offers the chosen plan's demo models — what the run will be
// served — and follows a change of plan (the answers plan's demo serves
// two quantisations; the field offered the Kovara demo's one model, and
// Run was refused "the server does not serve kovara-sim-8b").
func TestSimulatorModelsAreThePlansDemo(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.endpointSelect.SetSelected(SimulatorName)
		for _, k := range []*plans.Kind{plans.ByID(results.PlanAnswers), plans.KovaraMethod} {
			b.planSelect.SetSelected(k.Title)
			if got, want := b.modelSelect.Options, k.Demo().Models; !slices.Equal(got, want) {
				t.Errorf("%s: models offered %q, want its demo's %q", k.ID, got, want)
			}
			// One model is chosen for the person; of several, none,
			// as with any server (TestModelChosenFromTheServersList).
			if models := k.Demo().Models; len(models) == 1 && b.modelSelect.Selected != models[0] {
				t.Errorf("%s: model %q chosen, want %q", k.ID, b.modelSelect.Selected, models[0])
			}
		}
	})
}
