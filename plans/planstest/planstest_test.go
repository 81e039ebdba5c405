package planstest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kovara/desktop/plans"
)

// TestCases: every registered plan has a clean and a failed document, each
// a valid document of its kind (written and read back as the library
// does), and the plan's own rule judges them as the case says: a clean
// one complete with no problem, a failed one failed, among its problems
// and needing attention, with History's summary saying the same.
func TestCases(t *testing.T) {
	t.Parallel()
	cases := Cases()
	if got, want := len(cases), 2*len(plans.All); got != want {
		t.Fatalf("%d cases for %d plans", got, len(plans.All))
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if got, want := c.Doc.Kind(), plans.All[i/2]; got != want {
				t.Fatalf("a document of %q, want %q", got.ID, want.ID)
			}
			data, err := c.Doc.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := plans.Decode(data)
			if err != nil {
				t.Fatalf("the document does not read back: %v", err)
			}
			if back.Kind() != c.Doc.Kind() {
				t.Fatalf("it reads back as %q", back.Kind().ID)
			}
			for name, d := range map[string]plans.Doc{"made": c.Doc, "read back": back} {
				ps := d.Problems()
				if got := d.Failed(); got != c.Failed {
					t.Errorf("%s: Failed %v, want %v (problems %q)", name, got, c.Failed, ps)
				}
				if got := plans.NeedsAttention(d); got != c.Failed {
					t.Errorf("%s: needs attention %v, want %v", name, got, c.Failed)
				}
				if c.Failed != (len(ps) > 0) {
					t.Errorf("%s: problems %q", name, ps)
				}
				if c.Failed == (plans.State(d) == "Complete.") && d.Kind() != plans.KovaraMethod {
					t.Errorf("%s: state %q", name, plans.State(d))
				}
				s := d.Summary()
				if s.Failed != c.Failed || !slices.Equal(s.Problems, ps) || s.Plan != d.Kind().ID || !s.Complete {
					t.Errorf("%s: History's summary %+v does not say what the document does", name, s)
				}
			}
		})
	}
}

// TestCaptures: the captured documents read, and are the searches the
// tests that take them describe.
func TestCaptures(t *testing.T) {
	t.Parallel()
	if a := LlamaCapacity(t).Answer; a.Capacity != 8 || a.MissedAt != 9 {
		t.Errorf("llama-server's capacity: %+v, want 8 users, 9 missing", a)
	}
	if c := LlamaContext(t); len(c.Depths) < 2 {
		t.Errorf("llama-server's context plan: %d depths", len(c.Depths))
	}
	if a := DisturbedCapacity().Answer; !a.Uncertain || a.Capacity != 2 || a.RangeHigh != 3 {
		t.Errorf("the disturbed search: %+v, want uncertain between 2 and 3", a)
	}
}

// TestHeaders: every plan's document reads its model, time, completeness
// and simulator mark from its result's header and local part, the
// three-stage document's own fields among them, as made and as read back.
func TestHeaders(t *testing.T) {
	t.Parallel()
	for _, c := range Cases() {
		if c.Doc.Kind() == plans.KovaraMethod {
			continue // a results file, with its own fields
		}
		t.Run(c.Name, func(t *testing.T) {
			d := c.Doc
			if d.Model() != "qwen3-8b" || d.CreatedAt() != created || !d.Complete() || d.Simulated() {
				t.Errorf("model %q, created %q, complete %v, simulated %v", d.Model(), d.CreatedAt(), d.Complete(), d.Simulated())
			}
			data, err := d.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			m["complete"], m["model"], m["created_at"] = false, "other", "2026-12-01T08:00:00Z"
			m["local"].(map[string]any)["simulated"] = true
			data, err = json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			back, err := plans.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if back.Model() != "other" || back.CreatedAt() != "2026-12-01T08:00:00Z" || back.Complete() || !back.Simulated() {
				t.Errorf("read back: model %q, created %q, complete %v, simulated %v", back.Model(), back.CreatedAt(), back.Complete(), back.Simulated())
			}
		})
	}
}

// TestFilesWrittenBefore: the plans' documents that earlier versions
// wrote (captured from real servers) still read, as their plan, and
// write again to what reads back the same.
func TestFilesWrittenBefore(t *testing.T) {
	t.Parallel()
	queueing := filepath.Join(captures(), "..", "..", "results", "testdata", "queueing")
	files := []struct {
		path, plan string
	}{
		{filepath.Join(captures(), "capacity.json"), "capacity"},
		{filepath.Join(captures(), "context.json"), "context"},
		{filepath.Join(queueing, "ollama-default-capacity.json"), "capacity"},
		{filepath.Join(queueing, "ollama-par4-capacity.json"), "capacity"},
	}
	for _, f := range files {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			data, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			d, err := plans.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind().ID != f.plan || d.Model() == "" || d.CreatedAt() == "" || !d.Complete() {
				t.Fatalf("read as %q: model %q, created %q, complete %v", d.Kind().ID, d.Model(), d.CreatedAt(), d.Complete())
			}
			again, err := d.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := plans.Decode(again)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := back.Marshal(); err != nil || !bytes.Equal(b, again) {
				t.Errorf("written again, it does not read back the same (%v)", err)
			}
		})
	}
}

// TestNotesBesideProblems: a document's notes are what its view says
// beside the table, never a problem said again and never twice.
func TestNotesBesideProblems(t *testing.T) {
	t.Parallel()
	cases := append(Cases(),
		Case{Name: "llama-server stages", Doc: plans.NewStages(LlamaStages(t))},
		Case{Name: "llama-server specdec", Doc: plans.NewSpecDec(LlamaSpecDec(t))})
	withNotes := 0
	for _, c := range cases {
		seen := map[string]bool{}
		for _, p := range c.Doc.Problems() {
			seen[p] = true
		}
		for _, n := range c.Doc.Notes() {
			if seen[n] {
				t.Errorf("%s: %q is a problem or a repeat, among the notes", c.Name, n)
			}
			seen[n] = true
		}
		if len(c.Doc.Notes()) > 0 {
			withNotes++
		}
	}
	if withNotes < 2 {
		t.Errorf("%d documents have notes, want at least the two llama-server captures' (the stages' context warning, the missing draft counters)", withNotes)
	}
}
