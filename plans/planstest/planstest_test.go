package planstest

import (
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
