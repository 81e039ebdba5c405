package setup

import (
	"slices"
	"strings"
	"testing"
)

func TestParseRates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		rates []float64
		sweep bool
		err   string
	}{
		{"1,2,4", []float64{1, 2, 4}, false, ""},
		{" 0.5, 8/s ", []float64{0.5, 8}, false, ""},
		{"Sweep", nil, true, ""},
		{"1,x", nil, false, `"x" is not a rate`},
		{"0", nil, false, `"0" is not a rate`},
		{"", nil, false, "give at least one rate"},
	}
	for _, tc := range tests {
		rates, sweep, err := ParseRates(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || sweep != tc.sweep || !slices.Equal(rates, tc.rates) {
			t.Errorf("%q: %v, %v, %v; want %v, %v", tc.in, rates, sweep, err, tc.rates, tc.sweep)
		}
		if got := FormatRates(rates, sweep); !tc.sweep && got != FormatRates(tc.rates, false) {
			t.Errorf("%q written back as %q", tc.in, got)
		}
	}
}

func TestRatePlanValidate(t *testing.T) {
	t.Parallel()
	ok := DefaultRatePlan()
	tests := []struct {
		name string
		edit func(*RatePlan)
		err  string
	}{
		{"the default", func(*RatePlan) {}, ""},
		{"given rates", func(p *RatePlan) { p.Sweep, p.Rates = false, []float64{1, 2} }, ""},
		{"both", func(p *RatePlan) { p.Rates = []float64{1} }, "not both"},
		{"neither", func(p *RatePlan) { p.Sweep = false }, "at least one rate"},
		{"burstiness without gamma", func(p *RatePlan) { p.Burstiness = 0.5 }, "--arrival gamma"},
		{"gamma burstiness", func(p *RatePlan) { p.Arrival, p.Burstiness = ArrivalGamma, 0.5 }, ""},
		{"an unknown arrival", func(p *RatePlan) { p.Arrival = "bursty" }, "not one of constant, poisson or gamma"},
		{"one-token answers", func(p *RatePlan) { p.OutputTokens = 1 }, "at least 2 tokens"},
		{"too many in flight", func(p *RatePlan) { p.MaxInFlight = RateMaxInFlight + 1 }, "max in flight"},
		{"a sweep that ends below its start", func(p *RatePlan) { p.SweepFrom, p.SweepMax = 8, 4 }, "a sweep from 8 to 4"},
		{"a rate too high, in plain decimals", func(p *RatePlan) { p.Sweep, p.Rates = false, []float64{20000} }, "rate 20000 is not allowed: use 0.01 to 10000 requests a second"},
	}
	for _, tc := range tests {
		p := ok
		tc.edit(&p)
		err := p.Validate()
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	if d := (RatePlan{Sweep: true}).WithDefaults(); d.Arrival != ArrivalPoisson || d.Burstiness != 1 || d.MaxInFlight != RateDefaultMaxInFlight || d.SweepFrom != 0 || d.SweepMax != RateSweepMax {
		t.Errorf("defaults %+v", d)
	}
}

// TestFormatRate: a rate is written as a plain decimal, never in
// exponent form, and reads back the same.
func TestFormatRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   float64
		want string
	}{
		{2, "2"}, {0.5, "0.5"}, {0.01, "0.01"}, {20000, "20000"}, {10000, "10000"}, {12345, "12345"},
		{1.0 / 3, "0.3333"}, {10.0 / 3, "3.333"}, {250, "250"}, {0.125, "0.125"},
	}
	for _, tc := range tests {
		if got := FormatRate(tc.in); got != tc.want {
			t.Errorf("FormatRate(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
