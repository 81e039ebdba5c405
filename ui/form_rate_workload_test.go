package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// promptsFile is a small JSONL prompts file in a test's folder.
func promptsFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "my prompts.jsonl")
	if err := os.WriteFile(path, []byte(`{"prompt": "why is the sky blue?"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// rateFormShown is a fresh rate form, chosen on the screen with the
// simulator, so the note under the plan and Run follow it.
func rateFormShown(b *BenchmarkScreen) *rateForm {
	f := newRateForm(b)
	b.forms[results.PlanRate] = f
	b.selectEndpoint(SimulatorName)
	b.planSelect.SetSelected(plans.ByID(results.PlanRate).Title)
	b.onPlan()
	return f
}

// TestRateFormReadsYourOwnLoad: what "Your own load" holds is the plan's
// Workload, the summary says it in the result's words, the longest
// prompt (the system prompt and a conversation's history) is what the
// context is held to, and malformed lines can be skipped only with a
// file.
func TestRateFormReadsYourOwnLoad(t *testing.T) {
	h := newHarness(t)
	file := promptsFile(t)
	d := setup.DefaultRatePlan()
	in, out := d.InputTokens, d.OutputTokens
	lengths := fmt.Sprintf("%d input and %d output tokens", in, out)
	tests := []struct {
		name            string
		file            string
		skip            bool
		prefix, groups  string
		turns           string
		want            setup.Workload
		wantInput       int      // the longest prompt held to the context (0: the file's own)
		wantSummary     []string // in the summary
		wantSkipEnabled bool
	}{
		{name: "empty: the synthetic prompt", want: setup.Workload{}, wantInput: in, wantSummary: []string{lengths}},
		{name: "zero is none", prefix: "0", turns: "1", want: setup.Workload{Turns: 1}, wantInput: in, wantSummary: []string{lengths}},
		{name: "a shared prefix in groups, turns", prefix: "2000", groups: "2", turns: "3",
			want: setup.Workload{SharedPrefix: 2000, PrefixGroups: 2, Turns: 3}, wantInput: in + 2000 + 2*(in+out),
			wantSummary: []string{fmt.Sprintf("a shared 2,000-token system prompt in 2 groups, 3-turn conversations (%d-token questions, %d-token answers)", in, out)}},
		{name: "a prompts file, malformed lines skipped", file: file, skip: true,
			want: setup.Workload{PromptsFile: file, SkipBad: true}, wantSkipEnabled: true,
			wantSummary: []string{fmt.Sprintf("your prompts from my prompts.jsonl, malformed lines skipped (%d-token answers where a prompt sets none)", out)}},
		{name: "skip ticked, then the file emptied", file: " ", skip: true, want: setup.Workload{}, wantInput: in},
	}
	for _, tt := range tests {
		h.locked(func() {
			f := rateFormShown(h.u.bench)
			if !f.skipBadCheck.Disabled() {
				t.Errorf("%s: malformed lines can be skipped without a file", tt.name)
			}
			test.Type(f.promptsEntry, tt.file)
			if tt.skip {
				f.skipBadCheck.SetChecked(true)
			}
			test.Type(f.prefixEntry, tt.prefix)
			test.Type(f.groupsEntry, tt.groups)
			test.Type(f.turnsEntry, tt.turns)
			if got := !f.skipBadCheck.Disabled(); got != tt.wantSkipEnabled {
				t.Errorf("%s: skip malformed lines enabled %v, want %v", tt.name, got, tt.wantSkipEnabled)
			}
			p, err := f.plan()
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if p.Workload != tt.want {
				t.Errorf("%s: workload %+v, want %+v", tt.name, p.Workload, tt.want)
			}
			if input, _, _ := f.check(); input != tt.wantInput {
				t.Errorf("%s: the context is held to %d-token prompts, want %d", tt.name, input, tt.wantInput)
			}
			if h.u.bench.runButton.Disabled() {
				t.Errorf("%s: Run is off: %q", tt.name, h.u.bench.planNote.Text)
			}
			for _, want := range tt.wantSummary {
				if got := h.u.bench.planNote.Text; !strings.Contains(got, want) {
					t.Errorf("%s: the summary %q does not say %q", tt.name, got, want)
				}
			}
		})
	}
}

// TestRateFormRefusesAWrongLoad: a load that cannot run (Workload.
// Validate, a field that does not read, a file that is not there) is
// said under the plan like any wrong field, and Run is off.
func TestRateFormRefusesAWrongLoad(t *testing.T) {
	h := newHarness(t)
	file := promptsFile(t)
	tests := []struct {
		name  string
		set   func(f *rateForm)
		wants []string // in the error, lowercased
	}{
		{"a prompts file with turns", func(f *rateForm) {
			f.promptsEntry.SetText(file)
			f.turnsEntry.SetText("4")
		}, []string{"a prompts file holds whole requests: it cannot be given with a shared prefix or turns"}},
		{"a prompts file with a shared prefix", func(f *rateForm) {
			f.promptsEntry.SetText(file)
			f.prefixEntry.SetText("500")
		}, []string{"a prompts file holds whole requests"}},
		{"groups without a shared prefix", func(f *rateForm) { f.groupsEntry.SetText("3") }, []string{"prefix groups need a shared prefix"}},
		{"too many turns", func(f *rateForm) { f.turnsEntry.SetText("500") }, []string{"500 turns is not allowed"}},
		{"turns in words", func(f *rateForm) { f.turnsEntry.SetText("many") }, []string{`turns per conversation: "many" is not a whole number`}},
		{"a negative prefix", func(f *rateForm) { f.prefixEntry.SetText("-1") }, []string{"shared prefix must be at least 0"}},
		{"no such file", func(f *rateForm) { f.promptsEntry.SetText(filepath.Join(filepath.Dir(file), "gone.jsonl")) }, []string{"gone.jsonl does not exist"}},
		{"a folder", func(f *rateForm) { f.promptsEntry.SetText(filepath.Dir(file)) }, []string{"is a folder"}},
	}
	for _, tt := range tests {
		h.locked(func() {
			b := h.u.bench
			f := rateFormShown(b)
			tt.set(f)
			_, _, err := f.check()
			refusedOnScreen(t, b, tt.name, err, tt.wants)
		})
	}
}

// TestRateFormOwnLoadFitsAndBrowses: "Your own load" is folded away, so
// the rate form with the advanced settings open still scrolls within a
// 1024×640 window with Run in view; Browse… opens a file dialog.
func TestRateFormOwnLoadFitsAndBrowses(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		b := h.u.bench
		f := rateFormShown(b)
		if f.ownLoad.Items[0].Open {
			t.Error("Your own load is open on a fresh form")
		}
		h.win.Resize(fyne.NewSize(1024, 640))
		f.ownLoad.Open(0)
		assertFits(t, "the Benchmark form with Your own load open", b.setup)
		test.Tap(f.browseButton)
		top := h.win.Canvas().Overlays().Top()
		if top == nil {
			t.Fatal("Browse… opened nothing")
		}
		if _, ok := top.(*widget.PopUp); !ok && !strings.Contains(test.RenderObjectToMarkup(top), "Open") {
			t.Errorf("Browse… opened %s", test.RenderObjectToMarkup(top))
		}
	})
}

// TestRateFormRemembersYourOwnLoad: the app started again shows "Your
// own load" as it was left, unfolded, and reads the same workload.
func TestRateFormRemembersYourOwnLoad(t *testing.T) {
	dir := t.TempDir()
	file := promptsFile(t)
	want := setup.Workload{PromptsFile: file, SkipBad: true}
	h1 := newHarnessAt(t, dir)
	h1.locked(func() {
		b := h1.u.bench
		b.selectEndpoint(SimulatorName)
		b.planSelect.SetSelected(plans.ByID(results.PlanRate).Title)
		f := b.rateFormOf()
		f.promptsEntry.SetText(file)
		f.skipBadCheck.SetChecked(true)
	})
	path := filepath.Join(dir, "config", "form.json")
	h1.waitFor("the rate form's load on disk", 20*time.Second, func() bool {
		data, _ := os.ReadFile(path)
		return strings.Contains(string(data), `"skip_bad": "yes"`)
	})
	quiet(h1)

	h2 := newHarnessAt(t, dir)
	h2.locked(func() {
		f := h2.u.bench.rateFormOf()
		p, err := f.plan()
		if err != nil || p.Workload != want {
			t.Errorf("after a restart the load reads %+v %v, want %+v", p.Workload, err, want)
		}
		if !f.ownLoad.Items[0].Open {
			t.Error("a load kept from the last start is folded away")
		}
		// Changed, and the window closed at once: written on close.
		f.promptsEntry.SetText("")
		f.prefixEntry.SetText("1500")
		f.groupsEntry.SetText("4")
		f.turnsEntry.SetText("6")
		h2.u.closeWindow()
	})
	quiet(h2)

	h3 := newHarnessAt(t, dir)
	h3.locked(func() {
		want := setup.Workload{SharedPrefix: 1500, PrefixGroups: 4, Turns: 6}
		if p, err := h3.u.bench.rateFormOf().plan(); err != nil || p.Workload != want {
			t.Errorf("after close the load reads %+v %v, want %+v", p.Workload, err, want)
		}
	})
}
