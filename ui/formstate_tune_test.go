package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
// again over the same folders; the endpoint's API key is not in
// form.json.
func TestTuneFormKeptAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	want := storage.TuneFormState{
		Rows: []storage.TuneFormRow{
			{Name: "np2", How: setup.ByCommand, What: "OLLAMA_NUM_PARALLEL=1 ollama serve"},
			{Name: "q8", How: setup.ByModel, What: "qwen3:8b-q8_0", Before: "sudo nvidia-smi -pl 250"},
			{Name: "by hand", How: setup.ByHand, What: "restart Ollama with OLLAMA_NUM_PARALLEL=4"},
		},
		Rounds: "4", Concurrency: "2,4,16", Requests: "40", InputTokens: "300", OutputTokens: "70",
		Timeout: "90", StartTimeout: "45", NoAnswers: true,
	}

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
		fillTuneForm(t, b.tune, want)
		if got := *b.tune.state(); !reflect.DeepEqual(got, want) {
			t.Fatalf("the form reads\n%+v\nwant\n%+v", got, want)
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
		if got := *f.state(); !reflect.DeepEqual(got, want) {
			t.Errorf("started again, the form reads\n%+v\nwant\n%+v", got, want)
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

// fillTuneForm types st into the form as a person would: the rows its
// first rows changed and the rest added, the fields typed.
func fillTuneForm(t *testing.T, f *tuneForm, st storage.TuneFormState) {
	t.Helper()
	for i, row := range st.Rows {
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
	for _, k := range []struct {
		e    *formEntry
		text string
	}{
		{f.roundsEntry, st.Rounds}, {f.concurrencyEntry, st.Concurrency}, {f.requestsEntry, st.Requests},
		{f.lengths.inputEntry, st.InputTokens}, {f.lengths.outputEntry, st.OutputTokens},
		{f.timeoutEntry, st.Timeout}, {f.startEntry, st.StartTimeout},
	} {
		k.e.SetText(k.text)
	}
	f.answersCheck.SetChecked(!st.NoAnswers)
}

// TestTuneFormRestore: a state kept by an older app (rows and rounds
// only) leaves the inner plan at its defaults and the answers check on
// (state reads the box);
// rows too few for a comparison are left aside while the fields beside
// them are restored.
func TestTuneFormRestore(t *testing.T) {
	h := newHarness(t)
	rows := []storage.TuneFormRow{{Name: "a", How: setup.ByCommand, What: "llama-server -np 2"}, {Name: "b", How: setup.ByCommand, What: "llama-server -np 8"}}
	var defaults storage.TuneFormState
	h.locked(func() { defaults = *newTuneForm(h.u.bench).state() })
	withRows := func(st storage.TuneFormState, rows []storage.TuneFormRow) storage.TuneFormState {
		st.Rows = rows
		return st
	}
	tests := []struct {
		name string
		kept storage.TuneFormState
		want storage.TuneFormState
	}{
		{"an older app's: rows and rounds", storage.TuneFormState{Rows: rows, Rounds: "3"},
			func() storage.TuneFormState { st := withRows(defaults, rows); st.Rounds = "3"; return st }()},
		{"too few rows, the fields kept", storage.TuneFormState{Rows: rows[:1], Requests: "12", NoAnswers: true},
			func() storage.TuneFormState { st := defaults; st.Requests, st.NoAnswers = "12", true; return st }()},
	}
	for _, tt := range tests {
		h.locked(func() {
			f := newTuneForm(h.u.bench)
			f.restore(tt.kept)
			if got := *f.state(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s: the form reads\n%+v\nwant\n%+v", tt.name, got, tt.want)
			}
		})
	}
}
