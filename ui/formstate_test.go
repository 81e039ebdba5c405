package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// tuneRows is the settings comparison's rows as the form shows them.
func tuneRows(f *tuneForm) []storage.TuneFormRow {
	var rows []storage.TuneFormRow
	for _, r := range f.rows {
		rows = append(rows, storage.TuneFormRow{Name: r.nameEntry.Text, How: r.how(), What: r.whatEntry.Text, Before: r.before})
	}
	return rows
}

// TestFormRemembered: the app started again over the same folders shows
// the Benchmark form as it was left — the endpoint, the model, the plan,
// the settings comparison's rows (name, how, command, Before…) and
// rounds —, both when the app was killed a moment after the change (the
// delayed write) and when its window was closed at once after it (the
// write on close). The API key is never in the form's file.
func TestFormRemembered(t *testing.T) {
	dir := t.TempDir()
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"q4", "q8"}})
	tuneTitle := plans.ByID(results.PlanTune).Title
	want := []storage.TuneFormRow{
		{Name: "np2", How: setup.ByCommand, What: "llama-server -m '/models/q 4.gguf' -np 2 --port 8080"},
		{Name: "np8", How: setup.ByCommand, What: "llama-server -m '/models/q 4.gguf' -np 8 --port 8080", Before: "sudo nvidia-smi -pl 250"},
		{Name: "hand", How: setup.ByHand, What: "restart Ollama with OLLAMA_NUM_PARALLEL=4"},
	}

	h1 := newHarnessAt(t, dir)
	b := h1.u.bench
	h1.locked(func() {
		if err := h1.u.endpoints.Put(storage.SavedEndpoint{Name: "lab box", URL: url + "/v1"}, ""); err != nil {
			t.Fatal(err)
		}
		if err := h1.u.keys.Set("lab box", "sk-lab-secret"); err != nil {
			t.Fatal(err)
		}
		h1.u.endpointsChanged()
		b.selectEndpoint("lab box")
	})
	h1.waitFor("the lab box's models", 20*time.Second, func() bool { return b.models.listed && len(b.modelSelect.Options) == 2 })
	h1.locked(func() {
		b.modelSelect.SetSelected("q8")
		b.planSelect.SetSelected(tuneTitle)
		f := b.tune
		for i, w := range want[:2] {
			f.rows[i].nameEntry.SetText(w.Name)
			f.rows[i].howSelect.SetSelected("Command")
			f.rows[i].whatEntry.SetText(w.What)
		}
		f.rows[1].setBefore(want[1].Before)
		f.onAdd(want[2].Name, want[2].How, want[2].What)
		f.roundsEntry.SetText("4")
		if got := tuneRows(f); !slices.Equal(got, want) {
			t.Fatalf("the form shows %+v", got)
		}
	})
	file := filepath.Join(dir, "config", "form.json")
	h1.waitFor("the form's state on disk", 20*time.Second, func() bool {
		data, _ := os.ReadFile(file)
		return strings.Contains(string(data), `"rounds": "4"`)
	})
	if data, _ := os.ReadFile(file); strings.Contains(string(data), "sk-lab-secret") {
		t.Errorf("the form's file holds the API key:\n%s", data)
	}

	// Started again with nothing more from the first (as after kill -9):
	// its listing is over, so no two apps touch Fyne's shared font caches
	// at once.
	quiet(h1)
	h2 := newHarnessAt(t, dir)
	b2 := h2.u.bench
	h2.waitFor("the model chosen again", 20*time.Second, func() bool { return b2.models.listed && b2.modelSelect.Selected != "" })
	h2.locked(func() {
		if got := b2.endpointSelect.Selected; got != "lab box" {
			t.Errorf("endpoint %q, want lab box", got)
		}
		if got := b2.modelSelect.Selected; got != "q8" {
			t.Errorf("model %q, want q8", got)
		}
		if got := b2.planSelect.Selected; got != tuneTitle {
			t.Errorf("plan %q, want %q", got, tuneTitle)
		}
		if got := tuneRows(b2.tune); !slices.Equal(got, want) {
			t.Errorf("rows %+v, want %+v", got, want)
		}
		if got := b2.tune.roundsEntry.Text; got != "4" {
			t.Errorf("rounds %q, want 4", got)
		}
		if got := b2.tune.rows[1].beforeButton.Text; got != "Before ✓" {
			t.Errorf("the Before button says %q", got)
		}
		// Changed, and the window closed at once: written on close.
		b2.tune.roundsEntry.SetText("8")
		b2.tune.rows[0].nameEntry.SetText("two slots")
		h2.u.closeWindow()
	})
	quiet(h2)

	h3 := newHarnessAt(t, dir)
	h3.locked(func() {
		if got := h3.u.bench.tune.roundsEntry.Text; got != "8" {
			t.Errorf("after close: rounds %q, want 8", got)
		}
		if got := h3.u.bench.tune.rows[0].nameEntry.Text; got != "two slots" {
			t.Errorf("after close: first row %q, want two slots", got)
		}
	})
}

