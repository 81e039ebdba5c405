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
	if payload, reasons := results.PublishCheck(data); len(reasons) != 0 || string(payload) != v.Payload {
		t.Errorf("the saved file's payload differs from the one shown: %v", reasons)
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
			if !strings.Contains(strings.Join(v.Reasons, " "), tc.want) || v.saveButton.Text != "Save a private copy…" {
				t.Errorf("%s: reasons %v button %q", tc.id, v.Reasons, v.saveButton.Text)
			}
			// A private copy is still allowed.
			out := filepath.Join(t.TempDir(), "private.json")
			if err := v.saveTo(out); err != nil {
				t.Error(err)
			}
		})
	}
}
