package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/storage/repository"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// rateForm is the rate plan's form: the offered rates (or a sweep), how
// requests arrive, the cap on requests in flight, the requests at each
// rate, the lengths, the service level goodput is judged by, and the
// person's own load (a prompts file, a shared system prompt, turns).
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
	// Your own load (setup.Workload), folded away under its own heading;
	// its labels are no wider than the page's label column already is,
	// so no other form's fields move.
	promptsEntry *formEntry
	browseButton *widget.Button
	skipBadCheck *widget.Check
	sharedLoadFields
	ownLoad       *widget.Accordion
	ownLoadFields *widget.Form
	// Replay a trace (form_replay.go), in place of the rates.
	replayFields
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
	f.ownLoad = f.newOwnLoad()
	replay := s.newReplayFields(&f.replayFields, "the rates above", f.onTraceFile)
	f.onTraceFile()
	f.box = container.NewVBox(
		s.aligned(f.fields),
		f.ownLoad,
		replay,
		s.advanced(widget.NewFormItem("Sweep up to (req/s)", f.sweepMaxEntry), widget.NewFormItem("Warmup requests", f.warmupEntry), seed, timeout),
	)
	return f
}

// newOwnLoad is the "Your own load" section, folded like the advanced
// settings so the form still fits a 1024×640 window: empty fields are the
// method's synthetic prompt.
func (f *rateForm) newOwnLoad() *widget.Accordion {
	s := f.s
	f.promptsEntry = s.entry("", nil)
	f.promptsEntry.SetPlaceHolder("none: the synthetic prompts")
	f.promptsEntry.OnChanged = func(string) { f.onPromptsFile(); s.revalidate() }
	f.browseButton = widget.NewButton("Browse…", f.openPromptsDialog)
	f.skipBadCheck = widget.NewCheck("Skip malformed lines", func(bool) { s.revalidate() })
	f.sharedLoadFields = newSharedLoadFields(s, "none: no system prompt the users share")
	f.onPromptsFile()
	f.ownLoadFields = widget.NewForm(append([]*widget.FormItem{
		widget.NewFormItem("Prompts file", container.NewBorder(nil, nil, nil, f.browseButton, f.promptsEntry)),
		widget.NewFormItem("", f.skipBadCheck),
	}, f.sharedLoadFields.items()...)...)
	return widget.NewAccordion(widget.NewAccordionItem("Your own load", s.aligned(f.ownLoadFields)))
}

// onPromptsFile lets malformed lines be skipped only when there is a
// file to skip them in.
func (f *rateForm) onPromptsFile() {
	if strings.TrimSpace(f.promptsEntry.Text) != "" {
		f.skipBadCheck.Enable()
	} else {
		f.skipBadCheck.Disable()
	}
}

// openPromptsDialog chooses the prompts file, starting in the folder of
// the one typed.
func (f *rateForm) openPromptsDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return // cancelled
		}
		path := r.URI().Path()
		r.Close()
		f.promptsEntry.SetText(path)
	}, f.s.u.win)
	if cur := strings.TrimSpace(f.promptsEntry.Text); cur != "" {
		if dir, err := repository.ParseURI("file://" + filepath.Dir(cur)); err == nil {
			if l, err := fstorage.ListerForURI(dir); err == nil {
				d.SetLocation(l)
			}
		}
	}
	d.Show()
}

// optionalCountFrom accepts an empty field (the default) or a count of
// at least min.
func optionalCountFrom(field string, min int) func(string) error {
	return func(v string) error {
		var n int
		return readOptionalCount(v, field, min, &n)
	}
}

// readOptionalCount reads a count of at least min into n, 0 when the
// field is empty.
func readOptionalCount(v, field string, min int, n *int) error {
	if strings.TrimSpace(v) == "" {
		*n = 0
		return nil
	}
	var err error
	*n, err = engine.ParseCount(field, v, min)
	return err
}

// workload reads "Your own load"; a prompts file that is not there is
// said now, not when the run starts.
func (f *rateForm) workload(errs []error) (setup.Workload, []error) {
	w := setup.Workload{PromptsFile: strings.TrimSpace(f.promptsEntry.Text)}
	w.SkipBad = w.PromptsFile != "" && f.skipBadCheck.Checked
	errs = f.sharedLoadFields.read(&w, errs)
	if w.PromptsFile != "" {
		switch info, err := os.Stat(w.PromptsFile); {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("the prompts file %s does not exist", w.PromptsFile))
		case err != nil:
			errs = append(errs, fmt.Errorf("the prompts file: %w", err))
		case info.IsDir():
			errs = append(errs, fmt.Errorf("the prompts file %s is a folder: choose a JSONL or ShareGPT JSON file", w.PromptsFile))
		}
	}
	return w, errs
}

