package ui

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/sim/simtest"
	"github.com/kovara/desktop/hw/hwtest"
	"github.com/kovara/desktop/storage"
)

// harness is the app on Fyne's test driver. Background goroutines change
// widgets through opts.Do, which takes mu; the test reads widgets under mu
// too, so the race detector sees one orderly UI thread.
type harness struct {
	t   testing.TB
	mu  sync.Mutex
	u   *App
	win fyne.Window
	dir string
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessAt(t, t.TempDir())
}

// newHarnessAt is the app over the folders under dir: a second one over
// the same dir is the app started again. set changes its options.
func newHarnessAt(t testing.TB, dir string, set ...func(*Options)) *harness {
	t.Helper()
	return newHarnessOn(t, test.NewTempApp(t), dir, set...)
}

// newHarnessOn is newHarnessAt on the Fyne app a: a second one on the
// same app is the app started again with its preferences as it left
// them (a test app's are in memory only).
func newHarnessOn(t testing.TB, a fyne.App, dir string, set ...func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, dir: dir}
	opts := Options{
		Dirs: storage.Dirs{Data: h.dir + "/data", Config: h.dir + "/config"},
		Keys: storage.NewMemoryKeys(),
		Do: func(f func()) {
			h.mu.Lock()
			defer h.mu.Unlock()
			f()
		},
	}
	for _, f := range set {
		f(&opts)
	}
	// Built under the UI lock: a restored endpoint's model listing
	// starts while the screens are still being built.
	h.mu.Lock()
	u, err := New(a, opts)
	h.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	h.u, h.win = u, u.Window()
	t.Cleanup(func() {
		h.locked(func() {
			if st := u.bench.running; st != nil {
				st.cancel()
			}
			u.bench.stopListing()
		})
		// The form's last write lands before the folder is removed, and
		// a recording's trace is closed.
		h.locked(u.bench.closeForm)
		h.locked(u.endpointS.rec.close)
		u.bg.Wait()
		// A listing's goroutine may still be on its way to the UI lock:
		// the next test's widgets share Fyne's font caches with this one's.
		u.bench.models.wg.Wait()
	})
	return h
}

// T is the harness's test, for helpers that need a *testing.T (Fyne's
// renderer lookups); a benchmark's harness cannot use them.
func (h *harness) T() *testing.T {
	t, ok := h.t.(*testing.T)
	if !ok {
		h.t.Fatalf("this helper needs a test, not a benchmark")
	}
	return t
}

// locked runs f as the UI thread would.
func (h *harness) locked(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

// waitFor polls cond (under the UI lock) until it holds or time runs out.
func (h *harness) waitFor(what string, limit time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		ok := false
		h.locked(func() { ok = cond() })
		if ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("timed out waiting for %s", what)
}

var startTestSim = simtest.Start

// findButton returns the first button with this text in o's tree.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	switch x := o.(type) {
	case *widget.Button:
		if x.Text == text {
			return x
		}
	case *fyne.Container:
		for _, c := range x.Objects {
			if b := findButton(t, c, text); b != nil {
				return b
			}
		}
	case fyne.Widget:
		r := test.TempWidgetRenderer(t, x)
		for _, c := range r.Objects() {
			if b := findButton(t, c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// tapInOverlay taps a button of the topmost dialog.
func (h *harness) tapInOverlay(text string) {
	h.t.Helper()
	top := h.win.Canvas().Overlays().Top()
	if top == nil {
		h.t.Fatalf("no dialog is showing")
	}
	b := findButton(h.T(), top, text)
	if b == nil {
		h.t.Fatalf("the dialog has no %q button", text)
	}
	test.Tap(b)
}

func TestEndpointFormSaveAndTest(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"llama-3.1-8b"}})
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "lab box")
		test.Type(s.urlEntry, url+"/v1")
		test.Type(s.keyEntry, "sk-lab-secret")
		test.Tap(s.saveButton)
		if !strings.HasPrefix(s.formNote.Text, "Saved") {
			t.Fatalf("after Save: %q", s.formNote.Text)
		}
		if len(s.names) != 2 || s.names[1] != "lab box" {
			t.Fatalf("list %v", s.names)
		}
		test.Tap(s.testButton)
	})
	h.waitFor("the Test result", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Serving 1 model: llama-3.1-8b") })
	h.locked(func() {
		got := s.testResult.Text
		for _, want := range []string{"Engine: vllm", "Context length", "ignore_eos accepted", "Token usage: reported", "Server metrics: vLLM /metrics answers"} {
			if !strings.Contains(got, want) {
				t.Errorf("Test result lacks %q:\n%s", want, got)
			}
		}
		// The key is in the (memory) keyring, not in the endpoints file.
		if k, err := h.u.keys.Get("lab box"); err != nil || k != "sk-lab-secret" {
			t.Errorf("key %q %v", k, err)
		}
		// The benchmark screen offers the new endpoint.
		if opts := h.u.bench.endpointSelect.Options; len(opts) != 2 || opts[1] != "lab box" {
			t.Errorf("benchmark endpoints %v", opts)
		}
	})
}

