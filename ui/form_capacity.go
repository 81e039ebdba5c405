package ui

import (
	"fmt"

	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// capacityForm is the capacity plan's form: the service level, the most
// users, and the lengths of its prompts and answers.
type capacityForm struct {
	formBase
	sloUserEntry *formEntry
	sloTTFTEntry *formEntry
	maxConcEntry *formEntry
	lengthFields
	warmupEntry *formEntry
	seedEntry   *formEntry
}

func newCapacityForm(s *BenchmarkScreen) *capacityForm {
	f := &capacityForm{}
	timeout := f.init(s, results.PlanCapacity)
	d := setup.DefaultCapacityPlan()
	f.sloUserEntry = s.entry(trimFloat(setup.DefaultSLOUserTPS), positiveNumber("per-user tok/s"))
	f.sloTTFTEntry = s.entry(trimFloat(setup.DefaultSLOTTFTP95Ms), positiveNumber("TTFT p95"))
	f.maxConcEntry = s.entry(fmt.Sprint(setup.DefaultCapacityMax), countCheck("most concurrent users", 1))
	var lengths []*widget.FormItem
	f.lengthFields, lengths = s.lengthFields(d.InputTokens, d.OutputTokens)
	f.warmupEntry = s.entry(fmt.Sprint(d.Warmup), countCheck("warmup", 0))
	var seed *widget.FormItem
	f.seedEntry, seed = s.seedItem()
	f.box = container.NewVBox(
		s.aligned(widget.NewForm(append([]*widget.FormItem{
			widget.NewFormItem("Per-user tok/s, at least", f.sloUserEntry),
			widget.NewFormItem("TTFT p95, at most (ms)", f.sloTTFTEntry),
			widget.NewFormItem("Most concurrent users", f.maxConcEntry),
		}, lengths...)...)),
		s.advanced(widget.NewFormItem("Warmup requests", f.warmupEntry), seed, timeout),
	)
	return f
}

// plan reads the capacity plan: the service level and the most users,
// the lengths, warmup, seed and timeout. Each level's requests it
// chooses itself.
func (f *capacityForm) plan() (setup.CapacityPlan, error) {
	p := setup.DefaultCapacityPlan()
	var errs []error
	var err error
	if p.UserTPS, err = engine.ParsePositive("per-user tok/s", f.sloUserEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.TTFTP95Ms, err = engine.ParsePositive("TTFT p95", f.sloTTFTEntry.Text); err != nil {
		errs = append(errs, err)
	}
	errs = readCount(f.maxConcEntry, "most concurrent users", 1, &p.MaxConcurrency, errs)
	errs = append(errs, f.lengthFields.read(&p.KovaraPlan)...)
	errs = readCount(f.warmupEntry, "warmup", 0, &p.Warmup, errs)
	errs = readSeed(f.seedEntry, &p.Seed, &p.FixedSeed, errs)
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	return p, formError(errs, p.Validate)
}

// kept is the form's fields as kept for the next start (planForm).
func (f *capacityForm) kept() []keptField {
	return append([]keptField{
		keptEntry("slo_user_tps", f.sloUserEntry), keptEntry("slo_ttft_p95", f.sloTTFTEntry), keptEntry("max_concurrency", f.maxConcEntry),
	}, append(f.lengthFields.kept(),
		keptEntry("warmup", f.warmupEntry), keptEntry("seed", f.seedEntry), keptEntry("timeout", f.timeoutEntry))...)
}

func (f *capacityForm) check() (int, int, error) {
	p, err := f.plan()
	return p.InputTokens, p.OutputTokens, err
}

func (f *capacityForm) summary() string {
	p, _ := f.plan()
	return fmt.Sprintf("Capacity: concurrency doubling from 1 up to %d until a level misses per-user ≥ %s tok/s or TTFT p95 ≤ %s ms, then bisection; max(20, 3 × users) requests a level, %d input and %d output tokens. Kept in the history; never published.",
		p.MaxConcurrency, trimFloat(p.UserTPS), trimFloat(p.TTFTP95Ms), p.InputTokens, p.OutputTokens)
}

func (f *capacityForm) run(model string, simulated bool) (planRun, error) {
	return formRun(f.s, model, f.plan, func(p *setup.CapacityPlan) { p.Model, p.Simulated = model, simulated },
		engine.RunCapacity, func(r *results.CapacityResult) plans.Doc { return plans.NewCapacity(r) },
		func(r *results.CapacityResult) (string, *results.Detection) { return r.Model, r.Local.Detection })
}
