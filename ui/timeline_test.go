package ui

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// simFile is a run of levels against the simulator at url, not saved.
func simFile(t *testing.T, url string, levels ...int) *results.File {
	t.Helper()
	p := setup.DefaultPlan()
	p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 32, 8, levels, 8, 0
	f, err := engine.Run(context.Background(), p, setup.Endpoint{URL: url, Name: "sim box"}, engine.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTimelinePaneSideBySide: the pane Compare can show sets two runs'
// timelines side by side at the levels both kept, each titled with its
// run's number, on one time scale, each with its own Save PNG…; where
// there is nothing to set side by side it says why. The second run is the
// first's level 2 made five times as slow (comparetest.Slowed), so which
// is the longer is known whatever the machine's speed.
func TestTimelinePaneSideBySide(t *testing.T) {
	h := newHarness(t)
	fast := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	a := simFile(t, fast, 1, 2)
	b, err := comparetest.Slowed(a, 5)
	if err != nil {
		t.Fatal(err)
	}
	b.Runs, b.Local.Levels = b.Runs[1:], b.Local.Levels[1:] // level 2 only
	h.locked(func() {
		p := newTimelinePane(h.u, a, b)
		if p.level != nil || p.shown != 2 || len(p.views) != 2 {
			t.Fatalf("chooser %v, shown at %d, %d views; want no chooser (one shared level), 2 users, two views", p.level, p.shown, len(p.views))
		}
		for i, want := range []string{"[1] Every request at 2 users", "[2] Every request at 2 users"} {
			if v := p.views[i]; v.Title() != want || !v.ShowingChart() {
				t.Errorf("view %d: %q drawn %v, want %q drawn", i+1, v.Title(), v.ShowingChart(), want)
			}
		}
		own, err := chart.ResultTimeline(a, 2, PaletteFor(nil, 0))
		if err != nil {
			t.Fatal(err)
		}
		slower, err := chart.ResultTimeline(b, 2, PaletteFor(nil, 0))
		if err != nil {
			t.Fatal(err)
		}
		if sa, sb := p.specs[0].Span, p.specs[1].Span; sa != sb || sa != slower.Span || sa <= own.Span {
			t.Errorf("spans %v s and %v s (run 1 alone %v s, run 2 alone %v s): want both the slower run's", sa, sb, own.Span, slower.Span)
		}
		if got := []string{p.saves[0].Text, p.saves[1].Text}; !slices.Equal(got, []string{"Save [1] PNG…", "Save [2] PNG…"}) {
			t.Errorf("save buttons %q", got)
		}

		if w := newTimelinePane(h.u, a, b, a, b).content.MinSize().Width; w > 1000 {
			t.Errorf("four runs' timelines need %.0f px of width, more than a 1024-wide window leaves", w)
		}

		old := simFile(t, fast, 2)
		for i := range old.Local.Levels {
			old.Local.Levels[i].Samples = nil
		}
		if p := newTimelinePane(h.u, a, old); p.note == nil || p.note.Text != "Run [2]: "+chart.NoTimeline || len(p.views) != 0 {
			t.Errorf("beside an old run: %v, %d views", p.note, len(p.views))
		}
		one := simFile(t, fast, 1)
		if p := newTimelinePane(h.u, one, b); p.note == nil || p.note.Text != chart.NoSharedTimeline {
			t.Errorf("no shared level: %v", p.note)
		}
	})
}

// TestTimelinePaneStartsAtTheHighestFinishedLevel: a stopped run's
// partial level is offered, but the timeline opens on the highest level
// that finished.
func TestTimelinePaneStartsAtTheHighestFinishedLevel(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	f := simFile(t, url, 1, 2, 4)
	f.Local.Levels[2].Partial = true
	h.locked(func() {
		p := newTimelinePane(h.u, f)
		if want := []string{"1 user", "2 users", "4 users (stopped)"}; p.level == nil || !slices.Equal(p.level.Options, want) {
			t.Fatalf("chooser %v, want %q", p.level, want)
		}
		if p.shown != 2 || p.level.Selected != "2 users" {
			t.Errorf("opened at %d users (%q), want 2", p.shown, p.level.Selected)
		}
	})
}
