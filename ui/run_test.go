package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/hw/hwtest"
	"github.com/kovara/desktop/storage"
)

// setPlan fills the form with a small plan.
func (h *harness) setPlan(levels, requests, output string) {
	b := h.u.bench
	b.kovara.levelsEntry.SetText(levels)
	b.kovara.requestsEntry.SetText(requests)
	b.kovara.outputEntry.SetText(output)
	b.kovara.inputEntry.SetText("64")
	b.kovara.warmupEntry.SetText("1")
}

// TestRunShowsLiveThenResult: the live view shows the levels as they run,
// then the result, saved in the library, says what its file says. The
// answers are 300 tokens long (the first level about 2.4 s, the whole
// plan about 4 s), so a quarter-second redraw lands inside a level
// however slow the machine; and the state shown is the one the saved
// file's own warnings give, since whether the simulator seemed to queue
// is a judgement of how fast this machine ran it.
func TestRunShowsLiveThenResult(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		h.setPlan("1,2,4", "8", "300")
		if b.runButton.Disabled() {
			t.Fatalf("run disabled: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
		if b.live == nil || b.content.Objects[0] != b.live.content {
			t.Fatal("the live view is not showing")
		}
	})
	h.waitFor("live progress", 20*time.Second, func() bool {
		return b.live.redraws > 0 && strings.HasPrefix(b.live.phase.Text, "Level")
	})
	h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
	// The run is already in the library.
	list, err := h.u.lib.List()
	if err != nil || len(list) != 1 || !list[0].Complete || len(list[0].Levels) != 3 || !list[0].Simulated {
		t.Fatalf("library: %+v %v", list, err)
	}
	saved, err := h.u.lib.Load(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	ws := results.Warnings(saved)
	for _, w := range ws {
		if w.Severity == results.SeverityProblem && w.Kind != results.WarnQueueing {
			t.Errorf("the saved run has a problem: %s", w.Text)
		}
	}
	h.locked(func() {
		r := b.result
		if b.content.Objects[0] != r.content {
			t.Fatal("the result is not showing")
		}
		if len(r.rows) != 3 || r.rows[0][0] != "1" || r.rows[2][0] != "4" || r.rows[2][1] != "8 / 0" {
			t.Errorf("result rows %v", r.rows)
		}
		if want := results.Headline(saved, ws) + " Simulated: made against the built-in simulator."; r.state.Text != want {
			t.Errorf("state %q, want the saved file's %q", r.state.Text, want)
		}
		if !r.tpsChart.ShowingChart() || !r.latencyChart.ShowingChart() {
			t.Errorf("result charts: %v %v", r.tpsChart.Text(), r.latencyChart.Text())
		}
		if b.live.redraws > 4*60 {
			t.Errorf("%d live redraws: more than 4 a second", b.live.redraws)
		}
	})
	h.locked(func() {
		if b.result.id != list[0].ID {
			t.Errorf("result id %q, library %q", b.result.id, list[0].ID)
		}
		test.Tap(b.result.newRun)
		if b.content.Objects[0] != b.setup || b.kovara.levelsEntry.Text != "1,2,4" {
			t.Errorf("New benchmark should return to the form as it was")
		}
	})
}

func TestStopKeepsPartialRun(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		// A short first level and a long second one (about 2.4 s), so
		// Stop lands inside it however slow the machine.
		h.setPlan("4,1", "8", "300")
		test.Tap(b.runButton)
	})
	h.waitFor("level 2", 30*time.Second, func() bool {
		return strings.HasPrefix(b.live.phase.Text, "Level 2")
	})
	h.locked(func() {
		test.Tap(b.live.stopButton)
		// Stop asks first; "Keep running" changes nothing.
		h.tapInOverlay("Keep running")
		if b.running == nil {
			t.Fatal("dismissing the question stopped the run")
		}
		test.Tap(b.live.stopButton)
		h.tapInOverlay("Stop")
	})
	h.waitFor("the partial result", 30*time.Second, func() bool { return b.result != nil })
	h.locked(func() {
		r := b.result
		if len(r.rows) != 2 || !strings.Contains(r.rows[1][0], "partial") || !strings.HasPrefix(r.state.Text, "Stopped") {
			t.Errorf("rows %v state %q", r.rows, r.state.Text)
		}
	})
	list, _ := h.u.lib.List()
	if len(list) != 1 || list[0].Complete || len(list[0].Levels) != 1 || list[0].PartialLevel != 1 {
		t.Fatalf("library after Stop: %+v", list)
	}
	f, err := h.u.lib.Load(list[0].ID)
	if err != nil || f.Complete || f.Local.PartialRun == nil {
		t.Fatalf("partial file: %v", err)
	}
}