func TestEndpointTestSaysWhatFailed(t *testing.T) {
	h := newHarness(t)
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "nowhere")
		test.Type(s.urlEntry, "http://127.0.0.1:1")
		test.Tap(s.testButton)
	})
	h.waitFor("the failure", 20*time.Second, func() bool { return strings.HasPrefix(s.testResult.Text, "Failed:") })
	h.locked(func() {
		if !strings.Contains(s.testResult.Text, "is the server running") {
			t.Errorf("failure text: %q", s.testResult.Text)
		}
		test.Type(s.urlEntry, "x") // now "http://127.0.0.1:1x"
		test.Tap(s.saveButton)
		if !strings.HasPrefix(s.formNote.Text, "Not saved") {
			t.Errorf("bad address saved: %q", s.formNote.Text)
		}
	})
}

func TestSimulatorEndpointIsAlwaysThere(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		s := h.u.endpointS
		if s.names[0] != SimulatorName || !s.nameEntry.Disabled() || !strings.Contains(s.formNote.Text, "never be published") {
			t.Errorf("simulator entry: %v %v %q", s.names, s.nameEntry.Disabled(), s.formNote.Text)
		}
		test.Tap(s.testButton)
	})
	h.waitFor("the simulator's Test", 20*time.Second, func() bool {
		return strings.Contains(h.u.endpointS.testResult.Text, "kovara-sim-8b")
	})
}

func TestPlanFieldsValidateInline(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		if b.runButton.Disabled() {
			t.Fatalf("defaults should be runnable: %q", b.planNote.Text)
		}
		tests := []struct {
			entry *formEntry
			value string
			want  string
		}{
			{b.kovara.levelsEntry, "1,0", "concurrency 0"},
			{b.kovara.requestsEntry, "4", "or more requests per level"},
			{b.kovara.outputEntry, "zero", "output tokens"},
			{b.kovara.timeoutEntry, "-1", "timeout"},
			{b.kovara.seedEntry, "1.5", "seed"},
		}
		for _, tc := range tests {
			old := tc.entry.Text
			tc.entry.SetText(tc.value)
			if !b.runButton.Disabled() || !strings.Contains(b.planNote.Text, tc.want) {
				t.Errorf("%q: run enabled=%v note %q, want disabled mentioning %q", tc.value, !b.runButton.Disabled(), b.planNote.Text, tc.want)
			}
			if b.planNote.Importance != widget.WarningImportance {
				t.Errorf("%q: why the plan cannot run is not in the warning colour", tc.value)
			}
			if tc.entry.Validate() == nil && tc.value != "4" {
				t.Errorf("%q: the field itself should show the error", tc.value)
			}
			tc.entry.SetText(old)
		}
		if b.runButton.Disabled() {
			t.Errorf("restored form should be runnable: %q", b.planNote.Text)
		}
		if b.planNote.Importance == widget.WarningImportance {
			t.Errorf("the plan's summary %q is in the warning colour", b.planNote.Text)
		}
	})
}

// collectEntries gathers every entry in o's tree.
func collectEntries(t *testing.T, o any, out *[]*widget.Entry) {
	switch x := o.(type) {
	case *widget.Entry:
		*out = append(*out, x)
	case *formEntry:
		*out = append(*out, &x.Entry)
	case *fyne.Container:
		for _, c := range x.Objects {
			collectEntries(t, c, out)
		}
	case fyne.Widget:
		r := test.TempWidgetRenderer(t, x)
		for _, c := range r.Objects() {
			collectEntries(t, c, out)
		}
	}
}

func TestEndpointTestShowsGPUs(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	metrics, err := os.ReadFile(filepath.Join("..", "hw", "testdata", "nvidia_gpu_exporter_3090_x2.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(metrics) }))
	defer exporter.Close()
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "two 3090s")
		test.Type(s.urlEntry, url)
		test.Type(s.gpuEntry, exporter.URL+"/metrics")
		test.Tap(s.testButton)
	})
	h.waitFor("the GPU line", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "GPUs (") })
	h.locked(func() {
		if !strings.Contains(s.testResult.Text, "2 × NVIDIA GeForce RTX 3090") {
			t.Errorf("Test result:\n%s", s.testResult.Text)
		}
	})
}

