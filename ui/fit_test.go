package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/sim"
)

// addEndpoint saves an endpoint through the Endpoints form.
func (h *harness) addEndpoint(name, url, key string) {
	h.t.Helper()
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, name)
		test.Type(s.urlEntry, url)
		if key != "" {
			test.Type(s.keyEntry, key)
		}
		test.Tap(s.saveButton)
		if !strings.HasPrefix(s.formNote.Text, "Saved") {
			h.t.Fatalf("after Save: %q", s.formNote.Text)
		}
	})
}

// TestBenchmarkFormRefusesPlanBeyondContext: once an endpoint's Test has
// reported its context, the Benchmark form disables Run for a Kovara or
// capacity plan whose prompt and answer cannot fit it, and says why with
// the numbers; other endpoints, a plan that fits, and the endpoint at a
// new address are not held to it.
func TestBenchmarkFormRefusesPlanBeyondContext(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, ContextLength: 2048, TokenInterval: time.Millisecond, PrefillRate: 1e6})
	h.addEndpoint("small box", url, "")
	s := h.u.endpointS
	h.locked(func() { test.Tap(s.testButton) })
	h.waitFor("the Test result", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Context length: 2048 tokens") })

	b := h.u.bench
	const why = "Cannot run: the plan asks for 3000-token prompts and 64-token answers, 3064 tokens, but the server's context holds 2048 " +
		"(from /props default_generation_settings.n_ctx, at the endpoint's last check), so every request would be refused: lower the input or output tokens, " +
		"or start the server with a larger context (llama-server: -c, which it divides among its -np slots)."
	h.locked(func() {
		b.endpointSelect.SetSelected("small box")
		if b.runButton.Disabled() {
			t.Fatalf("the default plan fits 2048 tokens: %q", b.planNote.Text)
		}
		b.kovara.inputEntry.SetText("3000")
		b.kovara.outputEntry.SetText("64")
		if !b.runButton.Disabled() || b.planNote.Text != why {
			t.Errorf("Kovara plan: run enabled=%v, note\n%q\nwant\n%q", !b.runButton.Disabled(), b.planNote.Text, why)
		}
		// The capacity plan keeps its own lengths: the same ones are
		// refused the same way.
		b.planSelect.SetSelected(planCapacity)
		b.capacity.inputEntry.SetText("3000")
		b.capacity.outputEntry.SetText("64")
		if !b.runButton.Disabled() || b.planNote.Text != why {
			t.Errorf("capacity plan: run enabled=%v, note %q", !b.runButton.Disabled(), b.planNote.Text)
		}
		b.planSelect.SetSelected(planStages) // its prefill fits itself to the context
		if b.runButton.Disabled() {
			t.Errorf("stages: %q", b.planNote.Text)
		}
		b.planSelect.SetSelected(planKovara)
		b.endpointSelect.SetSelected(SimulatorName)
		if b.runButton.Disabled() {
			t.Errorf("another endpoint held to this one's context: %q", b.planNote.Text)
		}
		b.endpointSelect.SetSelected("small box")
		b.kovara.inputEntry.SetText("1900")
		if b.runButton.Disabled() {
			t.Errorf("1900 + 64 fits 2048: %q", b.planNote.Text)
		}
		b.kovara.inputEntry.SetText("3000")
		if !b.runButton.Disabled() {
			t.Error("3000 again: Run enabled")
		}

		// Saved at another address, the old check no longer applies.
		s.list.Select(1)
		s.urlEntry.SetText(url + "/v1")
		test.Tap(s.saveButton)
		if b.runButton.Disabled() {
			t.Errorf("after the address changed: %q", b.planNote.Text)
		}
	})
}

// TestRunRefusedForContextIsRemembered: a run the engine refuses for the
// context (no Test made first) says why, and the form then keeps Run off
// for that plan on that endpoint.
func TestRunRefusedForContextIsRemembered(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, ContextLength: 2048, TokenInterval: time.Millisecond, PrefillRate: 1e6})
	h.addEndpoint("small box", url, "")
	b := h.u.bench
	h.locked(func() {
		b.endpointSelect.SetSelected("small box")
		b.kovara.inputEntry.SetText("3000")
		b.kovara.outputEntry.SetText("64")
		if b.runButton.Disabled() {
			t.Fatalf("nothing is known of the endpoint yet: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the refusal", 20*time.Second, func() bool {
		return strings.HasPrefix(b.planNote.Text, "The benchmark could not run: the plan asks for 3000-token prompts and 64-token answers, 3064 tokens, but the server's context holds 2048")
	})
	h.locked(func() {
		if !b.runButton.Disabled() {
			t.Error("Run enabled after the refusal")
		}
		// The model listing may arrive only now (Run was pressed before
		// it came back): the app's own update keeps the run's sentence.
		b.modelsListed(b.models.gen, []string{"kovara-sim-8b"}, nil)
		if !strings.HasPrefix(b.planNote.Text, "The benchmark could not run: ") || !b.runButton.Disabled() {
			t.Errorf("after the listing: run enabled=%v, %q", !b.runButton.Disabled(), b.planNote.Text)
		}
		b.kovara.inputEntry.SetText("512")
		if b.runButton.Disabled() {
			t.Errorf("a plan that fits: %q", b.planNote.Text)
		}
		b.kovara.inputEntry.SetText("3000")
		if !b.runButton.Disabled() || !strings.HasPrefix(b.planNote.Text, "Cannot run: the plan asks for 3000-token prompts") {
			t.Errorf("remembered: run enabled=%v, %q", !b.runButton.Disabled(), b.planNote.Text)
		}
	})
	if runs, err := h.u.lib.List(); err != nil || len(runs) != 0 {
		t.Errorf("the library holds %d runs after a refused plan (%v)", len(runs), err)
	}
}

// TestEndpointTestSaysWhereTheKeyGoes: the app's Test of a server that
// lists its models to anyone but wants a key for chat (llama-server
// --api-key) says the key goes in the endpoint's API key field, and never
// shows a wrong key typed there.
func TestEndpointTestSaysWhereTheKeyGoes(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, APIKey: "sim-key-77", TokenInterval: time.Millisecond, PrefillRate: 1e6})
	h.addEndpoint("keyed box", url, "")
	s := h.u.endpointS
	h.locked(func() { test.Tap(s.testButton) })
	h.waitFor("the failure", 20*time.Second, func() bool { return strings.HasPrefix(s.testResult.Text, "Failed:") })
	h.locked(func() {
		want := "Failed: probing: the server wants an API key for chat requests (HTTP 401 on /v1/chat/completions; the server said: Invalid API Key), though it listed its models without one: the key goes " + appKeyHint
		if got := strings.Split(s.testResult.Text, "\n")[0]; got != want {
			t.Errorf("Test:\n%s\nwant\n%s", got, want)
		}
		s.keyEntry.SetText("sk-typo-0912")
		test.Tap(s.testButton)
	})
	h.waitFor("the refusal", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "refused the API key") })
	h.locked(func() {
		if strings.Contains(s.testResult.Text, "sk-typo-0912") || !strings.Contains(s.testResult.Text, appKeyHint) {
			t.Errorf("Test:\n%s", s.testResult.Text)
		}
		s.keyEntry.SetText("sim-key-77")
		test.Tap(s.testButton)
	})
	h.waitFor("the Test with the key", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Streaming chat on kovara-sim-8b: accepted") })
}
