package ui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// rateForm is the rate plan's form: the offered rates (or a sweep), how
// requests arrive, the cap on requests in flight, the requests at each
// rate, the lengths, and the service level goodput is judged by.
type rateForm struct {
	formBase
	ratesEntry     *formEntry
	arrivalSelect  *widget.Select
	burstEntry     *formEntry
	inFlightEntry  *formEntry
	requestsEntry  *formEntry
	inputEntry     *formEntry
	outputEntry    *formEntry
	sloTTFTEntry   *formEntry
	sloTPOTEntry   *formEntry
	sweepMaxEntry  *formEntry
	warmupEntry    *formEntry
	seedEntry      *formEntry
	arrivalByLabel map[string]string // the list's label → setup.Arrival…
	fields         *widget.Form      // its labels grey with their field when it is off
}

// rateArrivalLabels say each arrival pattern in the form's list.
var rateArrivalLabels = map[string]string{
	setup.ArrivalPoisson:  "poisson (independent users)",
	setup.ArrivalConstant: "constant (evenly spaced)",
	setup.ArrivalGamma:    "gamma (burstiness below)",
}

func newRateForm(s *BenchmarkScreen) *rateForm {
	f := &rateForm{arrivalByLabel: map[string]string{}}
	timeout := f.init(s, results.PlanRate)
	d := setup.DefaultRatePlan()
	f.ratesEntry = s.entry(setup.FormatRates(d.Rates, d.Sweep), func(v string) error { _, _, err := setup.ParseRates(v); return err })
	f.ratesEntry.SetPlaceHolder("sweep, or requests a second: 1,2,4")
	var labels []string
	for _, a := range setup.Arrivals {
		labels = append(labels, rateArrivalLabels[a])
		f.arrivalByLabel[rateArrivalLabels[a]] = a
	}
	f.burstEntry = s.entry("1", positiveNumber("burstiness"))
	f.arrivalSelect = widget.NewSelect(labels, func(string) { f.onArrival(); s.revalidate() })
	f.inFlightEntry = s.entry(fmt.Sprint(d.MaxInFlight), countCheck("max in flight", 1))
	f.requestsEntry = s.entry(fmt.Sprint(d.Requests), countCheck("requests per rate", 1))
	f.inputEntry = s.entry(fmt.Sprint(d.InputTokens), countCheck("input tokens", 1))
	f.outputEntry = s.entry(fmt.Sprint(d.OutputTokens), countCheck("output tokens", 2))
	f.sloTTFTEntry = s.entry("", optionalPositive("TTFT limit"))
	f.sloTTFTEntry.SetPlaceHolder("not judged")
	f.sloTPOTEntry = s.entry("", optionalPositive("TPOT limit"))
	f.sloTPOTEntry.SetPlaceHolder("not judged")
	f.sweepMaxEntry = s.entry(trimFloat(setup.RateSweepMax), positiveNumber("sweep up to"))
	f.warmupEntry = s.entry(fmt.Sprint(d.Warmup), countCheck("warmup", 0))
	var seed *widget.FormItem
	f.seedEntry, seed = s.seedItem()
	f.seedEntry.SetPlaceHolder("new prompts each run; the send times stay")
	f.arrivalSelect.SetSelected(rateArrivalLabels[d.Arrival])
	f.fields = widget.NewForm(
		widget.NewFormItem("Rates (req/s)", f.ratesEntry),
		widget.NewFormItem("Arrivals", f.arrivalSelect),
		widget.NewFormItem("Burstiness (gamma shape)", f.burstEntry),
		widget.NewFormItem("Max in flight", f.inFlightEntry),
		widget.NewFormItem("Requests per rate", f.requestsEntry),
		widget.NewFormItem("Input tokens", f.inputEntry),
		widget.NewFormItem("Output tokens", f.outputEntry),
		widget.NewFormItem("Goodput: TTFT at most (ms)", f.sloTTFTEntry),
		widget.NewFormItem("Goodput: TPOT at most (ms)", f.sloTPOTEntry),
	)
	f.box = container.NewVBox(
		s.aligned(f.fields),
		s.advanced(widget.NewFormItem("Sweep up to (req/s)", f.sweepMaxEntry), widget.NewFormItem("Warmup requests", f.warmupEntry), seed, timeout),
	)
	return f
}

// onArrival lets burstiness be typed only for gamma arrivals, the only
// ones it shapes.
func (f *rateForm) onArrival() {
	if f.arrival() == setup.ArrivalGamma {
		f.burstEntry.Enable()
	} else {
		f.burstEntry.Disable()
	}
	if f.fields != nil {
		f.fields.Refresh() // Fyne greys a form's label only as it refreshes
	}
}

