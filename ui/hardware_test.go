package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/hw/hwtest"
	"github.com/kovara/desktop/storage"
)

// TestResultSaysWhatTheCardsDid: a run on an endpoint whose cards report
// their power cap throughout (a stand-in nvidia-smi in the captured
// format) has a Hardware tab whose chart draws the slowdown and whose
// table says, per level, the share of it the cards were capped and for
// what; the same run on cards that never slowed says "none".
func TestResultSaysWhatTheCardsDid(t *testing.T) {
	for _, c := range []struct {
		name    string
		reasons uint64
		why     string
	}{{"capped", 0x4, "power cap"}, {"free", 0, "none"}} {
		t.Run(c.name, func(t *testing.T) {
			hwtest.StandInSMIThrottled(t, 250, 0, c.reasons)
			h := newHarness(t)
			url := startTestSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 1e5})
			if err := h.u.endpoints.Put(storage.SavedEndpoint{Name: "rig", URL: url, VerifyTLS: true, GPU: "local"}, ""); err != nil {
				t.Fatal(err)
			}
			b := h.u.bench
			h.locked(func() {
				b.refreshEndpoints()
				b.selectEndpoint("rig")
				h.setPlan("1,2", "8", "120") // levels of several of the stand-in's 0.2 s ticks
				test.Tap(b.runButton)
			})
			h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
			h.locked(func() {
				hp := b.result.hardware
				if hp == nil {
					t.Fatal("no Hardware tab")
				}
				if !slices.ContainsFunc(b.result.views.Items, func(it *container.TabItem) bool { return it.Text == "Hardware" }) {
					t.Error("the result has no Hardware tab")
				}
				slowed, why := slices.Index(hp.columns, "Slowed\n% of time"), slices.Index(hp.columns, "Slowed\nfor")
				if slowed < 0 || why < 0 || len(hp.rows) != 2 {
					t.Fatalf("hardware table %q / %q", hp.columns, hp.rows)
				}
				for _, r := range hp.rows {
					if r[why] != c.why || (c.reasons != 0) != (r[slowed] != "0.0") || r[slowed] == results.Missing {
						t.Errorf("level %s: slowed %s for %q, want %q", r[0], r[slowed], r[why], c.why)
					}
				}
				if !hp.chart.ShowingChart() {
					t.Error("the hardware chart shows nothing")
				}
				got := ""
				if b.result.problems != nil {
					got = b.result.problems.Text
				}
				if (c.reasons != 0) != strings.Contains(got, "power cap") {
					t.Errorf("problems %q", got)
				}
			})
		})
	}
}