// TestEndpointWallPlug: the endpoint form's Wall power is saved with the
// endpoint, comes back when it is chosen again, and its Test reads the
// plug in the CLI's words (a stand-in answering a real Shelly Plus 1PM's
// status).
func TestEndpointWallPlug(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	plug := hwtest.StandInShelly(t)
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "plugged box")
		test.Type(s.urlEntry, url)
		test.Type(s.wallEntry, plug)
		test.Tap(s.saveButton)
		test.Tap(s.testButton)
	})
	h.waitFor("the wall line", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Wall power: ") })
	h.locked(func() {
		if want := "Wall power: Shelly (Gen2 or later) at " + strings.TrimPrefix(plug, "http://") + ": 28.2 W now (switch:0)"; !strings.Contains(s.testResult.Text, want) {
			t.Errorf("Test result:\n%s\nwant %q", s.testResult.Text, want)
		}
		saved, ok, err := h.u.endpoints.Get("plugged box")
		if err != nil || !ok || saved.Wall != plug {
			t.Errorf("saved %+v %v %v, want the plug kept", saved, ok, err)
		}
	})
}

// TestEndpointHomeAssistantToken: a Home Assistant sensor as the wall
// plug asks for its token beside the address; Save keeps the token in
// the keyring (never in endpoints.yaml), Test reads the sensor with it
// (typed, or from the keyring once saved), a rename takes it along, and
// deleting the endpoint forgets it. A stand-in answers as Home Assistant's REST API does: the
// sensor's state with the token, 401 without.
func TestEndpointHomeAssistantToken(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	const token = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.test"
	ha := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token || r.URL.Path != "/api/states/sensor.rack_power" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, "401: Unauthorized")
			return
		}
		fmt.Fprint(w, `{"entity_id":"sensor.rack_power","state":"84.2","attributes":{"unit_of_measurement":"W","device_class":"power"}}`)
	}))
	t.Cleanup(ha.Close)
	plug := "ha://" + strings.TrimPrefix(ha.URL, "http://") + "/sensor.rack_power"
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		if s.wallToken.Visible() {
			t.Error("the token's entry shows before the plug is a Home Assistant sensor")
		}
		test.Type(s.nameEntry, "ha box")
		test.Type(s.urlEntry, url)
		test.Type(s.wallEntry, plug)
		if !s.wallToken.Visible() {
			t.Fatal("no entry for the sensor's token")
		}
		test.Type(s.wallToken, token)
		test.Tap(s.saveButton)
	})
	if got, err := h.u.keys.Get(storage.WallAccount("ha box")); err != nil || got != token {
		t.Fatalf("the keyring holds %q (%v), want the token", got, err)
	}
	yaml, err := os.ReadFile(filepath.Join(h.u.opts.Dirs.Config, "endpoints.yaml"))
	if err != nil || strings.Contains(string(yaml), token) {
		t.Fatalf("endpoints.yaml holds the token (or cannot be read: %v)", err)
	}
	// Selected again, the form holds no token: Test reads the keyring's.
	h.locked(func() {
		s.list.Select(0)
		s.list.Select(1)
	})
	h.waitFor("the endpoint's form", 10*time.Second, func() bool { return s.nameEntry.Text == "ha box" })
	h.locked(func() {
		if s.wallToken.Text != "" {
			t.Errorf("the form shows the token %q", s.wallToken.Text)
		}
		test.Tap(s.testButton)
	})
	h.waitFor("the wall line", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Wall power: ") })
	h.locked(func() {
		if !strings.Contains(s.testResult.Text, "84.2 W now") {
			t.Errorf("Test result:\n%s\nwant the sensor's 84.2 W", s.testResult.Text)
		}
		if strings.Contains(s.testResult.Text, token) {
			t.Error("Test says the token")
		}
		// Renamed with the token left empty: it goes with the name.
		s.nameEntry.SetText("ha rack")
		test.Tap(s.saveButton)
	})
	if got, err := h.u.keys.Get(storage.WallAccount("ha rack")); err != nil || got != token {
		t.Errorf("after the rename the keyring holds %q (%v) under the new name", got, err)
	}
	if _, err := h.u.keys.Get(storage.WallAccount("ha box")); !errors.Is(err, storage.ErrNoKey) {
		t.Errorf("after the rename the old name's token is still there (%v)", err)
	}
	h.locked(func() {
		test.Tap(s.deleteButton)
		h.tapInOverlay("Yes")
	})
	if _, err := h.u.keys.Get(storage.WallAccount("ha rack")); !errors.Is(err, storage.ErrNoKey) {
		t.Errorf("after Delete the keyring still answers %v", err)
	}
}
