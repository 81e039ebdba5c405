package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// TestTuneFormKeptAcrossRestart: the Compare settings form filled in —
// its rows (name, how, the command or model, the command before its
// turns) and its inner plan (rounds, concurrency, requests, lengths,
// timeouts, the answers check) — is the same form when the app starts
// again over the same folders, and the plan Run would measure is the one
// typed; the endpoint's API key is not in form.json.
func TestTuneFormKeptAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	rows := []storage.TuneFormRow{
		{Name: "np2", How: setup.ByCommand, What: "OLLAMA_NUM_PARALLEL=1 ollama serve"},
		{Name: "q8", How: setup.ByModel, What: "qwen3:8b-q8_0", Before: "sudo nvidia-smi -pl 250"},
		{Name: "by hand", How: setup.ByHand, What: "restart Ollama with OLLAMA_NUM_PARALLEL=4"},
	}
	fields := storage.PlanFormState{"rounds": "4", "concurrency": "2,4,16", "requests": "40", "input_tokens": "300", "output_tokens": "70",
		"timeout": "90", "start_timeout": "45", "answers": keptNo, "trace_speed": "2"}

	h1 := newHarnessAt(t, dir)
	h1.locked(func() {
		if err := h1.u.endpoints.Put(storage.SavedEndpoint{Name: "lab box", URL: "http://127.0.0.1:1/v1"}, ""); err != nil {
			t.Fatal(err)
		}
		if err := h1.u.keys.Set("lab box", "sk-lab-secret"); err != nil {
			t.Fatal(err)
		}
		b := h1.u.bench
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		fillTuneForm(t, b.tune, rows, fields)
		if got := fieldsState(b.tune.kept(), nil); !reflect.DeepEqual(got, fields) {
			t.Fatalf("the form reads\n%+v\nwant\n%+v", got, fields)
		}
		h1.u.closeWindow() // written on close
	})
	quiet(h1)
	if data, err := os.ReadFile(filepath.Join(dir, "config", "form.json")); err != nil || strings.Contains(string(data), "sk-lab-secret") {
		t.Errorf("form.json (%v) holds the API key:\n%s", err, data)
	}

	h2 := newHarnessAt(t, dir)
	h2.locked(func() {
		f := h2.u.bench.tune
		if got := tuneRows(f); !reflect.DeepEqual(got, rows) {
			t.Errorf("started again, the rows are\n%+v\nwant\n%+v", got, rows)
		}
		if got := fieldsState(f.kept(), nil); !reflect.DeepEqual(got, fields) {
			t.Errorf("started again, the form reads\n%+v\nwant\n%+v", got, fields)
		}
		// The plan Run would measure is the one typed, not the defaults.
		p, err := f.plan()
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("%d rounds, %s users, %d requests, %d/%d tokens, timeout %v, start-up %v, answers %v",
			p.Rounds, engine.FormatLevels(p.Inner.Concurrency), p.Inner.Requests, p.Inner.InputTokens, p.Inner.OutputTokens, p.Inner.Timeout, p.StartTimeout, !p.NoAnswers)
		if w := "4 rounds, 2,4,16 users, 40 requests, 300/70 tokens, timeout 1m30s, start-up 45s, answers false"; got != w {
			t.Errorf("the plan: %s, want %s", got, w)
		}
	})
}

// fillTuneForm types the rows and fields into the form as a person
// would: its first rows changed and the rest added, the fields typed.
func fillTuneForm(t *testing.T, f *tuneForm, rows []storage.TuneFormRow, fields storage.PlanFormState) {
	t.Helper()
	for i, row := range rows {
		if i >= len(f.rows) {
			f.onAdd(row.Name, row.How, row.What)
		}
		r := f.rows[i]
		r.nameEntry.SetText(row.Name)
		for _, h := range tuneHows {
			if h.how == row.How {
				r.howSelect.SetSelected(h.label)
			}
		}
		r.whatEntry.SetText(row.What)
		r.setBefore(row.Before)
	}
	for _, k := range f.kept() {
		switch w := k.w.(type) {
		case *formEntry:
			w.SetText(fields[k.key])
		case *widget.Check:
			w.SetChecked(fields[k.key] != keptNo)
		}
	}
}

