package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// fieldWidgets gathers the fields a person fills in o's tree (text
// fields, boxes, lists), leaving out skip's.
func fieldWidgets(t *testing.T, o fyne.CanvasObject, skip fyne.CanvasObject, out *[]fyne.CanvasObject) {
	if o == skip {
		return
	}
	switch x := o.(type) {
	case *formEntry, *widget.Entry, *widget.Check, *widget.Select, *widget.SelectEntry, *widget.RadioGroup, *widget.Slider:
		*out = append(*out, x)
	case *fyne.Container:
		for _, c := range x.Objects {
			fieldWidgets(t, c, skip, out)
		}
	case fyne.Widget:
		for _, c := range test.TempWidgetRenderer(t, x).Objects() {
			fieldWidgets(t, c, skip, out)
		}
	}
}

// TestEveryFormFieldIsKept: every field a person can fill in every
// registered plan's form is one of the fields the form keeps for the
// next start (planForm.kept), under a key of its own, and every kept
// field is on the form; the settings comparison's rows are kept as rows
// (rowsState). A plan added with a field its kept leaves out fails here.
func TestEveryFormFieldIsKept(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		for _, k := range plans.All {
			f := b.forms[k.ID]
			var shown []fyne.CanvasObject
			fieldWidgets(t, f.content(), b.tune.rowsBox, &shown)
			keys := map[string]bool{}
			kept := map[fyne.CanvasObject]bool{}
			for _, kf := range f.kept() {
				if keys[kf.key] || kf.key == "" {
					t.Errorf("%s: the key %q is not one field's", k.ID, kf.key)
				}
				keys[kf.key] = true
				kept[kf.w] = true
				if !slices.Contains(shown, kf.w) {
					t.Errorf("%s: the kept field %q is not on the form", k.ID, kf.key)
				}
			}
			for _, w := range shown {
				if !kept[w] {
					t.Errorf("%s: a %T on the form (%q) is not kept for the next start", k.ID, w, fieldValue(w))
				}
			}
			if len(shown) == 0 {
				t.Errorf("%s: no fields found on its form", k.ID)
			}
		}
	})
}

// fieldValue is a field as the form's file keeps it: the text typed, the
// box's yes or no, the choice's words.
func fieldValue(w fyne.CanvasObject) string {
	switch x := w.(type) {
	case *formEntry:
		return x.Text
	case *widget.Entry:
		return x.Text
	case *widget.Check:
		if x.Checked {
			return keptYes
		}
		return keptNo
	case *widget.Select:
		return x.Selected
	}
	return fmt.Sprintf("(a %T)", w)
}

// formFields is every plan's form as it shows, by plan and key.
func formFields(b *BenchmarkScreen) map[string]map[string]string {
	all := map[string]map[string]string{}
	for _, k := range plans.All {
		all[k.ID] = map[string]string{}
		for _, kf := range b.forms[k.ID].kept() {
			all[k.ID][kf.key] = fieldValue(kf.w)
		}
	}
	return all
}

// typedValues are what a person might type in a field, by its key: none
// is a default. A field whose key is not here, or whose default it is,
// gets the first of the others that is not its text.
var typedValues = map[string]string{
	"input_tokens": "96", "output_tokens": "200", "concurrency": "2,3", "requests": "24", "warmup": "1",
	"seed": "7", "timeout": "95", "repeat": "2", "slo_ttft": "900", "slo_tpot": "40",
	"shared_prefix": "64", "prefix_groups": "2", "turns": "2", "users": "5", "rounds": "4",
	"start_timeout": "45", "depths": "1k,2k", "repeats": "3", "rates": "1,2", "burstiness": "0.5",
	"max_in_flight": "16", "sweep_max": "20", "slo_user_tps": "12", "slo_ttft_p95": "1500", "max_concurrency": "48",
}

// fillEveryForm changes every field of every plan's form from what it
// shows, as a person would (a manifest opened as Open… does, a profile
// and an arrival chosen, boxes ticked or cleared, text typed), and gives
// the settings comparison rows; it returns what the forms then show.
func fillEveryForm(t *testing.T, b *BenchmarkScreen, manifest, prompts string, rows []storage.TuneFormRow) map[string]map[string]string {
	t.Helper()
	before := formFields(b)
	for _, k := range plans.All {
		for _, kf := range b.forms[k.ID].kept() {
			switch w := kf.w.(type) {
			case *formEntry:
				v := prompts
				if kf.key != "prompts_file" {
					for _, c := range []string{typedValues[kf.key], "3", "5"} {
						if c != "" && c != w.Text {
							v = c
							break
						}
					}
				}
				w.SetText(v)
			case *widget.Check:
				w.SetChecked(!w.Checked)
			case *widget.Select:
				if w == b.kovara.manifestSelect {
					b.kovara.loadManifest(manifest)
					continue
				}
				for _, o := range w.Options {
					if o != w.Selected && o != manifestOpen {
						w.SetSelected(o)
						break
					}
				}
			default:
				t.Fatalf("%s: no way to fill the field %q (a %T)", k.ID, kf.key, kf.w)
			}
		}
	}
	f := b.tune
	for i, row := range rows {
		if i >= len(f.rows) {
			f.onAdd(row.Name, row.How, row.What)
		}
		r := f.rows[i]
		r.nameEntry.SetText(row.Name)
		for _, hw := range tuneHows {
			if hw.how == row.How {
				r.howSelect.SetSelected(hw.label)
			}
		}
		r.whatEntry.SetText(row.What)
		r.setBefore(row.Before)
	}
	filled := formFields(b)
	for id, fields := range filled {
		for key, v := range fields {
			if v == before[id][key] {
				t.Errorf("%s: the field %q was left at %q: the test changes every field", id, key, v)
			}
		}
	}
	return filled
}

