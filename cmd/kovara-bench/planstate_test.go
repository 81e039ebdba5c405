package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// printers are each plan's own printing of its result, as its run's
// finish prints it.
var printers = map[string]func(io.Writer, plans.Doc){
	results.PlanKovara:   func(w io.Writer, d plans.Doc) { printSummary(w, d.(plans.Kovara).File) },
	results.PlanStages:   func(w io.Writer, d plans.Doc) { printStages(w, d.(plans.Stages).Result) },
	results.PlanSpecDec:  func(w io.Writer, d plans.Doc) { printSpecDec(w, d.(plans.SpecDec).Result) },
	results.PlanCapacity: func(w io.Writer, d plans.Doc) { printCapacity(w, d.(plans.Capacity).Result) },
	results.PlanContext:  func(w io.Writer, d plans.Doc) { printContext(w, d.(plans.Context).Result) },
	results.PlanRate:     func(w io.Writer, d plans.Doc) { printRate(w, d.(plans.Rate).Result) },
	results.PlanTune:     func(w io.Writer, d plans.Doc) { printTune(w, d.(plans.Tune).Result) },
	results.PlanAnswers:  func(w io.Writer, d plans.Doc) { printAnswers(w, d.(plans.Answers).Result) },
}

// TestExitCodeEveryPlan: the CLI ends a plan's run by the plans' one
// rule, the one the app's result state and History's mark follow (their
// tests range over the same cases): a failed result exits 1 after its
// printing says its state and every problem; a clean one exits 0 and says
// none. A plan with no printer here fails the test.
func TestExitCodeEveryPlan(t *testing.T) {
	dir := t.TempDir()
	for i, c := range planstest.Cases() {
		print, ok := printers[c.Doc.Kind().ID]
		if !ok {
			t.Errorf("%s: no printer of this plan here", c.Name)
			continue
		}
		var stdout, stderr bytes.Buffer
		o := planOutput{doc: c.Doc, print: func(w io.Writer) { print(w, c.Doc) }}
		f := runFlags{output: filepath.Join(dir, fmt.Sprintf("%d.json", i))}
		code := finishPlan(o, nil, f, &stdout, &stderr)
		if want := map[bool]int{false: exitOK, true: exitFailed}[c.Failed]; code != want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.Name, code, want, stderr.String())
		}
		out := stdout.String()
		if c.Failed && !strings.Contains(out, plans.State(c.Doc)) || !c.Failed && strings.Contains(out, "problem:") {
			t.Errorf("%s: says %q", c.Name, out)
		}
		for _, p := range c.Doc.Problems() {
			if !strings.Contains(out, "problem: "+p) {
				t.Errorf("%s: the problem %q is not said: %q", c.Name, p, out)
			}
		}
	}
}
