package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// assertMarkup compares a canvas's markup with testdata/screens/NAME,
// rewriting it with -update.
func assertMarkup(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "screens", name)
	if updateGolden() {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(want) != got {
		failed := filepath.Join("testdata", "failed", name)
		os.MkdirAll(filepath.Dir(failed), 0o755)
		os.WriteFile(failed, []byte(got), 0o644)
		t.Errorf("%s changed; the new markup is in %s (run with -update if the change is right)", path, failed)
	}
}

func TestSetupScreenMarkup(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		h.win.Resize(h.win.Canvas().Size().Max(h.win.Content().MinSize()))
		assertMarkup(t, "benchmark_setup.xml", test.RenderToMarkup(h.win.Canvas()))
	})
}

func TestManifestChoiceFillsTheForm(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	good := writeTestManifest(t)
	bad := filepath.Join(t.TempDir(), "broken.yaml")
	os.WriteFile(bad, []byte("model: {id: x}\nprofiles:\n  p: {concurency: [1]}\n"), 0o644)
	h.locked(func() {
		b.kovara.loadManifest(good)
		if b.kovara.manifest == nil || b.kovara.manifestCard.Hidden || !strings.Contains(b.kovara.manifestCard.Title, "Qwen3 8B") {
			t.Fatalf("manifest card: %v %q", b.kovara.manifestCard.Hidden, b.kovara.manifestCard.Title)
		}
		if b.kovara.profileSelect.Selected != "default" || b.kovara.inputEntry.Text != "512" || b.kovara.levelsEntry.Text != "1,4" || b.kovara.requestsEntry.Text != "20" {
			t.Errorf("default profile not applied: %q %q %q %q", b.kovara.profileSelect.Selected, b.kovara.inputEntry.Text, b.kovara.levelsEntry.Text, b.kovara.requestsEntry.Text)
		}
		b.kovara.profileSelect.SetSelected("long")
		if b.kovara.inputEntry.Text != "4096" || b.kovara.levelsEntry.Text != "1" {
			t.Errorf("long profile: %q %q", b.kovara.inputEntry.Text, b.kovara.levelsEntry.Text)
		}
		if !strings.Contains(b.planNote.Text, "Hardware run (long)") || b.runButton.Disabled() {
			t.Errorf("plan note %q", b.planNote.Text)
		}
		if recent := b.kovara.recentManifests(); len(recent) != 1 || recent[0] != good {
			t.Errorf("recent manifests %v", recent)
		}
		// A broken manifest is explained and the choice stays as it was.
		b.kovara.loadManifest(bad)
		if b.kovara.manifestSelect.Selected != good || b.kovara.manifest == nil {
			t.Errorf("after a bad manifest the choice is %q", b.kovara.manifestSelect.Selected)
		}
		if top := h.win.Canvas().Overlays().Top(); top == nil {
			t.Error("no error dialog for the broken manifest")
		} else if !strings.Contains(test.RenderObjectToMarkup(top), "concurency") {
			t.Error("the error dialog does not name the bad key")
		}
		// Back to a protocol test.
		b.kovara.manifestSelect.SetSelected(manifestNone)
		if b.kovara.manifest != nil || !b.kovara.profileSelect.Disabled() || !strings.HasPrefix(b.planNote.Text, "Protocol test") {
			t.Errorf("protocol test: %v %q", b.kovara.profileSelect.Disabled(), b.planNote.Text)
		}
	})
}

// writeTestManifest writes a kovara.yaml of two profiles for the tests
// that choose a manifest, and says where.
func writeTestManifest(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kovara.yaml")
	if err := os.WriteFile(path, []byte(`name: Qwen3 8B on one 4090
model: {id: Qwen/Qwen3-8B, revision: 0123abc}
engine: {name: vllm, version: 0.11.0}
hardware: {accelerator: NVIDIA GeForce RTX 4090, gpu_count: 1}
precision: bf16
profiles:
  default: {input_tokens: 512, output_tokens: 128, concurrency: [1, 4], requests: 20, warmup: 2}
  long: {input_tokens: 4096, output_tokens: 256, concurrency: [1], requests: 10}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
