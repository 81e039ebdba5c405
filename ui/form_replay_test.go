package ui

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// recordedTrace writes a trace as Record my traffic does into the data
// folder's traces folder: three requests recorded between 09:30 and
// 09:32 one morning.
func recordedTrace(t *testing.T, dataDir string) string {
	t.Helper()
	at := time.Date(2025, 5, 6, 9, 30, 0, 0, time.Local)
	path, err := storage.NewTracePath(dataDir, at)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	ttft := 240.0
	for i, q := range []trace.Request{
		{InputLength: 4200, OutputLength: 310, HashIDs: []int64{11, 12, 13}, Model: "qwen3-8b", Stream: true},
		{InputLength: 4600, OutputLength: 120, HashIDs: []int64{11, 12, 13, 14}, Model: "qwen3-8b", Stream: true},
		{InputLength: 900, OutputLength: 0, HashIDs: []int64{21}, Model: "llama-3.1-8b", Error: "the client hung up"},
	} {
		q.Timestamp = int64(i) * 60_000
		q.Time = at.Add(time.Duration(q.Timestamp) * time.Millisecond).Format(time.RFC3339Nano)
		q.API, q.Path, q.Usage, q.TTFTMs, q.DurationMs = trace.APIChat, "/v1/chat/completions", trace.UsageServer, &ttft, 2000
		if err := w.Add(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRateFormReplaysATrace: a trace given in "Replay a trace" makes the
// plan a replay (Replay set, no rates or sweep) that passes Validate, the
// summary says what Run sends, and the fields the trace sets are greyed
// while it is given; what cannot be replayed is said under the plan, Run
// off.
func TestRateFormReplaysATrace(t *testing.T) {
	h := newHarness(t)
	path := recordedTrace(t, h.u.opts.Dirs.Data)
	garbage := filepath.Join(t.TempDir(), "notes.jsonl")
	if err := os.WriteFile(garbage, []byte("milk\neggs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mooncake, err := filepath.Abs(filepath.Join("..", "engine", "trace", "testdata", "mooncake_conversation_1-300.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name             string
		file             string
		speed, from, to  string
		prompts          bool // a prompts file in "Your own load" too
		want             *setup.Replay
		wantSummary      string // in the summary, or the problem said
		wantRunnable     bool
		wantRatesGreyed  bool
		wantReplayFields bool // speed, from and to on
	}{
		{name: "no trace: the rates", wantSummary: "Rate: a sweep", wantRunnable: true},
		{name: "a trace as recorded", file: path, want: &setup.Replay{File: path, Speed: 1},
			wantSummary:  "Replay: the 3 requests of " + filepath.Base(path) + ", at their recorded times, 2 min as recorded",
			wantRunnable: true, wantRatesGreyed: true, wantReplayFields: true},
		{name: "faster, a part of the day", file: path, speed: "4", from: "09:00", to: "9:31",
			want:         &setup.Replay{File: path, Speed: 4, From: "09:00", To: "9:31"},
			wantSummary:  "Replay: the requests of " + filepath.Base(path) + " recorded from 09:00 to 9:31, 4 times as fast as recorded",
			wantRunnable: true, wantRatesGreyed: true, wantReplayFields: true},
		{name: "speed left empty is as recorded", file: path, speed: " ", want: &setup.Replay{File: path},
			wantSummary: "at their recorded times, 2 min as recorded", wantRunnable: true, wantRatesGreyed: true, wantReplayFields: true},
		{name: "a public trace", file: mooncake, want: &setup.Replay{File: mooncake, Speed: 1},
			wantSummary: "Replay: the 300 requests of mooncake_conversation_1-300.jsonl (Mooncake)", wantRunnable: true, wantRatesGreyed: true, wantReplayFields: true},
		{name: "a public trace has no clock", file: mooncake, from: "09:00", wantSummary: "only a trace this app recorded has", wantRatesGreyed: true, wantReplayFields: true},
		{name: "ends before it begins", file: path, from: "12:00", to: "09:00", wantSummary: "ends (09:00) before it begins (12:00)", wantRatesGreyed: true, wantReplayFields: true},
		{name: "not a time of day", file: path, from: "9am", wantSummary: `"9am" is not a time of day`, wantRatesGreyed: true, wantReplayFields: true},
		{name: "too fast", file: path, speed: "5000", wantSummary: "speed 5000 is not allowed", wantRatesGreyed: true, wantReplayFields: true},
		{name: "not there", file: path + ".gone", wantSummary: "does not exist", wantRatesGreyed: true, wantReplayFields: true},
		{name: "not a trace", file: garbage, wantSummary: "the trace notes.jsonl cannot be replayed: line 1", wantRatesGreyed: true, wantReplayFields: true},
		{name: "with a prompts file", file: path, prompts: true, wantSummary: "a trace makes its own prompts", wantRatesGreyed: true, wantReplayFields: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.locked(func() {
				b := h.u.bench
				f := rateFormShown(b)
				if tc.prompts {
					f.promptsEntry.SetText(promptsFile(t))
				}
				test.Type(f.traceEntry, tc.file)
				if tc.speed != "" {
					f.speedEntry.SetText(tc.speed)
				}
				f.fromEntry.SetText(tc.from)
				f.toEntry.SetText(tc.to)
				p, err := f.plan()
				if tc.want != nil {
					if err != nil {
						t.Fatalf("the plan: %v", err)
					}
					if !reflect.DeepEqual(p.Replay, tc.want) || p.Rates != nil || p.Sweep {
						t.Errorf("the plan replays %+v with rates %v, sweep %v; want %+v and neither", p.Replay, p.Rates, p.Sweep, tc.want)
					}
					if err := p.Validate(); err != nil {
						t.Errorf("Validate: %v", err)
					}
				}
				if !strings.Contains(b.planNote.Text, tc.wantSummary) {
					t.Errorf("under the plan: %q\nwant %q", b.planNote.Text, tc.wantSummary)
				}
				if b.runButton.Disabled() == tc.wantRunnable {
					t.Errorf("Run off %v, want runnable %v: %q", b.runButton.Disabled(), tc.wantRunnable, b.planNote.Text)
				}
				if !tc.wantRunnable && b.planNote.Importance != widget.WarningImportance {
					t.Errorf("the problem %q is not in the warning colour", b.planNote.Text)
				}
				if f.ratesEntry.Disabled() != tc.wantRatesGreyed || f.requestsEntry.Disabled() != tc.wantRatesGreyed || f.arrivalSelect.Disabled() != tc.wantRatesGreyed {
					t.Errorf("rates, requests and arrivals greyed %v %v %v, want %v", f.ratesEntry.Disabled(), f.requestsEntry.Disabled(), f.arrivalSelect.Disabled(), tc.wantRatesGreyed)
				}
				if f.speedEntry.Disabled() == tc.wantReplayFields || f.fromEntry.Disabled() == tc.wantReplayFields {
					t.Errorf("speed and from on %v %v, want %v", !f.speedEntry.Disabled(), !f.fromEntry.Disabled(), tc.wantReplayFields)
				}
			})
		})
	}
}

// TestReplayFieldsKept: the trace, speed and part of the day come back
// when the app starts again over the same folders, the section unfolded
// and the plan the same replay.
func TestReplayFieldsKept(t *testing.T) {
	dir := t.TempDir()
	h1 := newHarnessAt(t, dir)
	path := recordedTrace(t, h1.u.opts.Dirs.Data)
	h1.locked(func() {
		b := h1.u.bench
		b.planSelect.SetSelected(plans.ByID("rate").Title)
		f := b.rateFormOf()
		f.traceEntry.SetText(path)
		f.speedEntry.SetText("2.5")
		f.fromEntry.SetText("09:15")
		f.toEntry.SetText("17:00")
		b.closeForm()
	})
	quiet(h1)
	h2 := newHarnessAt(t, dir)
	h2.locked(func() {
		b := h2.u.bench
		f := b.rateFormOf()
		if b.kind().ID != "rate" {
			t.Errorf("the plan is %q, want the rate plan", b.kind().ID)
		}
		for _, c := range []struct{ got, want string }{{f.traceEntry.Text, path}, {f.speedEntry.Text, "2.5"}, {f.fromEntry.Text, "09:15"}, {f.toEntry.Text, "17:00"}} {
			if c.got != c.want {
				t.Errorf("after a restart a field holds %q, want %q", c.got, c.want)
			}
		}
		if !f.section.Items[0].Open {
			t.Error("the replay kept is folded away")
		}
		p, err := f.plan()
		if want := (&setup.Replay{File: path, Speed: 2.5, From: "09:15", To: "17:00"}); err != nil || !reflect.DeepEqual(p.Replay, want) {
			t.Errorf("after a restart the plan replays %+v (%v), want %+v", p.Replay, err, want)
		}
		if !f.ratesEntry.Disabled() {
			t.Error("after a restart the rates are not greyed under a trace")
		}
	})
}

// TestTuneFormReplaysATrace: Compare settings' "Replay a trace" makes
// each run a replay of the trace (TunePlan.Replay, no rates or sweep)
// that passes Validate, greys the Kovara plan's levels while it is
// given, and the line under the plan says what each run sends; emptied,
// the Kovara plan is back.
func TestTuneFormReplaysATrace(t *testing.T) {
	h := newHarness(t)
	path := recordedTrace(t, h.u.opts.Dirs.Data)
	h.locked(func() {
		b := h.u.bench
		b.planSelect.SetSelected(plans.ByID(results.PlanTune).Title)
		f := b.tune
		if f.concurrencyEntry.Disabled() || !f.speedEntry.Disabled() {
			t.Errorf("without a trace: levels greyed %v, speed on %v", f.concurrencyEntry.Disabled(), !f.speedEntry.Disabled())
		}
		test.Type(f.traceEntry, path)
		f.speedEntry.SetText("2")
		p, err := f.plan()
		if err != nil {
			t.Fatalf("the plan: %v", err)
		}
		if p.Replay == nil || !reflect.DeepEqual(p.Replay.Replay, &setup.Replay{File: path, Speed: 2}) || p.Replay.Rates != nil || p.Replay.Sweep {
			t.Errorf("the plan replays %+v, want the trace at speed 2 and no rates", p.Replay)
		}
		if !f.concurrencyEntry.Disabled() || !f.requestsEntry.Disabled() || !f.lengths.inputEntry.Disabled() || f.speedEntry.Disabled() {
			t.Errorf("with a trace: levels greyed %v, requests %v, lengths %v; speed on %v", f.concurrencyEntry.Disabled(), f.requestsEntry.Disabled(), f.lengths.inputEntry.Disabled(), !f.speedEntry.Disabled())
		}
		if want := "each run a replay of the 3 requests of " + filepath.Base(path) + ", 2 times as fast as recorded"; !strings.Contains(b.planNote.Text, want) {
			t.Errorf("under the plan: %q\nwant %q", b.planNote.Text, want)
		}
		if b.runButton.Disabled() {
			t.Errorf("Run is off: %q", b.planNote.Text)
		}
		f.traceEntry.SetText("")
		if p, err := f.plan(); err != nil || p.Replay != nil || f.concurrencyEntry.Disabled() {
			t.Errorf("the trace emptied: replay %+v, %v, levels greyed %v", p.Replay, err, f.concurrencyEntry.Disabled())
		}
	})
}