func (f *rateForm) arrival() string { return f.arrivalByLabel[f.arrivalSelect.Selected] }

// optionalPositive accepts an empty field (not judged) or a number
// above 0.
func optionalPositive(field string) func(string) error {
	return func(v string) error {
		_, err := readOptional(field, v)
		return err
	}
}

// readOptional is an optional limit: 0 when the field is empty.
func readOptional(field, v string) (float64, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	return engine.ParsePositive(field, v)
}

// plan reads the rate plan's settings.
func (f *rateForm) plan() (setup.RatePlan, error) {
	p := setup.DefaultRatePlan()
	var errs []error
	var err error
	if p.Rates, p.Sweep, err = setup.ParseRates(f.ratesEntry.Text); err != nil {
		errs = append(errs, fmt.Errorf("rates: %w", err))
	}
	if p.Rates != nil {
		p.Rates = slices.Compact(slices.Sorted(slices.Values(p.Rates))) // as the run takes them
	}
	p.Arrival, p.Burstiness = f.arrival(), 0
	if p.Arrival == setup.ArrivalGamma {
		if p.Burstiness, err = engine.ParsePositive("burstiness", f.burstEntry.Text); err != nil {
			errs = append(errs, err)
		}
	}
	errs = readCount(f.inFlightEntry, "max in flight", 1, &p.MaxInFlight, errs)
	errs = readCount(f.requestsEntry, "requests per rate", 1, &p.Requests, errs)
	errs = readCount(f.inputEntry, "input tokens", 1, &p.InputTokens, errs)
	errs = readCount(f.outputEntry, "output tokens", 2, &p.OutputTokens, errs)
	if p.SLO.TTFTMs, err = readOptional("TTFT limit", f.sloTTFTEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.SLO.TPOTMs, err = readOptional("TPOT limit", f.sloTPOTEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.Sweep {
		if p.SweepMax, err = engine.ParsePositive("sweep up to", f.sweepMaxEntry.Text); err != nil {
			errs = append(errs, err)
		}
	}
	errs = readCount(f.warmupEntry, "warmup", 0, &p.Warmup, errs)
	// Without a seed the prompts are fresh each run; the send times keep
	// the default seed, so two runs offer the same schedule.
	var seed int64
	if errs = readSeed(f.seedEntry, &seed, &p.FixedSeed, errs); p.FixedSeed {
		p.Seed = seed
	}
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	return p, formError(errs, p.Validate)
}

func (f *rateForm) check() (int, int, error) {
	p, err := f.plan()
	return p.InputTokens, p.OutputTokens, err
}

func (f *rateForm) summary() string {
	p, _ := f.plan()
	rates := fmt.Sprintf("a sweep from half the rate one request alone keeps up with, doubling up to %s until the server does not keep up, then %d bisections",
		results.RateName(p.SweepMax), setup.RateSweepRefine)
	if !p.Sweep {
		var names []string
		var sending float64
		for _, r := range p.Rates {
			names = append(names, setup.FormatRate(r))
			sending += float64(p.Requests) / r
		}
		rates = fmt.Sprintf("%s req/s (about %s of sending)", results.JoinAnd(names), results.Seconds(sending*1000))
	}
	arrivals := p.Arrival
	if p.Arrival == setup.ArrivalGamma {
		arrivals += fmt.Sprintf(" (burstiness %s)", trimFloat(p.Burstiness))
	}
	slo := "no service level, so no goodput"
	if p.SLO.Set() {
		slo = "goodput: requests with " + (&results.RateSLO{TTFTMs: p.SLO.TTFTMs, TPOTMs: p.SLO.TPOTMs}).Words()
	}
	return fmt.Sprintf("Rate: %s; %d requests at each, %s arrivals, at most %d in flight, %d input and %d output tokens; latency from each request's intended send time; %s. Kept in the history; never published.",
		rates, p.Requests, arrivals, p.MaxInFlight, p.InputTokens, p.OutputTokens, slo)
}

func (f *rateForm) run(model string, simulated bool) (planRun, error) {
	return formRun(f.s, model, f.plan, func(p *setup.RatePlan) { p.Model, p.Simulated = model, simulated },
		engine.RunRate, func(r *results.RateResult) plans.Doc { return plans.NewRate(r) },
		func(r *results.RateResult) (string, *results.Detection) { return r.Model, &r.Engine })
}