// quiet ends what h's app does in the background.
func quiet(h *harness) {
	h.locked(h.u.bench.stopListing)
	h.u.bench.models.wg.Wait()
}

// TestDemoRunsBesideThePersonsForm: the demo (make run) runs the
// default plan on the built-in simulator whatever the form holds, and
// the form is the person's, as at any start: restored, and kept as it
// changes. The demo chose the simulator and the default plan in the form
// and kept nothing, so what a person typed in a demo's session was lost
// however the app closed, the endpoint alone coming back (#47).
func TestDemoRunsBesideThePersonsForm(t *testing.T) {
	dir := t.TempDir()
	rows := []storage.TuneFormRow{{Name: "a", How: setup.ByCommand, What: "llama-server -np 2"}, {Name: "b", How: setup.ByCommand, What: "llama-server -np 8"}}
	kept := storage.FormState{Endpoint: "lab box", Plan: results.PlanTune, Tune: &storage.TuneFormState{Rows: rows},
		Forms: map[string]storage.PlanFormState{results.PlanKovara: {"requests": "40"}, results.PlanTune: {"rounds": "4"}}}
	if err := storage.OpenEndpoints(filepath.Join(dir, "config")).Put(storage.SavedEndpoint{Name: "lab box", URL: "http://127.0.0.1:1/v1"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := storage.OpenFormState(filepath.Join(dir, "config")).Save(kept); err != nil {
		t.Fatal(err)
	}
	h := newHarnessAt(t, dir, func(o *Options) { o.Demo = true })
	var run *runState
	h.locked(func() {
		b := h.u.bench
		run = b.running
		if run == nil || b.live.title.Text != "Benchmarking "+SimulatorName || b.live.model != sim.Demo().Models[0] {
			t.Fatalf("the demo: running %v, %q", run != nil, b.live.title.Text)
		}
		if b.kind().ID != results.PlanTune || b.endpointSelect.Selected != "lab box" || !slices.Equal(tuneRows(b.tune), rows) ||
			b.kovara.requestsEntry.Text != "40" || b.tune.roundsEntry.Text != "4" {
			t.Errorf("beside the demo the form is not the person's: plan %s on %q, rows %+v, requests %q, rounds %q",
				b.kind().ID, b.endpointSelect.Selected, tuneRows(b.tune), b.kovara.requestsEntry.Text, b.tune.roundsEntry.Text)
		}
		b.kovara.seedEntry.SetText("9") // a change, as the person might make during the demo
		h.u.closeWindow()
		run.cancel()
	})
	// The run ends (and shows its end) before the next test's widgets.
	<-run.done
	if got := h.u.fyne.Preferences().String(prefLastEndpoint); got != "" {
		t.Errorf("the demo made %q the last endpoint", got)
	}
	st, err := storage.OpenFormState(filepath.Join(dir, "config")).Load()
	if err != nil {
		t.Fatal(err)
	}
	if st.Plan != results.PlanTune || st.Endpoint != "lab box" || st.Tune == nil || !slices.Equal(st.Tune.Rows, rows) ||
		st.Forms[results.PlanKovara]["requests"] != "40" || st.Forms[results.PlanKovara]["seed"] != "9" {
		t.Errorf("after the demo the form's file holds %+v", st)
	}
}
