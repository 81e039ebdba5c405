package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// TestStateLabel: a result's state says what ran, then that it was made
// against the simulator, where it is kept and why it could not be saved,
// each only when it applies, in that order.
func TestStateLabel(t *testing.T) {
	test.NewTempApp(t)
	saveErr := errors.New("the disk is full")
	tests := []struct {
		name      string
		lead      []string
		simulated bool
		kept      string
		saveErr   error
		want      string
	}{
		{"what ran alone", []string{"Two levels.", "Knee at 4."}, false, "", nil, "Two levels. Knee at 4."},
		{"simulated and kept", []string{"Two levels."}, true, "Kept here.", nil, "Two levels. " + results.SimulatedNote + " Kept here."},
		{"not saved", []string{"Two levels."}, false, "Kept here.", saveErr, "Two levels. Kept here. It could not be saved in the history: the disk is full"},
		{"everything", nil, true, "Kept here.", saveErr, results.SimulatedNote + " Kept here. " + notSavedNote(saveErr)},
	}
	for _, tc := range tests {
		l := stateLabel(tc.lead, tc.simulated, tc.kept, tc.saveErr)
		if l.Text != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, l.Text, tc.want)
		}
	}
}

// TestPlanFormsSayEveryWrongField: the three-stage and
// speculative-decoding forms, like the capacity and context ones, say
// every field that does not read at once, and run nothing.
func TestPlanFormsSayEveryWrongField(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint(SimulatorName)
		b.planSelect.SetSelected(planSpecDec)
		b.specDec.levelsEntry.SetText("1,x")
		b.specDec.outputEntry.SetText("0")
		b.specDec.timeoutEntry.SetText("soon")
		b.revalidate()
		for _, want := range []string{"concurrency levels", "output tokens", "timeout"} {
			if !strings.Contains(strings.ToLower(b.planNote.Text), want) {
				t.Errorf("speculative decoding: %q does not say %s", b.planNote.Text, want)
			}
		}
		if !b.runButton.Disabled() {
			t.Error("speculative decoding: Run is on with wrong fields")
		}
		if _, err := b.specDec.run("m", true); err == nil {
			t.Error("speculative decoding: a run from wrong fields")
		}
		b.planSelect.SetSelected(planStages)
		b.stages.usersEntry.SetText("none")
		b.stages.timeoutEntry.SetText("soon")
		b.revalidate()
		for _, want := range []string{"users", "timeout"} {
			if !strings.Contains(strings.ToLower(b.planNote.Text), want) {
				t.Errorf("three stages: %q does not say %s", b.planNote.Text, want)
			}
		}
		if in, out, err := b.stages.check(); err == nil || in != 0 || out != 0 {
			t.Errorf("three stages: check %d, %d, %v; want no lengths and the error", in, out, err)
		}
		b.stages.usersEntry.SetText("2")
		b.stages.timeoutEntry.SetText("900")
		if in, out, err := b.stages.check(); err != nil || in != 0 || out != 0 {
			t.Errorf("three stages, fields fixed: check %d, %d, %v", in, out, err)
		}
		if _, err := b.stages.run("m", true); err != nil {
			t.Errorf("three stages, fields fixed: %v", err)
		}
	})
}

// TestFormRunAimsThePlan: a form's run sends the plan it read, aimed at
// the model chosen and the simulator when it is the one; a form that
// does not read runs nothing.
func TestFormRunAimsThePlan(t *testing.T) {
	h := newHarness(t)
	var sent []setup.StagesPlan
	run := func(_ context.Context, p setup.StagesPlan, _ setup.Endpoint, _ engine.Observer) (*results.StagesResult, error) {
		sent = append(sent, p)
		return nil, errors.New("refused")
	}
	doc := func(r *results.StagesResult) plans.Doc { return plans.NewStages(r) }
	aim := func(p *setup.StagesPlan) { p.Model, p.Simulated = "qwen3-8b", true }
	read := func() (setup.StagesPlan, error) { return setup.StagesPlan{Users: 3}, nil }
	pr, err := formRun(h.u.bench, "qwen3-8b", read, aim, run, doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr(context.Background(), setup.Endpoint{}, engine.Observer{})
	if len(sent) != 1 || sent[0].Model != "qwen3-8b" || !sent[0].Simulated || sent[0].Users != 3 {
		t.Errorf("sent %+v, want the plan read, aimed at qwen3-8b on the simulator", sent)
	}
	bad := func() (setup.StagesPlan, error) { return setup.StagesPlan{}, errors.New("users: not a number") }
	if _, err := formRun(h.u.bench, "qwen3-8b", bad, aim, run, doc, nil); err == nil || len(sent) != 1 {
		t.Errorf("a form that does not read: %v, %d runs", err, len(sent))
	}
}

// TestEveryPlanHasAFormAndAView: a registered plan the Benchmark place
// has no form for, or History no result view for, would be offered and
// then fail; each form is shown when its plan is chosen.
func TestEveryPlanHasAFormAndAView(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.locked(func() {
		for _, k := range plans.All {
			if planScreens[k.ID].form == nil || b.forms[k.ID] == nil {
				t.Errorf("%s: no form", k.ID)
				continue
			}
			if planScreens[k.ID].view == nil {
				t.Errorf("%s: no result view", k.ID)
			}
			b.planSelect.SetSelected(k.Title)
			if b.kind() != k || b.formBox.Objects[0] != b.forms[k.ID].content() {
				t.Errorf("%s chosen: its form is not the one shown", k.ID)
			}
		}
		if len(planScreens) != len(plans.All) {
			t.Errorf("%d plans on the screens for %d plans", len(planScreens), len(plans.All))
		}
	})
}

// TestKeptAsTheCLIKeeps: a plan's run that ended on an error is shown and
// saved only when it measured something (engine.Kept, the CLI's rule);
// one that measured nothing says the error under the plan and saves
// nothing. Stopped, it is kept as it is.
func TestKeptAsTheCLIKeeps(t *testing.T) {
	h := newHarness(t)
	refused := errors.New("the endpoint refused the request")
	depth := results.ContextDepth{Depth: 0, Conversations: 1, OK: 1}
	for _, tc := range []struct {
		name   string
		depths []results.ContextDepth
		err    error
		kept   bool
	}{
		{"an error, nothing measured", nil, refused, false},
		{"an error, a depth measured", []results.ContextDepth{depth}, refused, true},
		{"stopped, nothing measured", nil, engine.ErrInterrupted, true},
	} {
		run := func(context.Context, setup.ContextPlan, setup.Endpoint, engine.Observer) (*results.ContextResult, error) {
			return &results.ContextResult{Depths: tc.depths}, tc.err
		}
		doc := func(r *results.ContextResult) plans.Doc { return plans.NewContext(r) }
		before, _ := h.u.lib.List()
		show := planRunOf(h.u.bench, setup.ContextPlan{}, "m", run, doc, nil)(context.Background(), setup.Endpoint{}, engine.Observer{})
		var shown bool
		var note string
		h.locked(func() {
			h.u.bench.shownResult, h.u.bench.failNote = false, ""
			show()
			shown, note = h.u.bench.shownResult, h.u.bench.failNote
		})
		after, _ := h.u.lib.List()
		if saved := len(after) > len(before); shown != tc.kept || saved != tc.kept {
			t.Errorf("%s: shown %v, saved %v; want both %v", tc.name, shown, saved, tc.kept)
		}
		if !tc.kept && !strings.Contains(note, refused.Error()) {
			t.Errorf("%s: the plan's note %q does not say the error", tc.name, note)
		}
	}
}