// TestFormRestoresAnOlderAppsFile: form.json as an older app wrote it —
// the settings comparison's fields beside its rows, the rate plan's own
// load in a place of its own — is restored into the forms as a file of
// this app's is; rows too few for a comparison are left aside while the
// fields beside them are restored; and the file written next holds each
// field once, in the forms.
func TestFormRestoresAnOlderAppsFile(t *testing.T) {
	prompts := filepath.Join(t.TempDir(), "chat log.jsonl")
	tests := []struct {
		name     string
		file     string
		rows     []storage.TuneFormRow // nil: the form's own
		tune     storage.PlanFormState // the fields that differ from the form's defaults
		ownLoad  storage.PlanFormState
		unfolded bool
	}{
		{"rows, rounds and the inner plan; the rate plan's own load",
			`{"plan": "tune", "tune": {"rows": [{"name": "a", "how": "command", "what": "llama-server -np 2"}, {"name": "b", "how": "command", "what": "llama-server -np 8"}],
			  "rounds": "3", "requests": "12", "no_answers": true},
			  "rate": {"prompts_file": ` + fmt.Sprintf("%q", prompts) + `, "skip_bad": true, "turns": "5"}}`,
			[]storage.TuneFormRow{{Name: "a", How: setup.ByCommand, What: "llama-server -np 2"}, {Name: "b", How: setup.ByCommand, What: "llama-server -np 8"}},
			storage.PlanFormState{"rounds": "3", "requests": "12", "answers": keptNo},
			storage.PlanFormState{"prompts_file": prompts, "skip_bad": keptYes, "turns": "5"}, true},
		{"too few rows, the fields kept",
			`{"tune": {"rows": [{"name": "a", "how": "command", "what": "llama-server -np 2"}], "requests": "12", "no_answers": true}}`,
			nil, storage.PlanFormState{"requests": "12", "answers": keptNo}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "config"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "config", "form.json"), []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			var defaults map[string]map[string]string
			h0 := newHarness(t)
			h0.locked(func() { defaults = formFields(h0.u.bench) })
			h := newHarnessAt(t, dir)
			h.locked(func() {
				b := h.u.bench
				wantRows := tt.rows
				if wantRows == nil {
					wantRows = tuneRows(h0.u.bench.tune)
				}
				if got := tuneRows(b.tune); !reflect.DeepEqual(got, wantRows) {
					t.Errorf("rows %+v, want %+v", got, wantRows)
				}
				got := formFields(b)
				for plan, fields := range map[string]storage.PlanFormState{results.PlanTune: tt.tune, results.PlanRate: tt.ownLoad} {
					for key, def := range defaults[plan] {
						want := def
						if v, ok := fields[key]; ok {
							want = v
						}
						if got[plan][key] != want {
							t.Errorf("%s: %s is %q, want %q", plan, key, got[plan][key], want)
						}
					}
				}
				if open := b.rateFormOf().ownLoad.Items[0].Open; open != tt.unfolded {
					t.Errorf("Your own load unfolded: %v, want %v", open, tt.unfolded)
				}
				h.u.closeWindow()
			})
			data, err := os.ReadFile(filepath.Join(dir, "config", "form.json"))
			var top struct {
				Rate json.RawMessage            `json:"rate"`
				Tune map[string]json.RawMessage `json:"tune"`
			}
			if err == nil {
				err = json.Unmarshal(data, &top)
			}
			if _, rows := top.Tune["rows"]; err != nil || top.Rate != nil || len(top.Tune) != 1 || !rows {
				t.Errorf("the file written again (%v) keeps an older app's places:\n%s", err, data)
			}
		})
	}
}
