package storage

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kovara/desktop/plans/planstest"
)

// TestHistoryMarkEveryPlan: History marks a run of every registered plan
// by the plans' one rule, the one the CLI's exit code and the app's
// result state follow (their tests range over the same cases): kept and
// listed, and listed again from a rebuilt index, a failed result is failed
// and its state counts its problems; a clean one says "complete".
func TestHistoryMarkEveryPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	cases := planstest.Cases()
	ids := map[string]string{}
	for _, c := range cases {
		id, err := l.SaveDoc("", c.Doc)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		ids[id] = c.Name
	}
	check := func(how string, l *Library) {
		list, err := l.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != len(cases) {
			t.Fatalf("%s: %d runs listed, want %d", how, len(list), len(cases))
		}
		byName := map[string]Summary{}
		for _, s := range list {
			byName[ids[s.ID]] = s
		}
		for _, c := range cases {
			s, want := byName[c.Name], "complete"
			if c.Failed {
				want = "failed, " + map[bool]string{true: "1 problem", false: ""}[len(c.Doc.Problems()) == 1]
			}
			if s.Failed != c.Failed || s.Plan != c.Doc.Kind().ID || !strings.HasPrefix(s.State(), want) || c.Failed && len(s.Problems) == 0 {
				t.Errorf("%s, %s: History lists %s run, failed %v, %q; want failed %v, %q", how, c.Name, s.Plan, s.Failed, s.State(), c.Failed, want)
			}
			if !reflect.DeepEqual(s.Summary, c.Doc.Summary()) {
				t.Errorf("%s, %s: History lists %+v, the document says %+v", how, c.Name, s.Summary, c.Doc.Summary())
			}
		}
	}
	check("kept", l)
	if err := os.Remove(filepath.Join(dir, indexFile)); err != nil {
		t.Fatal(err)
	}
	l2, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	check("rebuilt", l2)
}