// closeButton is the window's close button: the close intercept the app
// gave the window, called as the desktop driver calls it.
func closeButton(t *testing.T, h *harness) func() {
	t.Helper()
	f := reflect.ValueOf(h.win).Elem().FieldByName("onCloseIntercepted")
	if !f.IsValid() {
		t.Fatal("the test window keeps no close intercept")
	}
	intercept := *(*func())(unsafe.Pointer(f.UnsafeAddr()))
	if intercept == nil {
		t.Fatal("the app gave the window no close intercept")
	}
	return intercept
}

// TestEveryFormKeptThroughEveryClose: every plan's form and the settings
// comparison's rows, filled in, and the endpoint, model and plan chosen,
// come back as they were when the app starts again over the same
// folders, however it was closed: Ctrl+Q from a field, the window's close
// button, "Stop and close" during a run of the form, and "Stop and
// close" during the demo's run (make run: a demo's session kept nothing
// the person typed, the endpoint alone coming back — so the next start
// showed the settings comparison's rows with their commands empty and
// the Kovara form at its defaults, #47).
func TestEveryFormKeptThroughEveryClose(t *testing.T) {
	url := startTestSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 1e6, Models: []string{"q4", "q8"}})
	manifest := writeTestManifest(t)
	prompts := filepath.Join(t.TempDir(), "my prompts.jsonl")
	if err := os.WriteFile(prompts, []byte(`{"prompt": "hello"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := []storage.TuneFormRow{
		{Name: "np2", How: setup.ByCommand, What: "llama-server -m '/models/q 4.gguf' -np 2 --port 8080"},
		{Name: "q8", How: setup.ByModel, What: "q8", Before: "sudo nvidia-smi -pl 250"},
		{Name: "by hand", How: setup.ByHand, What: "restart Ollama with OLLAMA_NUM_PARALLEL=4"},
	}
	stopAndClose := func(t *testing.T, h *harness) {
		if h.u.bench.running == nil {
			t.Fatalf("no run in flight: %q", h.u.bench.planNote.Text)
		}
		closeButton(t, h)()
		h.tapInOverlay("Stop and close")
	}
	tests := []struct {
		name  string
		demo  bool
		plan  string
		close func(t *testing.T, h *harness)
	}{
		{"Ctrl+Q from a field", false, results.PlanTune, func(t *testing.T, h *harness) {
			e := h.u.bench.tune.roundsEntry
			h.win.Canvas().Focus(e)
			e.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault})
		}},
		{"the window's close button", false, results.PlanRate, func(t *testing.T, h *harness) { closeButton(t, h)() }},
		{"Stop and close during a run of the form", false, results.PlanKovara, func(t *testing.T, h *harness) {
			b := h.u.bench
			if b.runButton.Disabled() {
				t.Fatalf("Run is off: %q", b.planNote.Text)
			}
			test.Tap(b.runButton)
			stopAndClose(t, h)
		}},
		{"Stop and close during the demo's run", true, results.PlanContext, stopAndClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h1 := newHarnessAt(t, dir, func(o *Options) { o.Demo = tc.demo })
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
			var want map[string]map[string]string
			h1.locked(func() {
				b.modelSelect.SetSelected("q8")
				want = fillEveryForm(t, b, manifest, prompts, rows)
				b.planSelect.SetSelected(plans.ByID(tc.plan).Title)
				tc.close(t, h1)
			})
			h1.waitFor("the window to close", 60*time.Second, func() bool { return h1.u.closed })
			if data, err := os.ReadFile(filepath.Join(dir, "config", "form.json")); err != nil {
				t.Errorf("nothing kept: %v", err)
			} else if strings.Contains(string(data), "sk-lab-secret") {
				t.Errorf("form.json holds the API key:\n%s", data)
			}
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
				if got := b2.kind().ID; got != tc.plan {
					t.Errorf("plan %q, want %q", got, tc.plan)
				}
				if got := tuneRows(b2.tune); !slices.Equal(got, rows) {
					t.Errorf("the settings comparison's rows\n%+v\nwant\n%+v", got, rows)
				}
				got := formFields(b2)
				for _, k := range plans.All {
					for key, v := range want[k.ID] {
						if got[k.ID][key] != v {
							t.Errorf("%s: %s is %q, want %q", k.ID, key, got[k.ID][key], v)
						}
					}
				}
			})
			quiet(h2)
		})
	}
}
