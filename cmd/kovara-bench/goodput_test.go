package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/setup"
)

// TestSLOFlags: the service level's flags are one set shared by the
// plans that take them: the capacity plan keeps its defaults, a Kovara
// and a rate run judge goodput by the limits given and only those.
func TestSLOFlags(t *testing.T) {
	t.Parallel()
	args := []string{"--slo-ttft-p95", "800", "--slo-tpot", "40"}
	f, set := flagsOf(t, args...)
	k, err := f.plan(set)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := k.SLO, (setup.RateSLO{TTFTMs: 800, TPOTMs: 40}); got != want {
		t.Errorf("kovara: service level %+v, want %+v", got, want)
	}
	f, set = flagsOf(t, append(args, "--rate", "2")...)
	r, err := f.ratePlan(set)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.SLO, (setup.RateSLO{TTFTMs: 800, TPOTMs: 40}); got != want {
		t.Errorf("rate: service level %+v, want %+v", got, want)
	}
	f, set = flagsOf(t)
	if k, _ := f.plan(set); k.SLO.Set() {
		t.Errorf("kovara without the flags: service level %+v, want none", k.SLO)
	}
	c, err := f.capacityPlan()
	if err != nil || c.UserTPS != setup.DefaultSLOUserTPS || c.TTFTP95Ms != setup.DefaultSLOTTFTP95Ms || c.KovaraPlan.SLO.Set() {
		t.Errorf("capacity: %v, %+v; want its defaults and no goodput", err, c)
	}
	f, set = flagsOf(t, "--slo-tpot", "-1")
	if _, err := f.plan(set); err == nil || !strings.Contains(err.Error(), "cannot be below 0") {
		t.Errorf("a negative limit: %v", err)
	}
}

// TestRunGoodput: --slo-ttft-p95 and --slo-tpot on a Kovara run reach
// the results file (local.slo and each level's goodput), its table and
// its headline. Against the simulator on a busy machine only the ends
// hold: limits no request can miss are met by every success, limits none
// can meet by none.
func TestRunGoodput(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	tests := []struct {
		name       string
		ttft, tpot string
		all        bool
	}{
		{"limits every request meets", "60000", "10000", true},
		{"limits no request meets", "0.001", "10000", false},
	}
	for _, tt := range tests {
		out := filepath.Join(t.TempDir(), "r.json")
		code, stdout, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", out, "--slo-ttft-p95", tt.ttft, "--slo-tpot", tt.tpot}, smallFlags...)...)
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr:\n%s", tt.name, code, stderr)
		}
		f := readResults(t, out)
		if f.Local.SLO == nil || f.Local.SLO.TPOTMs != 10000 || f.Local.SLO.UserTPS != 0 {
			t.Fatalf("%s: local.slo %+v", tt.name, f.Local.SLO)
		}
		for _, r := range f.Runs {
			g := f.GoodputAt(r.Concurrency, false)
			want := 0
			if tt.all {
				want = r.Metrics.RequestsOK
			}
			if g == nil || g.Met != want {
				t.Errorf("%s: level %d goodput %+v, want %d met of %d", tt.name, r.Concurrency, g, want, r.Metrics.RequestsOK)
			}
		}
		for _, want := range []string{"Goodput %", "Goodput req/s", "Goodput (the requests that met the service level) against TTFT ≤ "} {
			if !strings.Contains(stdout, want) {
				t.Errorf("%s: stdout lacks %q:\n%s", tt.name, want, stdout)
			}
		}
	}
}
