package ui

import (
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// TestRateFormCheck: the rate form says each field that does not read,
// in words that name it, and turns Run off; with the fields right, the
// plan it reads is the one asked for.
func TestRateFormCheck(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	tests := []struct {
		name  string
		set   func(f *rateForm)
		wants []string // in the error, lowercased; none: it reads
	}{
		{"defaults", func(*rateForm) {}, nil},
		{"rates given", func(f *rateForm) { f.ratesEntry.SetText("0.5, 2,8") }, nil},
		{"a word for a rate", func(f *rateForm) { f.ratesEntry.SetText("1,fast") }, []string{"rates", `"fast" is not a rate`}},
		{"no rate", func(f *rateForm) { f.ratesEntry.SetText(" , ") }, []string{"at least one rate"}},
		{"a rate too high", func(f *rateForm) { f.ratesEntry.SetText("20000") }, []string{"rate 20000 is not allowed: use 0.01 to 10000 requests a second"}},
		{"gamma without burstiness", func(f *rateForm) {
			f.arrivalSelect.SetSelected(rateArrivalLabels[setup.ArrivalGamma])
			f.burstEntry.SetText("")
		}, []string{"burstiness"}},
		{"gamma too even", func(f *rateForm) {
			f.arrivalSelect.SetSelected(rateArrivalLabels[setup.ArrivalGamma])
			f.burstEntry.SetText("500")
		}, []string{"burstiness 500 is not allowed"}},
		{"no slot", func(f *rateForm) { f.inFlightEntry.SetText("0") }, []string{"max in flight must be at least 1"}},
		{"too many in flight", func(f *rateForm) { f.inFlightEntry.SetText("5000") }, []string{"max in flight 5000 is not allowed"}},
		{"no requests", func(f *rateForm) { f.requestsEntry.SetText("none") }, []string{`requests per rate: "none" is not a whole number`}},
		{"a one-token answer", func(f *rateForm) { f.outputEntry.SetText("1") }, []string{"output tokens must be at least 2"}},
		{"no prompt", func(f *rateForm) { f.inputEntry.SetText("0") }, []string{"input tokens must be at least 1"}},
		{"a negative TTFT limit", func(f *rateForm) { f.sloTTFTEntry.SetText("-5") }, []string{"ttft limit must be more than 0"}},
		{"a TPOT limit in words", func(f *rateForm) { f.sloTPOTEntry.SetText("fast") }, []string{`tpot limit: "fast" is not a number`}},
		{"a sweep's top under its start", func(f *rateForm) { f.sweepMaxEntry.SetText("0.001") }, []string{"a sweep from", "not allowed"}},
		{"a bad timeout and seed together", func(f *rateForm) {
			f.timeoutEntry.SetText("soon")
			f.seedEntry.SetText("x")
		}, []string{"timeout", "seed"}},
	}
	for _, tt := range tests {
		h.locked(func() {
			f := newRateForm(b)
			b.forms[results.PlanRate] = f
			b.selectEndpoint(SimulatorName)
			b.planSelect.SetSelected(plans.ByID(results.PlanRate).Title)
			b.onPlan()
			tt.set(f)
			b.revalidate()
			_, _, err := f.check()
			if len(tt.wants) == 0 {
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
				}
				return
			}
			refusedOnScreen(t, b, tt.name, err, tt.wants)
			if _, err := f.run("m", true); err == nil {
				t.Errorf("%s: a run from wrong fields", tt.name)
			}
		})
	}
}

// TestRateFormReadsThePlan: what the fields read is the plan sent:
// rates or a sweep, gamma's burstiness only with gamma (the field is off
// otherwise), the service level only where given, and without a seed
// fresh prompts on the default schedule.
func TestRateFormReadsThePlan(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		f := newRateForm(h.u.bench)
		if !f.burstEntry.Disabled() {
			t.Error("burstiness can be typed for poisson arrivals")
		}
		p, err := f.plan()
		if err != nil {
			t.Fatal(err)
		}
		if !p.Sweep || p.Rates != nil || p.Arrival != setup.ArrivalPoisson || p.Burstiness != 0 || p.SLO.Set() || p.FixedSeed || p.Seed != setup.DefaultSeed ||
			p.SweepMax != setup.RateSweepMax || p.MaxInFlight != setup.RateDefaultMaxInFlight || p.Requests != setup.RateDefaultRequests {
			t.Errorf("defaults read %+v", p)
		}
		f.ratesEntry.SetText("1,4,2")
		f.arrivalSelect.SetSelected(rateArrivalLabels[setup.ArrivalGamma])
		f.burstEntry.SetText("0.5")
		f.inFlightEntry.SetText("8")
		f.requestsEntry.SetText("40")
		f.sloTTFTEntry.SetText("500")
		f.seedEntry.SetText("7")
		if f.burstEntry.Disabled() {
			t.Error("burstiness cannot be typed for gamma arrivals")
		}
		if p, err = f.plan(); err != nil {
			t.Fatal(err)
		}
		if p.Sweep || len(p.Rates) != 3 || p.Arrival != setup.ArrivalGamma || p.Burstiness != 0.5 || p.MaxInFlight != 8 || p.Requests != 40 ||
			p.SLO != (setup.RateSLO{TTFTMs: 500}) || !p.FixedSeed || p.Seed != 7 {
			t.Errorf("read %+v", p)
		}
		for _, want := range []string{"1, 2 and 4 req/s", "about 70 s of sending", "gamma (burstiness 0.5)", "at most 8 in flight", "TTFT ≤ 500 ms", "never published"} {
			if s := f.summary(); !strings.Contains(s, want) {
				t.Errorf("summary %q lacks %q", s, want)
			}
		}
		f.arrivalSelect.SetSelected(rateArrivalLabels[setup.ArrivalConstant])
		if p, err = f.plan(); err != nil || p.Burstiness != 0 {
			t.Errorf("constant arrivals read burstiness %g, %v", p.Burstiness, err)
		}
	})
}

// refusedOnScreen says whether a form refused what was typed as a person
// sees it: err and the note under the plan each say every one of wants
// (lower case), and Run is off.
func refusedOnScreen(t *testing.T, b *BenchmarkScreen, name string, err error, wants []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", name)
	}
	for _, want := range wants {
		if got := strings.ToLower(err.Error()); !strings.Contains(got, want) {
			t.Errorf("%s: %q does not say %q", name, got, want)
		}
		if got := strings.ToLower(b.planNote.Text); !strings.Contains(got, want) {
			t.Errorf("%s: the note under the plan %q does not say %q", name, got, want)
		}
	}
	if !b.runButton.Disabled() {
		t.Errorf("%s: Run is on with a wrong field", name)
	}
}
