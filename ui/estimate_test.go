package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

// TestPlanEstimateAndQuickCheck: the endpoint Test's measured speed is
// kept and the plan's length said under it before Run; a homelab CPU
// server at 5 tok/s is told the default plan takes hours and offered a
// quick check, which sets fewer requests per level.
func TestPlanEstimateAndQuickCheck(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	h.addEndpoint("lab box", url, "")
	s := h.u.endpointS
	h.locked(func() {
		b.selectEndpoint("lab box")
		if !strings.Contains(b.planNote.Text, "Test the endpoint under Endpoints to learn how long") {
			t.Errorf("an untested endpoint's note %q does not say how to learn the plan's length", b.planNote.Text)
		}
		test.Tap(s.testButton)
	})
	h.waitFor("the Test's speed", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Speed: ") })
	h.waitFor("the estimate under the plan", 20*time.Second, func() bool {
		return strings.Contains(b.planNote.Text, "on this server at its tested speed")
	})
	h.locked(func() {
		if sp := h.u.speedOf("lab box", ""); sp == nil || !sp.Usable() {
			t.Fatalf("the Test's speed was not kept: %+v", sp)
		}
		if !strings.Contains(s.testResult.Text, "the default plan (") {
			t.Errorf("the Test does not say how long the default plan takes:\n%s", s.testResult.Text)
		}
		// A fast simulator: the default plan is short, no quick check.
		if b.kovara.quickButton.Visible() {
			t.Errorf("quick check offered for a short plan: %q", b.planNote.Text)
		}
	})

	// A CPU server decoding 5 tok/s, one request at a time.
	h.addEndpoint("cpu box", "http://127.0.0.1:9", "")
	h.locked(func() {
		h.u.rememberSpeed(setup.Endpoint{Name: "cpu box", URL: "http://127.0.0.1:9"}, "",
			&engine.TestedSpeed{PromptTokens: 200, TTFT: 4 * time.Second, DecodeTPS: 5})
		b.selectEndpoint("cpu box")
		b.kovara.requestsEntry.SetText("100")
		note := b.planNote.Text
		if !strings.Contains(note, " h ") || !strings.Contains(note, "on this server at its tested speed (5.0 tok/s for one user") {
			t.Errorf("a 5 tok/s server is not told the default plan takes hours: %q", note)
		}
		if !b.kovara.quickButton.Visible() || !strings.HasPrefix(b.kovara.quickButton.Text, "Quick check: 32 requests per level (") {
			t.Fatalf("no quick check offered: shown %v, %q", b.kovara.quickButton.Visible(), b.kovara.quickButton.Text)
		}
		test.Tap(b.kovara.quickButton)
		if got := b.kovara.requestsEntry.Text; got != "32" {
			t.Errorf("quick check set %q requests per level, want 32 (the highest level's users)", got)
		}
		if b.kovara.quickButton.Visible() {
			t.Errorf("quick check still offered for the quick plan")
		}
		if b.planNote.Text == note {
			t.Errorf("the estimate did not change with the plan: %q", note)
		}
		// Repeat 2 takes twice as long.
		one := b.planNote.Text
		b.kovara.repeatEntry.SetText("2")
		if b.planNote.Text == one {
			t.Errorf("Repeat 2 did not change the estimate: %q", one)
		}
		b.kovara.repeatEntry.SetText("1")
	})
}

// TestLiveViewTimesLeft: the live view says the stage's and the whole
// plan's time left, each labelled, and its whole-plan bar is the group's
// share; a settings comparison, whose whole is more than the run, says
// the stage's only.
func TestLiveViewTimesLeft(t *testing.T) {
	test.NewTempApp(t)
	snap := engine.Snapshot{
		Phase: engine.PhaseMeasure, Level: 1, Levels: 3, LevelDone: 4, LevelTotal: 10, Line: "Level 1 of 3",
		Left: 40 * time.Second, PlanLeft: 12 * time.Minute, Progress: 0.6, Run: 2, Runs: 2,
	}
	for _, tune := range []bool{false, true} {
		v := newLiveView("Benchmarking", func() {})
		if tune {
			v.overall = func(engine.Snapshot) float64 { return 0.25 }
		}
		d := liveData{snap: snap}
		v.update(&d, chart.Palette{})
		want, bar := "Level 1 of 3 — this stage about 40 s left, whole plan about 12 min left", 0.6
		if tune {
			want, bar = "Level 1 of 3 — about 40 s left", 0.25
		}
		if v.phase.Text != want || v.overallBar.Value != bar {
			t.Errorf("comparison %v: says %q with the whole-plan bar at %v, want %q at %v", tune, v.phase.Text, v.overallBar.Value, want, bar)
		}
	}
}

// TestAnswersEstimateBeforeRun: Compare answers says under its form how
// many requests it sends and, from the endpoints' tested speeds, at most
// how long they take; the other endpoint untested is said to be taken as
// fast as this one.
func TestAnswersEstimateBeforeRun(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	h.addEndpoint("cpu box", "http://127.0.0.1:9", "")
	h.addEndpoint("other box", "http://127.0.0.1:10", "")
	h.locked(func() {
		b.selectEndpoint("cpu box")
		b.planSelect.SetSelected(plans.ByID(results.PlanAnswers).Title)
		b.answers().modelEntry.SetText("q4")
		if note := b.planNote.Text; !strings.Contains(note, "390 short requests") || !strings.Contains(note, "Test the endpoint under Endpoints to learn how long") {
			t.Errorf("untested: %q", note)
		}
		// 1 s to a first token, one request at a time: 6 prompts of 32
		// reads on each side, about 7 min.
		h.u.rememberSpeed(setup.Endpoint{Name: "cpu box", URL: "http://127.0.0.1:9"}, "", &engine.TestedSpeed{PromptTokens: 200, TTFT: time.Second, DecodeTPS: 5})
		b.answers().promptsEntry.SetText("5")
		b.answers().promptsEntry.SetText("6")
		if note := b.planNote.Text; !strings.Contains(note, "At most about 7 min at the tested speeds.") {
			t.Errorf("tested: %q", note)
		}
		b.answers().againstSelect.SetSelected("other box")
		if note := b.planNote.Text; !strings.Contains(note, "(other box untested: taken as fast)") {
			t.Errorf("against an untested endpoint: %q", note)
		}
	})
}