// TestLiveServerAndGPUCharts: a run on an endpoint with a GPU exporter
// and a wall plug (a stand-in answering a real Shelly Plus 1PM's status)
// draws the server's and the power charts live, the counters say both
// powers, and the result's Power and cost tab prices the run at the
// price typed there, which the app keeps for the next result.
func TestLiveServerAndGPUCharts(t *testing.T) {
	h := newHarness(t)
	plug := hwtest.StandInShelly(t)
	metrics, err := os.ReadFile(filepath.Join("..", "hw", "testdata", "nvidia_gpu_exporter_3090_x2.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(metrics) }))
	defer exp.Close()
	url := startTestSim(t, sim.Config{TokenInterval: 2 * time.Millisecond, PrefillRate: 1e6})
	if err := h.u.endpoints.Put(storage.SavedEndpoint{Name: "rig", URL: url, VerifyTLS: true, GPU: exp.URL + "/metrics", Wall: plug}, ""); err != nil {
		t.Fatal(err)
	}
	b := h.u.bench
	h.locked(func() {
		b.refreshEndpoints()
		b.selectEndpoint("rig")
		h.setPlan("2,4", "16", "400") // about 6 s: several scrapes and samples
		test.Tap(b.runButton)
		b.live.tabs.SelectIndex(1)
	})
	h.waitFor("the server chart", 30*time.Second, func() bool { return b.live.srvChart.ShowingChart() })
	h.locked(func() { b.live.tabs.SelectIndex(2) })
	h.waitFor("the GPU power chart", 30*time.Second, func() bool { return b.live.powerChart.ShowingChart() })
	h.locked(func() {
		want := fmt.Sprintf("wall %.0f W", hwtest.StandInShellyW)
		if !strings.Contains(b.live.counters.Text, "GPU ") || !strings.Contains(b.live.counters.Text, want) {
			t.Errorf("counters %q should show the GPU power and %q", b.live.counters.Text, want)
		}
		if title := b.live.powerChart.Title(); title != "Power: the wall and the GPUs" {
			t.Errorf("the live power chart is %q", title)
		}
	})
	h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
	h.locked(func() {
		r := b.result
		if len(r.columns) != len(results.ResultColumns)+len(results.EnergyColumns) || r.rows[0][len(r.columns)-1] == results.Missing {
			t.Errorf("energy columns: %v / %v", r.columns, r.rows)
		}
		e := r.energy
		if e == nil {
			t.Fatal("no Power and cost tab")
		}
		if slices.ContainsFunc(e.columns, func(c string) bool { return strings.HasSuffix(c, "1M tok") }) {
			t.Errorf("a cost before any price was given: %q", e.columns)
		}
		test.Type(e.price, "0,30")
		test.Type(e.currency, "EUR")
		if last := e.columns[len(e.columns)-1]; last != "EUR per\n1M tok" {
			t.Errorf("the last column is %q, want the cost", last)
		}
		if p := h.u.price(); p == nil || p.PerKWh != 0.30 || p.Currency != "EUR" {
			t.Errorf("the price kept is %+v", p)
		}
		e.price.SetText("thirty")
		if !e.problem.Visible() || h.u.price() == nil {
			t.Errorf("a price that is no number: problem %q shown %v, kept %+v", e.problem.Text, e.problem.Visible(), h.u.price())
		}
	})
}

// Closing the window during a run asks as Stop does; "Keep running"
// changes nothing, "Stop and close" stops the run the way Stop does (the
// level in progress kept as partial, the file saved) and then closes.
func TestCloseDuringRunKeepsPartialLevel(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		// A short first level and a long second one (8 answers of 300
		// tokens one after another, about 2.4 s), so the close lands
		// inside it however slow the machine.
		h.setPlan("4,1", "8", "300")
		test.Tap(b.runButton)
	})
	h.waitFor("level 2", 30*time.Second, func() bool {
		return strings.HasPrefix(b.live.phase.Text, "Level 2")
	})
	h.locked(func() {
		h.u.requestClose() // the window's close intercept
		h.tapInOverlay("Keep running")
		if b.running == nil || h.u.closed {
			t.Fatal("dismissing the question stopped the run or closed the window")
		}
		h.u.requestClose()
		h.tapInOverlay("Stop and close")
	})
	h.waitFor("the window to close", 30*time.Second, func() bool { return h.u.closed })
	list, _ := h.u.lib.List()
	if len(list) != 1 || list[0].Complete || len(list[0].Levels) != 1 || list[0].PartialLevel != 1 {
		t.Fatalf("library after closing mid-run: %+v", list)
	}
	f, err := h.u.lib.Load(list[0].ID)
	if err != nil || f.Local.PartialRun == nil || f.Local.PartialRun.Concurrency != 1 {
		t.Fatalf("the closed run's file should keep level 2 (concurrency 1) as partial: %v", err)
	}
}

