package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

func TestExportCompleteRun(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	id := h.seedRun(url, []int{1, 2}, 8, nil)
	h.locked(func() {
		h.u.historyScreen.reload()
		h.u.historyScreen.open(id)
		test.Tap(h.u.historyScreen.opened.export)
	})
	var v *ExportView
	h.locked(func() {
		v = h.u.showExport(id) // the same view the button opened, kept for the test
		if !v.Publishable || !strings.Contains(v.Payload, `"runs"`) || strings.Contains(v.Payload, "local") || strings.Contains(v.Payload, "127.0.0.1") {
			t.Fatalf("publishable %v reasons %v payload:\n%s", v.Publishable, v.Reasons, v.Payload)
		}
		if v.payload.Text != v.Payload {
			t.Error("the payload view should show exactly the payload")
		}
	})
	out := filepath.Join(t.TempDir(), "export.json")
	if err := v.saveTo(out); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	f, err := results.Decode(data)
	if err != nil || !f.Complete || len(f.Runs) != 2 {
		t.Fatalf("exported file: %v", err)
	}
	if string(data) != v.Payload {
		t.Errorf("the saved file is not the document shown:\n%s", data)
	}
}

// The exported file holds only what is published: a run whose local
// section names the endpoint, its host, the served models and the
// server's error messages exports none of them, and what is saved is
// what the page shows. The private copy, plainly named, keeps them.
func TestExportLeavesPrivateDetailsHome(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	private := []string{"gpubox.lan", "http://gpubox.lan:8000/v1", "basement rig", "secret-finetune-x", "upstream llama crashed at gpubox"}
	id := h.seedRun(url, []int{1, 2}, 8, func(f *results.File) {
		f.Local.Endpoint, f.Local.EndpointHost, f.Local.EndpointName = private[1], private[0], private[2]
		f.Local.ServedModels = append(f.Local.ServedModels, private[3])
		f.Local.Levels[0].Messages = map[string][]string{"http_500": {private[4]}}
	})
	var v *ExportView
	h.locked(func() {
		v = h.u.showExport(id)
		if !v.Publishable {
			t.Fatalf("not publishable: %v", v.Reasons)
		}
		if v.saveButton.Text != "Save for publishing…" || !strings.Contains(v.privateSave.Text, "private copy (with endpoint details)") {
			t.Errorf("buttons %q and %q", v.saveButton.Text, v.privateSave.Text)
		}
	})
	dir := t.TempDir()
	out := filepath.Join(dir, "export.json")
	if err := v.saveTo(out); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	if string(data) != v.Payload || v.payload.Text != string(data) {
		t.Error("the page and the saved file differ")
	}
	for _, secret := range append(private, `"local"`, "127.0.0.1") {
		if strings.Contains(string(data), secret) {
			t.Errorf("the exported file contains %q", secret)
		}
	}
	if f, err := results.Decode(data); err != nil || len(f.Runs) != 2 || !f.Complete {
		t.Errorf("the exported file is not a results file: %v", err)
	}

	priv := filepath.Join(dir, "private.json")
	if err := v.savePrivateTo(priv); err != nil {
		t.Fatal(err)
	}
	whole, _ := os.ReadFile(priv)
	if !strings.Contains(string(whole), private[0]) || !strings.Contains(v.note.Text, "keep it to yourself") {
		t.Errorf("the private copy should be the whole file, said as such: %q", v.note.Text)
	}
}

func TestExportRefusesIncompleteAndSimulated(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	incomplete := h.seedRun(url, []int{1, 2}, 8, func(f *results.File) {
		f.Complete = false
		f.Local.PartialRun = &f.Runs[1]
		f.Runs = f.Runs[:1]
	})
	simulated := h.seedRun(url, []int{1}, 8, func(f *results.File) { f.Local.Simulated = true })
	tests := []struct {
		id, want string
	}{
		{incomplete, "interrupted"},
		{simulated, "simulator"},
	}
	for _, tc := range tests {
		h.locked(func() {
			v := h.u.showExport(tc.id)
			if v.Publishable || v.Payload != "" {
				t.Fatalf("%s: publishable", tc.id)
			}
			if !strings.Contains(strings.Join(v.Reasons, " "), tc.want) || v.saveButton != nil {
				t.Errorf("%s: reasons %v, a publish button %v", tc.id, v.Reasons, v.saveButton != nil)
			}
			// Nothing can be saved for publishing; a private copy, said
			// as such, still can.
			out := filepath.Join(t.TempDir(), "private.json")
			if err := v.saveTo(out); err == nil {
				t.Error("saved an unpublishable run for publishing")
			}
			if err := v.savePrivateTo(out); err != nil || !strings.Contains(v.note.Text, "private copy") {
				t.Errorf("private copy: %v, note %q", err, v.note.Text)
			}
		})
	}
}

// TestExportSaysWhyOnce: a Kovara run with a workload of its own cannot be
// published, and its notes carry the same sentence; Export says it once,
// in the list of reasons, and keeps the rest of the note.
func TestExportSaysWhyOnce(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	id := h.seedRun(url, []int{1}, 4, func(f *results.File) {
		f.Local.Workload = &results.Workload{SharedPrefix: 2000, Turns: 2}
	})
	h.locked(func() {
		v := h.u.showExport(id)
		if v.Publishable {
			t.Fatal("a run with its own workload is publishable")
		}
		shown := strings.Join(v.Reasons, "\n")
		if v.warnings != nil {
			shown += "\n" + v.warnings.Text
		}
		if got := strings.Count(shown, results.WorkloadUnpublishable); got != 1 {
			t.Errorf("the reason is said %d times, want once:\n%s", got, shown)
		}
		if !strings.Contains(shown, "shared 2,000-token system prompt") {
			t.Errorf("the workload's note is gone:\n%s", shown)
		}
	})
}
