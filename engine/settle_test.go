package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
)

// testRunner is a runner on a session that never reaches a server: no
// /metrics scraper, no GPU source.
func testRunner(t *testing.T, plan setup.KovaraPlan) *runner {
	t.Helper()
	sess, err := newSession(setup.Endpoint{URL: "http://127.0.0.1:1"}, Observer{Live: NewLive()})
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{session: sess, plan: plan}
	r.file = r.newFile()
	return r
}

// TestSettlePlan: the context and rate plans' results take the accepted
// probe's compat (Timings from the probe itself), the finish time and a
// copy of the warnings; before a probe was accepted, nothing of it.
func TestSettlePlan(t *testing.T) {
	t.Parallel()
	before := results.PlanCompat{Attempts: 9} // what the result held, kept without a probe
	cases := []struct {
		name       string
		compat     *results.Compat
		timings    bool
		wantCompat results.PlanCompat
		wantEOS    bool
	}{
		{"probe accepted on its second try", &results.Compat{IgnoreEOS: false, StreamOptions: true, Usage: true, Attempts: 2}, true,
			results.PlanCompat{StreamOptions: true, Usage: true, Timings: true, Attempts: 2}, false},
		{"ignore_eos accepted, no timings", &results.Compat{IgnoreEOS: true, StreamOptions: true, Attempts: 1}, false,
			results.PlanCompat{StreamOptions: true, Attempts: 1}, true},
		{"no probe accepted", nil, true, before, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := testRunner(t, setup.KovaraPlan{})
			r.file.Local.Compat = c.compat
			r.probeOut.hasTimings = c.timings
			r.warn("the server refused ignore_eos")
			local, compat, eos := results.PlanLocal{}, before, true
			warns := r.settlePlan(&local, &compat, &eos)
			if !reflect.DeepEqual(compat, c.wantCompat) || eos != c.wantEOS {
				t.Errorf("compat, ignore_eos = %+v, %v; want %+v, %v", compat, eos, c.wantCompat, c.wantEOS)
			}
			if _, err := time.Parse(time.RFC3339, local.FinishedAt); err != nil {
				t.Errorf("finished_at %q: %v", local.FinishedAt, err)
			}
			if local.ServerMetrics != nil || local.Telemetry != nil {
				t.Errorf("server metrics, telemetry = %v, %v without a scraper or a GPU source; want nil", local.ServerMetrics, local.Telemetry)
			}
			if want := []string{"the server refused ignore_eos"}; !slices.Equal(warns, want) {
				t.Errorf("warnings = %q, want %q", warns, want)
			}
			// The rate plan appends its levels' warnings to the copy.
			warns[0] = "changed"
			if r.warnings[0] != "the server refused ignore_eos" {
				t.Errorf("the run's warnings changed with the result's: %q", r.warnings)
			}
		})
	}
}

// TestExpectPrep: the live view counts calibration, the warmup and a
// shared system prompt's prefix check as the plan's preparation.
func TestExpectPrep(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		warmup     int
		w          setup.Workload
		wantChecks int
	}{
		{"no warmup, no workload", 0, setup.Workload{}, 0},
		{"warmup only", 3, setup.Workload{}, 0},
		{"shared system prompt", 2, setup.Workload{SharedPrefix: 500}, prefixCheckRequests},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := testRunner(t, setup.KovaraPlan{Warmup: c.warmup})
			got := r.expectPrep(&workload{w: c.w})
			if got != c.wantChecks {
				t.Errorf("checks = %d, want %d", got, c.wantChecks)
			}
			if got, want := r.obs.Live.prepTotal, 1+c.warmup+c.wantChecks; got != want {
				t.Errorf("preparation requests = %d, want %d", got, want)
			}
		})
	}
}