// Without a run, closing closes at once and remembers the window's size
// for the next start.
func TestCloseRemembersWindowSize(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		h.win.Resize(fyne.NewSize(1100, 700))
		h.u.requestClose()
		if !h.u.closed {
			t.Fatal("closing without a run should not ask")
		}
		if got := h.u.savedSize(); got != fyne.NewSize(1100, 700) {
			t.Errorf("saved size %v, want 1100×700", got)
		}
	})
}

// Ctrl+1…4 go to the four places and Ctrl+Q closes, as the close button
// does.
func TestKeyboardShortcuts(t *testing.T) {
	h := newHarness(t)
	press := windowShortcuts(t, h)
	h.locked(func() {
		for i, k := range []fyne.KeyName{fyne.Key2, fyne.Key3, fyne.Key4, fyne.Key1} {
			press(k)
			if got, want := h.u.tabs.SelectedIndex(), (i+1)%4; got != want {
				t.Errorf("Ctrl+%s: place %d, want %d", k, got, want)
			}
		}
		// With the keyboard in a text field, Fyne's driver gives the
		// field every shortcut first: the app's still work, and the
		// field keeps its own.
		b := h.u.bench
		h.win.Canvas().Focus(b.kovara.levelsEntry)
		b.kovara.levelsEntry.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.Key2, Modifier: fyne.KeyModifierShortcutDefault})
		if got := h.u.tabs.SelectedIndex(); got != 1 {
			t.Errorf("Ctrl+2 in a field: place %d, want 1", got)
		}
		// The hidden field lets go of the keyboard: what is typed next
		// must not change the plan out of sight.
		if f := h.win.Canvas().Focused(); f != nil {
			t.Errorf("after Ctrl+2 the keyboard is still in %T", f)
		}
		// Ctrl+Shift+2 is not the app's: the field keeps it.
		h.u.tabs.SelectIndex(0)
		h.win.Canvas().Focus(b.kovara.levelsEntry)
		b.kovara.levelsEntry.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.Key2, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift})
		if got := h.u.tabs.SelectedIndex(); got != 0 {
			t.Errorf("Ctrl+Shift+2 in a field: place %d, want 0", got)
		}
		h.u.tabs.SelectIndex(0)
		h.win.Canvas().Focus(b.kovara.levelsEntry)
		b.kovara.levelsEntry.TypedShortcut(&fyne.ShortcutSelectAll{})
		if got := b.kovara.levelsEntry.SelectedText(); got != b.kovara.levelsEntry.Text || got == "" {
			t.Errorf("Ctrl+A in a field selected %q of %q", got, b.kovara.levelsEntry.Text)
		}
		b.kovara.levelsEntry.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault})
		if !h.u.closed {
			t.Error("Ctrl+Q in a field did not close the window")
		}
	})
}

// windowShortcuts presses Ctrl and a key on the window itself, as the
// driver does when no field has the keyboard.
func windowShortcuts(t *testing.T, h *harness) func(fyne.KeyName) {
	t.Helper()
	// The test window's canvas wraps the one that dispatches shortcuts.
	inner := reflect.ValueOf(h.win.Canvas()).Elem().FieldByName("WindowlessCanvas").Interface()
	typed, ok := inner.(interface{ TypedShortcut(fyne.Shortcut) })
	if !ok {
		t.Fatal("the test canvas takes no shortcuts")
	}
	return func(k fyne.KeyName) {
		typed.TypedShortcut(&desktop.CustomShortcut{KeyName: k, Modifier: fyne.KeyModifierShortcutDefault})
	}
}

// TestCtrlQFromTheWindow: Ctrl+Q with no field holding the keyboard
// closes too.
func TestCtrlQFromTheWindow(t *testing.T) {
	h := newHarness(t)
	press := windowShortcuts(t, h)
	h.locked(func() {
		press(fyne.KeyQ)
		if !h.u.closed {
			t.Error("Ctrl+Q did not close the window")
		}
	})
}
