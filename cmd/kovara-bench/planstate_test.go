package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// TestExitCodeEveryPlan: the CLI ends a plan's run by the plans' one
// rule, the one the app's result state and History's mark follow (their
// tests range over the same cases): a failed result exits 1 after saying
// its state and every problem; a clean one exits 0 and says none.
func TestExitCodeEveryPlan(t *testing.T) {
	dir := t.TempDir()
	for i, c := range planstest.Cases() {
		var stdout, stderr bytes.Buffer
		o := planOutput{doc: c.Doc, measured: true, print: func(w io.Writer) { printProblems(w, c.Doc) }}
		f := runFlags{output: filepath.Join(dir, fmt.Sprintf("%d.json", i))}
		code := finishPlan(o, nil, f, &stdout, &stderr)
		if want := map[bool]int{false: exitOK, true: exitFailed}[c.Failed]; code != want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.Name, code, want, stderr.String())
		}
		out := stdout.String()
		if c.Failed != strings.Contains(out, plans.State(c.Doc)) {
			t.Errorf("%s: says %q", c.Name, out)
		}
		for _, p := range c.Doc.Problems() {
			if !strings.Contains(out, "problem: "+p) {
				t.Errorf("%s: the problem %q is not said: %q", c.Name, p, out)
			}
		}
	}
}