// workloadWords says the workload in the result's words
// (results.Workload.Words); a prompts file is named by its file, which
// the form has not read yet.
func workloadWords(w setup.Workload) string {
	rw := &results.Workload{SharedPrefix: w.SharedPrefix, Turns: w.Turns}
	if w.SharedPrefix > 0 {
		rw.PrefixGroups = w.Groups()
	}
	if w.PromptsFile == "" {
		return rw.Words()
	}
	file := "your prompts from " + filepath.Base(w.PromptsFile)
	if w.SkipBad {
		file += ", malformed lines skipped"
	}
	if more := rw.Words(); more != "" {
		file += ", " + more
	}
	return file
}

// kept is the form's fields as kept for the next start: the arrivals by
// their setup.Arrival…, not the list's words. "Your own load" put back
// unfolds, so a load that is not the synthetic prompt is seen before Run.
func (f *rateForm) kept() []keptField {
	arrival := keptField{key: "arrival", w: f.arrivalSelect, get: f.arrival, set: func(v string) {
		if l, ok := rateArrivalLabels[v]; ok {
			f.arrivalSelect.SetSelected(l)
		}
	}}
	fields := []keptField{
		keptEntry("rates", f.ratesEntry), arrival, keptEntry("burstiness", f.burstEntry), keptEntry("max_in_flight", f.inFlightEntry),
		keptEntry("requests", f.requestsEntry), keptEntry("input_tokens", f.inputEntry), keptEntry("output_tokens", f.outputEntry),
		keptEntry("slo_ttft", f.sloTTFTEntry), keptEntry("slo_tpot", f.sloTPOTEntry),
		keptEntry("sweep_max", f.sweepMaxEntry), keptEntry("warmup", f.warmupEntry), keptEntry("seed", f.seedEntry), keptEntry("timeout", f.timeoutEntry),
	}
	own := append([]keptField{keptEntry("prompts_file", f.promptsEntry), keptCheck("skip_bad", f.skipBadCheck)}, f.sharedLoadFields.kept()...)
	for i, k := range own {
		set := k.set
		own[i].set = func(v string) {
			set(v)
			if v != keptNo {
				f.ownLoad.Open(0)
			}
		}
	}
	return append(append(fields, own...), f.keptReplay()...)
}

// rateFormOf is the screen's rate form.
func (s *BenchmarkScreen) rateFormOf() *rateForm {
	f, _ := s.forms[results.PlanRate].(*rateForm)
	return f
}

// onArrival lets burstiness be typed only for gamma arrivals, the only
// ones it shapes, and not while a trace gives the arrivals.
func (f *rateForm) onArrival() {
	if f.arrival() == setup.ArrivalGamma && !f.replaying() {
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
	// A trace's requests come at their recorded times, in place of the
	// rates (which the form keeps, greyed, for when it is taken away).
	if p.Replay, errs = f.replay(errs); p.Replay != nil {
		p.Rates, p.Sweep = nil, false
	} else if p.Rates, p.Sweep, err = setup.ParseRates(f.ratesEntry.Text); err != nil {
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
	p.Workload, errs = f.workload(errs)
	return p, formError(errs, p.Validate)
}

// check holds the longest prompt to the server's context: the system
// prompt and, in a conversation's last turn, every turn before it (as
// the run's own check counts them). A prompts file's lengths are its
// own, so the run checks those.
func (f *rateForm) check() (int, int, error) {
	p, err := f.plan()
	w := p.Workload
	if w.PromptsFile != "" || p.Replay != nil { // a trace's lengths are its own too
		return 0, 0, err
	}
	return p.InputTokens + w.ExtraTokens(p.InputTokens, p.OutputTokens), p.OutputTokens, err
}

func (f *rateForm) summary() string {
	p, _ := f.plan()
	if p.Replay != nil {
		return f.replaySummary(p)
	}
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
	lengths := fmt.Sprintf("%d input and %d output tokens", p.InputTokens, p.OutputTokens)
	if w := workloadWords(p.Workload); w != "" {
		lengths = w + fmt.Sprintf(" (%d-token questions, %d-token answers)", p.InputTokens, p.OutputTokens)
		if p.Workload.PromptsFile != "" { // each record is its whole question
			lengths = w + fmt.Sprintf(" (%d-token answers where a prompt sets none)", p.OutputTokens)
		}
	}
	return fmt.Sprintf("Rate: %s; %d requests at each, %s arrivals, at most %d in flight, %s; latency from each request's intended send time; %s. Kept in the history; never published.",
		rates, p.Requests, arrivals, p.MaxInFlight, lengths, slo)
}

func (f *rateForm) run(model string, simulated bool) (planRun, error) {
	return formRun(f.s, model, f.plan, func(p *setup.RatePlan) { p.Model, p.Simulated = model, simulated },
		engine.RunRate, func(r *results.RateResult) plans.Doc { return plans.NewRate(r) },
		func(r *results.RateResult) (string, *results.Detection) { return r.Model, &r.Engine })
}
