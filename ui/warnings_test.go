package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestWarningsOnEverySurface: for each kind of warning, made by a
// simulator personality or fault (or, for what a simulator run cannot
// produce on demand, by editing its file), the result view, History,
// Compare and Export all show every warning results.Warnings computes, in
// its words; a problem sits above the table and changes the state, and
// Export will not save it for publishing until the user says so.
func TestWarningsOnEverySurface(t *testing.T) {
	h := newHarness(t)
	fast := sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}
	with := func(edit func(*sim.Config)) sim.Config {
		c := fast
		edit(&c)
		return c
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cases := []struct {
		name   string
		cfg    sim.Config
		gpu    string
		mutate func(*results.File)
		kind   string
		again  bool // the same prompts twice (a fixed seed); the second run is kept
	}{
		{name: "a fifth of the requests answer 503", kind: results.WarnFailed,
			cfg: with(func(c *sim.Config) {
				c.Faults = func(n int64) sim.Fault {
					if n%5 == 4 {
						return sim.Fault503
					}
					return sim.FaultNone
				}
			})},
		{name: "prompts from the server's cache", kind: results.WarnPromptCache, again: true, cfg: with(func(c *sim.Config) { c.Personality = sim.LlamaCpp })},
		{name: "the server refuses ignore_eos", kind: results.WarnIgnoreEOS, cfg: with(func(c *sim.Config) { c.Personality = sim.Strict })},
		{name: "no usage", kind: results.WarnChunkCounts, cfg: with(func(c *sim.Config) { c.NoUsage = true })},
		{name: "too few requests for a p95", kind: results.WarnTails, cfg: fast},
		{name: "GPU telemetry lost", kind: results.WarnTelemetry, cfg: fast, gpu: down.URL + "/metrics"},
		{name: "calibration did not converge", kind: results.WarnCalibration, cfg: fast, mutate: func(f *results.File) {
			f.Local.Calibration.Converged = false
			pt := 41
			f.Local.Calibration.PromptTokens = &pt
		}},
		{name: "stopped during a level", kind: results.WarnPartial, cfg: fast, mutate: func(f *results.File) {
			last := f.Runs[len(f.Runs)-1]
			f.Runs, f.Local.PartialRun, f.Complete = f.Runs[:len(f.Runs)-1], &last, false
		}},
	}
	clean := h.seedRun(startTestSim(t, fast), []int{1, 2}, 4, nil)
	for _, tc := range cases {
		p := setup.DefaultPlan()
		p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 32, 4, []int{1, 2}, 10, 0
		ep := setup.Endpoint{URL: startTestSim(t, tc.cfg), Name: "box", GPU: tc.gpu}
		if tc.again {
			p.Seed, p.FixedSeed = 7, true
			if _, err := engine.Run(context.Background(), p, ep, engine.Observer{}); err != nil {
				t.Fatal(err)
			}
		}
		f, err := engine.Run(context.Background(), p, ep, engine.Observer{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.mutate != nil {
			tc.mutate(f)
		}
		id, err := h.u.lib.Save("", f)
		if err != nil {
			t.Fatal(err)
		}
		ws := results.Warnings(f)
		found := false
		for _, w := range ws {
			found = found || w.Kind == tc.kind
		}
		if !found {
			t.Errorf("%s: no %s warning in %+v", tc.name, tc.kind, ws)
			continue
		}
		problems, _ := results.Split(ws)

		h.locked(func() {
			// The result: problems above the table, the state says so.
			v := newResultView(h.u, f, id, nil)
			for _, w := range ws {
				label := v.warnings
				if w.Severity == results.SeverityProblem {
					label = v.problems
				}
				if label == nil || !strings.Contains(label.Text, w.Text) {
					t.Errorf("%s: the result view does not show the %s %q", tc.name, w.Severity, w.Text)
				}
			}
			if got := strings.HasPrefix(v.state.Text, "Complete."); got == (len(problems) > 0) {
				t.Errorf("%s: state %q with %d problems", tc.name, v.state.Text, len(problems))
			}

			// History: the row counts the problems.
			hs := h.u.historyScreen
			hs.reload()
			row := hs.shown[h.rowOf(id)]
			mark := fmt.Sprintf("%d %s", len(problems), results.Plural(len(problems), "problem", "problems"))
			if got := historyCell(row, 8, nil); strings.Contains(got, mark) != (len(problems) > 0) {
				t.Errorf("%s: History state %q, %d problems", tc.name, got, len(problems))
			}

			// Compare: each run's warnings, named by run.
			hs.selected = map[string]bool{}
			hs.table.Select(widget.TableCellID{Row: h.rowOf(clean), Col: 0})
			hs.table.Select(widget.TableCellID{Row: h.rowOf(id), Col: 0})
			test.Tap(hs.compareButton)
			details := h.u.compareScreen.details.Text
			for _, w := range ws {
				if !strings.Contains(details, ": "+w.Text) {
					t.Errorf("%s: Compare does not name %q:\n%s", tc.name, w.Text, details)
				}
			}

			// Export: every warning above the payload; a problem holds the
			// save back until it is accepted.
			ex, err := newExportView(h.u, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if ex.warnings == nil || !strings.Contains(ex.warnings.Text, w.Text) {
					t.Errorf("%s: Export does not show %q", tc.name, w.Text)
				}
			}
			if ex.Publishable && len(problems) > 0 {
				if !ex.saveButton.Disabled() || ex.accept == nil {
					t.Errorf("%s: Export saves a run with problems without asking", tc.name)
				} else {
					test.Tap(ex.accept)
					if ex.saveButton.Disabled() {
						t.Errorf("%s: accepting the problems does not allow the save", tc.name)
					}
				}
			}
			if ex.Publishable && len(problems) == 0 && ex.saveButton.Disabled() {
				t.Errorf("%s: Export holds back a run without problems", tc.name)
			}
		})
	}
}

// TestStagesStateWithWarnings: a three-stage result with warnings never
// says "Complete." above them.
func TestStagesStateWithWarnings(t *testing.T) {
	h := newHarness(t)
	r := &results.StagesResult{Complete: true, Model: "m", TokenSource: "usage"}
	h.locked(func() {
		if got := newStagesView(h.u, r, "", nil, func() {}).state.Text; !strings.HasPrefix(got, "Complete.") {
			t.Errorf("clean: state %q", got)
		}
		r.Warnings = []string{"single-user code prompt failed: timeout"}
		if got, want := newStagesView(h.u, r, "", nil, func() {}).state.Text, "Finished, with 1 warning below: read it before trusting the figures."; !strings.HasPrefix(got, want) {
			t.Errorf("state %q, want it to start %q", got, want)
		}
	})
}
