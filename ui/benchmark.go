package ui

import (
	"errors"
	"fmt"
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
	"github.com/kovara/desktop/storage"
)

// The plans the Benchmark place runs, by the titles it offers them under
// (plans.Kind.Title).
var (
	planKovara   = plans.KovaraMethod.Title
	planStages   = plans.ByID(results.PlanStages).Title
	planSpecDec  = plans.ByID(results.PlanSpecDec).Title
	planCapacity = plans.ByID(results.PlanCapacity).Title
	planContext  = plans.ByID(results.PlanContext).Title
)

// Manifest choices besides the recent files.
const (
	manifestNone = "None — protocol test"
	manifestOpen = "Open kovara.yaml…"
	maxRecent    = 6
)

// BenchmarkScreen is the Benchmark place: the setup form, then the live
// run, then its result, one at a time.
type BenchmarkScreen struct {
	u       *App
	content *fyne.Container // holds the current view

	setup fyne.CanvasObject

	endpointSelect *widget.Select
	modelSelect    *widget.Select
	models         modelState // what the Model field knows of the endpoint
	planSelect     *widget.Select
	usersEntry     *formEntry
	quickCheck     *widget.Check
	stagesForm     *widget.Form
	manifestSelect *widget.Select
	manifestCard   *widget.Card
	profileSelect  *widget.Select
	inputEntry     *formEntry
	outputEntry    *formEntry
	levelsEntry    *formEntry
	requestsEntry  *formEntry
	warmupEntry    *formEntry
	seedEntry      *formEntry
	timeoutEntry   *formEntry
	repeatEntry    *formEntry
	// like is the run "Run again like this" filled the form from; it
	// holds while the form still asks for that run's plan.
	like      *results.LikeRef
	likePlan  engine.Plan
	likeName  string
	planNote  *widget.Label
	runButton *widget.Button
	// failNote is why the last run could not run; it stays under the
	// plan until the person changes the form, so an update the app makes
	// on its own (the model listing arriving) does not replace it.
	// listing is set while such an update runs.
	failNote string
	listing  bool
	// The capacity plan's service level and its most users.
	sloUserEntry *formEntry
	sloTTFTEntry *formEntry
	maxConcEntry *formEntry
	capacityForm *widget.Form
	// The context plan's depths, repeats and users.
	depthsEntry       *formEntry
	repeatsEntry      *formEntry
	contextUsersEntry *formEntry
	contextForm       *widget.Form

	levelsForm *widget.Form     // prompt and answer lengths
	inputItem  *widget.FormItem // the prompt length (not for speculative decoding)
	outputItem *widget.FormItem
	concForm   *widget.Form // the concurrency levels
	// Each plan keeps its own lengths, levels, requests and timeout: switching
	// plans shows the new plan's values (its defaults the first time),
	// never the previous plan's.
	fields       map[string]planFields
	shownPlan    string
	manifest     *storage.Manifest // nil for a protocol test
	lastManifest string            // the select's value before "Open…"

	live        *LiveView
	result      *ResultView
	running     *runState // nil when no benchmark is in flight
	shownResult bool      // a plan's result view is showing (stages, specdec)
}

func newBenchmarkScreen(u *App) *BenchmarkScreen {
	s := &BenchmarkScreen{u: u}
	s.endpointSelect = widget.NewSelect(nil, s.onEndpoint)
	s.modelSelect = widget.NewSelect(nil, func(string) { s.revalidate() })
	s.planSelect = widget.NewSelect(plans.Titles(), func(string) { s.onPlan() })
	s.usersEntry = newFormEntry(s.u)
	s.usersEntry.SetText(fmt.Sprint(engine.DefaultUsers))
	s.usersEntry.Validator = countCheck("users", 1)
	s.usersEntry.OnChanged = func(string) { s.revalidate() }
	s.quickCheck = widget.NewCheck("Quick mode (128-token answers, 64 in the many-user stage, 2,000-token prefill): a smoke test, not the plan's numbers", func(bool) { s.revalidate() })
	s.manifestSelect = widget.NewSelect(nil, s.onManifest)
	s.manifestCard = widget.NewCard("", "", widget.NewLabel(""))
	s.manifestCard.Hide()
	s.profileSelect = widget.NewSelect(nil, s.onProfile)
	s.profileSelect.PlaceHolder = "(no manifest)"
	s.profileSelect.Disable()

	d := setup.DefaultPlan()
	entry := func(text string, check func(string) error) *formEntry {
		e := newFormEntry(s.u)
		e.SetText(text)
		e.Validator = check
		e.OnChanged = func(string) { s.revalidate() }
		return e
	}
	s.inputEntry = entry(fmt.Sprint(d.InputTokens), countCheck("input tokens", 1))
	s.outputEntry = entry(fmt.Sprint(d.OutputTokens), countCheck("output tokens", 1))
	s.levelsEntry = entry(engine.FormatLevels(d.Concurrency), func(v string) error { _, err := engine.ParseLevels(v); return err })
	s.requestsEntry = entry(fmt.Sprint(d.Requests), countCheck("requests", 1))
	s.warmupEntry = entry(fmt.Sprint(d.Warmup), countCheck("warmup", 0))
	s.seedEntry = entry("", func(v string) error { _, _, err := engine.ParseSeed(v); return err })
	s.seedEntry.SetPlaceHolder("new for each run")
	s.timeoutEntry = entry(trimFloat(d.Timeout.Seconds()), func(v string) error { _, err := engine.ParseTimeout(v); return err })
	s.repeatEntry = entry("1", func(v string) error { _, err := parseRepeat(v); return err })
	s.sloUserEntry = entry(trimFloat(engine.DefaultSLOUserTPS), positiveNumber("per-user tok/s"))
	s.sloTTFTEntry = entry(trimFloat(engine.DefaultSLOTTFTP95Ms), positiveNumber("TTFT p95"))
	s.maxConcEntry = entry(fmt.Sprint(engine.DefaultCapacityMax), countCheck("most concurrent users", 1))
	s.planNote = widget.NewLabel("")
	s.planNote.Wrapping = fyne.TextWrapWord
	s.runButton = widget.NewButton("Run", s.onRun)
	s.runButton.Importance = widget.HighImportance

	main := widget.NewForm(
		widget.NewFormItem("Endpoint", s.endpointSelect),
		widget.NewFormItem("Model", s.modelSelect),
		widget.NewFormItem("Plan", s.planSelect),
		widget.NewFormItem("Manifest", s.manifestSelect),
		widget.NewFormItem("Profile", s.profileSelect),
	)
	s.stagesForm = widget.NewForm(
		widget.NewFormItem("Users (many-user stage)", s.usersEntry),
		widget.NewFormItem("", s.quickCheck),
	)
	s.stagesForm.Hide()
	s.capacityForm = widget.NewForm(
		widget.NewFormItem("Per-user tok/s, at least", s.sloUserEntry),
		widget.NewFormItem("TTFT p95, at most (ms)", s.sloTTFTEntry),
		widget.NewFormItem("Most concurrent users", s.maxConcEntry),
	)
	s.capacityForm.Hide()
	cd := engine.DefaultContextPlan()
	s.depthsEntry = entry("", func(v string) error { _, err := parseDepthsField(v); return err })
	s.depthsEntry.SetPlaceHolder("from the server's context: 0, 1k, 2k, 4k … (or a list: 1k,8k; the short prompt 0 always comes first)")
	s.repeatsEntry = entry(fmt.Sprint(cd.Repeats), countCheck("repeats", 1))
	s.contextUsersEntry = entry(fmt.Sprint(cd.Users), countCheck("users", 1))
	s.contextForm = widget.NewForm(
		widget.NewFormItem("Depths (tokens)", s.depthsEntry),
		widget.NewFormItem("Repeats at each depth", s.repeatsEntry),
		widget.NewFormItem("Users at once", s.contextUsersEntry),
	)
	s.contextForm.Hide()
	s.inputItem = widget.NewFormItem("Input tokens", s.inputEntry)
	s.outputItem = widget.NewFormItem("Output tokens", s.outputEntry)
	levels := widget.NewForm(s.inputItem, s.outputItem)
	s.concForm = widget.NewForm(widget.NewFormItem("Concurrency levels", s.levelsEntry))
	advanced := widget.NewForm(
		widget.NewFormItem("Requests per level", s.requestsEntry),
		widget.NewFormItem("Warmup requests", s.warmupEntry),
		widget.NewFormItem("Seed", s.seedEntry),
		widget.NewFormItem("Timeout (s)", s.timeoutEntry),
		widget.NewFormItem("Repeat (runs in a row)", s.repeatEntry),
	)
	acc := widget.NewAccordion(widget.NewAccordionItem("Advanced settings", advanced))
	s.setup = container.NewVScroll(container.NewPadded(container.NewVBox(
		widget.NewLabelWithStyle("New benchmark", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		main,
		s.manifestCard,
		s.stagesForm,
		s.capacityForm,
		s.contextForm,
		levels,
		s.concForm,
		acc,
		s.planNote,
		container.NewHBox(s.runButton),
	)))
	s.content = container.NewStack(s.setup)
	s.levelsForm = levels
	s.fields = map[string]planFields{}
	s.planSelect.SetSelected(planKovara)
	s.refreshEndpoints()
	s.refreshManifests("")
	s.revalidate()
	return s
}

func positiveNumber(field string) func(string) error {
	return func(v string) error { _, err := engine.ParsePositive(field, v); return err }
}

func countCheck(field string, min int) func(string) error {
	return func(v string) error { _, err := engine.ParseCount(field, v, min); return err }
}

// refreshEndpoints lists the simulator and the saved endpoints, keeping
// the current choice when it still exists.
func (s *BenchmarkScreen) refreshEndpoints() {
	names := []string{SimulatorName}
	saved, _ := s.u.endpoints.List()
	for _, e := range saved {
		names = append(names, e.Name)
	}
	cur := s.endpointSelect.Selected
	s.endpointSelect.Options = names
	s.endpointSelect.Refresh()
	switch {
	case slices.Contains(names, cur):
		s.listModels(cur) // its address or key may have changed
	case slices.Contains(names, s.u.fyne.Preferences().String(prefLastEndpoint)):
		s.endpointSelect.SetSelected(s.u.fyne.Preferences().String(prefLastEndpoint))
	default:
		s.endpointSelect.SetSelected(SimulatorName)
	}
}

func (s *BenchmarkScreen) selectEndpoint(name string) { s.endpointSelect.SetSelected(name) }

// recentManifests are the manifest files opened before, newest first.
func (s *BenchmarkScreen) recentManifests() []string {
	return s.u.fyne.Preferences().StringList(prefRecentManifests)
}

func (s *BenchmarkScreen) refreshManifests(selected string) {
	opts := []string{manifestNone}
	opts = append(opts, s.recentManifests()...)
	opts = append(opts, manifestOpen)
	s.manifestSelect.Options = opts
	s.manifestSelect.Refresh()
	if selected == "" {
		selected = manifestNone
	}
	s.lastManifest = selected
	s.manifestSelect.SetSelected(selected)
}

func (s *BenchmarkScreen) onManifest(choice string) {
	switch choice {
	case manifestOpen:
		s.openManifestDialog()
	case manifestNone, "":
		s.useManifest(nil)
		s.lastManifest = manifestNone
	default:
		if choice == s.lastManifest && s.manifest != nil {
			return
		}
		s.loadManifest(choice)
	}
}

func (s *BenchmarkScreen) openManifestDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			s.manifestSelect.SetSelected(s.lastManifest) // cancelled
			return
		}
		path := r.URI().Path()
		r.Close()
		s.loadManifest(path)
	}, s.u.win)
	d.SetFilter(fstorage.NewExtensionFileFilter([]string{".yaml", ".yml"}))
	if recent := s.recentManifests(); len(recent) > 0 {
		if dir, err := repository.ParseURI("file://" + filepath.Dir(recent[0])); err == nil {
			if l, err := fstorage.ListerForURI(dir); err == nil {
				d.SetLocation(l)
			}
		}
	}
	d.Show()
}

// loadManifest reads a kovara.yaml; a bad one is explained and the choice
// goes back to what it was.
func (s *BenchmarkScreen) loadManifest(path string) {
	m, err := storage.LoadManifest(path)
	if err != nil {
		s.u.showProblem("This manifest cannot be used", err.Error())
		s.refreshManifests(s.lastManifest)
		return
	}
	recent := []string{path}
	for _, p := range s.recentManifests() {
		if p != path && len(recent) < maxRecent {
			recent = append(recent, p)
		}
	}
	s.u.fyne.Preferences().SetStringList(prefRecentManifests, recent)
	s.useManifest(m)
	s.refreshManifests(path)
}

// useManifest shows m's summary and profiles (nil: a protocol test).
func (s *BenchmarkScreen) useManifest(m *storage.Manifest) {
	s.manifest = m
	if m == nil {
		s.manifestCard.Hide()
		s.profileSelect.Options = nil
		s.profileSelect.ClearSelected()
		s.profileSelect.Disable()
		s.revalidate()
		return
	}
	s.manifestCard.SetTitle(manifestTitle(m))
	s.manifestCard.SetSubTitle("revision " + m.Revision)
	s.manifestCard.SetContent(widget.NewLabel(strings.Join(m.Summary(), "\n")))
	s.manifestCard.Show()
	if slices.Contains(s.modelSelect.Options, m.Model.ID) {
		s.modelSelect.SetSelected(m.Model.ID) // the model the manifest describes
	}
	s.profileSelect.Options = m.ProfileNames()
	s.profileSelect.Enable()
	s.profileSelect.Refresh()
	if p, err := m.SelectProfile(""); err == nil && p != "" {
		s.profileSelect.SetSelected(p)
	} else {
		s.profileSelect.ClearSelected()
		s.planNote.SetText("Choose a profile.")
	}
	s.revalidate()
}

func manifestTitle(m *storage.Manifest) string {
	if m.Name != "" {
		return m.Name
	}
	return filepath.Base(m.Path)
}

// onPlan shows the settings the chosen plan takes.
func (s *BenchmarkScreen) onPlan() {
	if s.levelsForm == nil {
		return
	}
	plan := s.planSelect.Selected
	showIf := func(o fyne.CanvasObject, show bool) {
		if show {
			o.Show()
		} else {
			o.Hide()
		}
	}
	s.swapFields(plan)
	showIf(s.stagesForm, plan == planStages)
	showIf(s.capacityForm, plan == planCapacity)
	showIf(s.contextForm, plan == planContext)
	showIf(s.levelsForm, plan != planStages)
	// Speculative decoding sends its own prompts: no prompt length.
	if items := s.lengthItems(plan); len(items) != len(s.levelsForm.Items) {
		s.levelsForm.Items = items
		s.levelsForm.Refresh()
	}
	showIf(s.concForm, plan != planStages && plan != planCapacity && plan != planContext)
	// The capacity plan chooses each level's requests itself; the context
	// plan sends its repeats.
	if plan == planCapacity || plan == planContext {
		s.requestsEntry.Disable()
	} else {
		s.requestsEntry.Enable()
	}
	if plan == planKovara {
		s.manifestSelect.Enable()
		if s.manifest != nil {
			s.profileSelect.Enable()
		}
	} else {
		s.manifestSelect.Disable()
		s.profileSelect.Disable()
	}
	s.revalidate()
}

// lengthItems are the length fields plan takes.
func (s *BenchmarkScreen) lengthItems(plan string) []*widget.FormItem {
	if plan == planSpecDec || plan == planContext {
		return []*widget.FormItem{s.outputItem} // they size their own prompts
	}
	return []*widget.FormItem{s.inputItem, s.outputItem}
}

// planFields are the form's texts a plan keeps for itself.
type planFields struct{ input, output, levels, requests, timeout string }

// defaultFields are a plan's own defaults.
func defaultFields(plan string) planFields {
	d := setup.DefaultPlan()
	f := planFields{input: fmt.Sprint(d.InputTokens), output: fmt.Sprint(d.OutputTokens),
		levels: engine.FormatLevels(d.Concurrency), requests: fmt.Sprint(d.Requests),
		timeout: trimFloat(plans.ByTitle(plan).Timeout.Seconds())}
	switch plan {
	case planSpecDec:
		sd := engine.DefaultSpecDecPlan()
		f.output, f.levels, f.requests = fmt.Sprint(sd.MaxTokens), engine.FormatLevels(sd.Levels), ""
	case planCapacity:
		c := engine.DefaultCapacityPlan()
		f.input, f.output, f.requests = fmt.Sprint(c.InputTokens), fmt.Sprint(c.OutputTokens), ""
	case planContext:
		f.output, f.requests = fmt.Sprint(engine.DefaultContextPlan().OutputTokens), ""
	}
	return f
}

// swapFields keeps the shown plan's texts and shows plan's.
func (s *BenchmarkScreen) swapFields(plan string) {
	if plan == s.shownPlan {
		return
	}
	if s.shownPlan != "" {
		s.fields[s.shownPlan] = planFields{s.inputEntry.Text, s.outputEntry.Text, s.levelsEntry.Text, s.requestsEntry.Text, s.timeoutEntry.Text}
	}
	f, ok := s.fields[plan]
	if !ok {
		f = defaultFields(plan)
	}
	s.shownPlan = plan
	// The requests field means "each level's requests" for the Kovara
	// plan; the others choose per level when it is empty.
	switch plan {
	case planSpecDec:
		s.requestsEntry.Validator = optionalCount("requests")
		s.requestsEntry.SetPlaceHolder("every prompt, at least 2 per user")
	case planCapacity:
		s.requestsEntry.Validator = nil
		s.requestsEntry.SetPlaceHolder("chosen per level: max(20, 3 × users)")
	case planContext:
		s.requestsEntry.Validator = nil
		s.requestsEntry.SetPlaceHolder("the repeats at each depth")
	default:
		s.requestsEntry.Validator = countCheck("requests", 1)
		s.requestsEntry.SetPlaceHolder("")
	}
	s.inputEntry.SetText(f.input)
	s.outputEntry.SetText(f.output)
	s.levelsEntry.SetText(f.levels)
	s.requestsEntry.SetText(f.requests)
	s.timeoutEntry.SetText(f.timeout)
}

// optionalCount accepts an empty field (the plan chooses) or a count.
func optionalCount(field string) func(string) error {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		_, err := engine.ParseCount(field, v, 1)
		return err
	}
}

// onProfile fills the lengths and levels from the chosen profile.
func (s *BenchmarkScreen) onProfile(name string) {
	if s.manifest == nil || name == "" {
		return
	}
	p, _ := s.planFromForm()
	if err := s.manifest.ApplyProfile(&p, name); err != nil {
		s.planNote.SetText(err.Error())
		return
	}
	s.inputEntry.SetText(fmt.Sprint(p.InputTokens))
	s.outputEntry.SetText(fmt.Sprint(p.OutputTokens))
	s.levelsEntry.SetText(engine.FormatLevels(p.Concurrency))
	s.requestsEntry.SetText(fmt.Sprint(p.Requests))
	s.warmupEntry.SetText(fmt.Sprint(p.Warmup))
	s.revalidate()
}

// lengthsFromForm reads the prompt and answer lengths into p, the fields
// the Kovara and capacity plans share; it returns what is wrong.
func (s *BenchmarkScreen) lengthsFromForm(p *engine.Plan) []error {
	var errs []error
	var err error
	if p.InputTokens, err = engine.ParseCount("input tokens", s.inputEntry.Text, 1); err != nil {
		errs = append(errs, err)
	}
	if p.OutputTokens, err = engine.ParseCount("output tokens", s.outputEntry.Text, 1); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// runSettingsFromForm reads warmup, seed and timeout into p, as
// lengthsFromForm does the lengths.
func (s *BenchmarkScreen) runSettingsFromForm(p *engine.Plan) []error {
	var errs []error
	var err error
	if p.Warmup, err = engine.ParseCount("warmup", s.warmupEntry.Text, 0); err != nil {
		errs = append(errs, err)
	}
	if p.Seed, p.FixedSeed, err = engine.ParseSeed(s.seedEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.Timeout, err = engine.ParseTimeout(s.timeoutEntry.Text); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// planFromForm reads the form; the error lists every field that is wrong.
func (s *BenchmarkScreen) planFromForm() (engine.Plan, error) {
	p := setup.DefaultPlan()
	var errs []error
	var err error
	errs = append(errs, s.lengthsFromForm(&p)...)
	if p.Concurrency, err = engine.ParseLevels(s.levelsEntry.Text); err != nil {
		errs = append(errs, fmt.Errorf("concurrency levels: %w", err))
	}
	if p.Requests, err = engine.ParseCount("requests", s.requestsEntry.Text, 1); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.runSettingsFromForm(&p)...)
	if len(errs) == 0 {
		if s.manifest != nil {
			if s.profileSelect.Selected == "" {
				errs = append(errs, errors.New("choose one of the manifest's profiles"))
			} else if c, cerr := s.manifest.Conditions(s.profileSelect.Selected); cerr != nil {
				errs = append(errs, cerr)
			} else {
				p.Conditions = &c
			}
		}
		if err := p.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}

// revalidate says what is wrong with the form, if anything, and enables
// Run only for a plan that can run.
func (s *BenchmarkScreen) revalidate() {
	if s.runButton == nil || s.levelsForm == nil {
		return // still building the form
	}
	if !s.listing {
		s.failNote = ""
	}
	defer func() {
		if s.failNote != "" {
			s.planNote.SetText(s.failNote)
		}
	}()
	var err error
	// The Kovara method and the capacity plan send prompts and answers of
	// fixed lengths: 0 for the others.
	input, output := 0, 0
	switch s.planSelect.Selected {
	case planStages:
		_, err = s.stagesFromForm()
	case planSpecDec:
		_, err = s.specDecFromForm()
	case planCapacity:
		var p engine.CapacityPlan
		p, err = s.capacityFromForm()
		input, output = p.InputTokens, p.OutputTokens
	case planContext:
		var p engine.ContextPlan
		p, err = s.contextFromForm()
		// Depths given are held to the context like any plan's prompts,
		// with room for the follow-up; chosen from the server's context,
		// they fit by construction.
		if err == nil && s.endpointSelect.Selected != "" {
			if why := s.u.contextPlanProblem(s.endpointSelect.Selected, s.chosenModel(), p); why != "" {
				err = errors.New(why)
			}
		}
	default:
		var p engine.Plan
		p, err = s.planFromForm()
		input, output = p.InputTokens, p.OutputTokens
	}
	if err == nil {
		var n int
		n, err = parseRepeat(s.repeatEntry.Text)
		if err == nil && n > 1 && s.planSelect.Selected != planKovara {
			err = errors.New("repeat runs the Kovara method only: set it to 1 for this plan")
		}
	}
	if err == nil && s.endpointSelect.Selected == "" {
		err = errNoEndpoint
	}
	if err == nil {
		err = s.modelProblem()
	}
	if err != nil {
		s.planNote.SetText(err.Error())
		s.runButton.Disable()
		return
	}
	if input > 0 {
		if why := s.u.contextProblem(s.endpointSelect.Selected, s.chosenModel(), input, output); why != "" {
			s.planNote.SetText(why)
			s.runButton.Disable()
			return
		}
	}
	s.planNote.SetText(planSummary(s) + s.modelNote() + s.likeNote())
	s.runButton.Enable()
}

// maxRepeat bounds the Repeat field, as kovara-bench's --repeat.
const maxRepeat = 10

// parseRepeat reads the Repeat field: 1 to maxRepeat runs.
func parseRepeat(v string) (int, error) {
	n, err := engine.ParseCount("repeat", v, 1)
	if err == nil && n > maxRepeat {
		err = fmt.Errorf("repeat %d is too many: give 1 to %d runs", n, maxRepeat)
	}
	return n, err
}

// fillLike fills the form with the plan a run's records ran (Run again
// like this), fresh seed, and keeps which run it follows.
func (s *BenchmarkScreen) fillLike(id, name string, f *results.File) error {
	if s.running != nil {
		return errors.New("a benchmark is running; run this one again once it ends")
	}
	p, err := engine.PlanLike(f)
	if err != nil {
		return err
	}
	s.backToSetup()
	s.planSelect.SetSelected(planKovara)
	s.manifestSelect.SetSelected(manifestNone)
	s.inputEntry.SetText(fmt.Sprint(p.InputTokens))
	s.outputEntry.SetText(fmt.Sprint(p.OutputTokens))
	s.levelsEntry.SetText(engine.FormatLevels(p.Concurrency))
	s.requestsEntry.SetText(fmt.Sprint(p.Requests))
	s.warmupEntry.SetText(fmt.Sprint(p.Warmup))
	s.seedEntry.SetText("")
	s.timeoutEntry.SetText(trimFloat(p.Timeout.Seconds()))
	s.like, s.likePlan = &results.LikeRef{ID: id, CreatedAt: f.CreatedAt}, p
	s.likeName = name
	// Its own endpoint when it is still saved; the model follows when
	// the endpoint's listing arrives (pickModel).
	if e := f.Local.EndpointName; e != "" && e != s.endpointSelect.Selected && slices.Contains(s.endpointSelect.Options, e) {
		s.endpointSelect.SetSelected(e)
	}
	if slices.Contains(s.modelSelect.Options, p.Model) {
		s.modelSelect.SetSelected(p.Model)
	}
	s.revalidate()
	return nil
}

// likeFollowed is the run the form still follows, nil once a field of
// its plan was changed: then it is a plan of its own.
func (s *BenchmarkScreen) likeFollowed() *results.LikeRef {
	if s.like == nil || s.planSelect.Selected != planKovara {
		return nil
	}
	p, err := s.planFromForm()
	l := s.likePlan
	if err != nil || p.Conditions != nil || p.InputTokens != l.InputTokens || p.OutputTokens != l.OutputTokens ||
		!slices.Equal(p.Concurrency, l.Concurrency) || p.Requests != l.Requests || p.Warmup != l.Warmup {
		return nil
	}
	return s.like
}

// likeNote says which run the form repeats, if any.
func (s *BenchmarkScreen) likeNote() string {
	if s.likeFollowed() == nil {
		return ""
	}
	note := fmt.Sprintf(" Runs again like %s (its model, lengths, levels, requests, warmup and timeout, with fresh prompts); Compare opens on both when it ends.", s.likeName)
	if m := s.chosenModel(); m != "" && m != s.likePlan.Model {
		note += fmt.Sprintf(" It asked for the model %s; this asks for %s.", s.likePlan.Model, m)
	}
	return note
}

func planSummary(s *BenchmarkScreen) string {
	switch s.planSelect.Selected {
	case planStages:
		p, _ := s.stagesFromForm()
		mode := "full"
		if p.Quick {
			mode = "quick, not protocol numbers"
		}
		return fmt.Sprintf("Three stages (%s): single-user decode on three prompts, a cold prefill, then %d users at once. Kept in the history; never published.", mode, p.Users)
	case planSpecDec:
		p, _ := s.specDecFromForm()
		return fmt.Sprintf("Speculative decoding: %d levels, natural stops on representative prompts, acceptance from the server's counters. Not publishable.", len(p.Levels))
	case planContext:
		p, _ := s.contextFromForm()
		depths := "depths from the server's context (0, then doubling from 1k)"
		switch d := s.u.checkedDetection(s.endpointSelect.Selected, s.chosenModel()); {
		case len(p.Depths) > 0:
			depths = "depths " + engine.FormatDepths(engine.ContextDepths(p, nil)) // the short prompt first, always
		case d != nil && d.ContextLength > 0:
			// What will run, from the context the last check read.
			depths = fmt.Sprintf("depths %s (what fits the server's context of %d tokens at the endpoint's last check)",
				engine.FormatDepths(engine.ContextDepths(p, d)), d.ContextLength)
		}
		return fmt.Sprintf("Context: %s; at each, %d × %d %s with a fresh prompt and a %d-token answer, then a cached follow-up. Kept in the history; never published.",
			depths, p.Repeats, p.Users, results.Plural(p.Users, "user", "users at once"), p.OutputTokens)
	case planCapacity:
		p, _ := s.capacityFromForm()
		return fmt.Sprintf("Capacity: concurrency doubling from 1 up to %d until a level misses per-user ≥ %s tok/s or TTFT p95 ≤ %s ms, then bisection; max(20, 3 × users) requests a level, %d input and %d output tokens. Kept in the history; never published.",
			p.MaxConcurrency, trimFloat(p.UserTPS), trimFloat(p.TTFTP95Ms), p.InputTokens, p.OutputTokens)
	}
	p, _ := s.planFromForm()
	kind := "Protocol test"
	if p.Conditions != nil {
		kind = "Hardware run (" + p.Conditions.Profile + ")"
	}
	return fmt.Sprintf("%s: %d levels × %d requests, %d input and %d output tokens.",
		kind, len(p.Concurrency), p.Requests, p.InputTokens, p.OutputTokens)
}

// show swaps the Benchmark place's view.
func (s *BenchmarkScreen) show(o fyne.CanvasObject) {
	s.content.Objects = []fyne.CanvasObject{o}
	s.content.Refresh()
}

// backToSetup returns to the form, keeping what was typed.
func (s *BenchmarkScreen) backToSetup() {
	s.show(s.setup)
	s.revalidate()
}

// stagesFromForm reads the three-stage plan's settings.
func (s *BenchmarkScreen) stagesFromForm() (engine.StagesPlan, error) {
	p := engine.DefaultStagesPlan()
	users, err := engine.ParseCount("users", s.usersEntry.Text, 1)
	if err != nil {
		return p, err
	}
	p.Users, p.Quick = users, s.quickCheck.Checked
	if p.Timeout, err = engine.ParseTimeout(s.timeoutEntry.Text); err != nil {
		return p, err
	}
	return p, p.Validate()
}

// specDecFromForm reads the speculative-decoding plan's settings from the
// levels fields.
func (s *BenchmarkScreen) specDecFromForm() (engine.SpecDecPlan, error) {
	p := engine.DefaultSpecDecPlan()
	var err error
	if p.Levels, err = engine.ParseLevels(s.levelsEntry.Text); err != nil {
		return p, fmt.Errorf("concurrency levels: %w", err)
	}
	if strings.TrimSpace(s.requestsEntry.Text) != "" { // empty: the plan chooses per level
		if p.Requests, err = engine.ParseCount("requests", s.requestsEntry.Text, 1); err != nil {
			return p, err
		}
	}
	if p.MaxTokens, err = engine.ParseCount("output tokens", s.outputEntry.Text, 1); err != nil {
		return p, err
	}
	if p.Timeout, err = engine.ParseTimeout(s.timeoutEntry.Text); err != nil {
		return p, err
	}
	return p, p.Validate()
}

// capacityFromForm reads the capacity plan: the service level and the
// most users, and the Kovara fields it shares (lengths, warmup, seed,
// timeout).
func (s *BenchmarkScreen) capacityFromForm() (engine.CapacityPlan, error) {
	p := engine.DefaultCapacityPlan()
	var errs []error
	var err error
	if p.UserTPS, err = engine.ParsePositive("per-user tok/s", s.sloUserEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.TTFTP95Ms, err = engine.ParsePositive("TTFT p95", s.sloTTFTEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.MaxConcurrency, err = engine.ParseCount("most concurrent users", s.maxConcEntry.Text, 1); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.lengthsFromForm(&p.Plan)...)
	errs = append(errs, s.runSettingsFromForm(&p.Plan)...)
	if len(errs) == 0 {
		if err := p.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}

// parseDepthsField reads the Depths field: empty chooses them from the
// server's context (nil), else engine.ParseDepths.
func parseDepthsField(v string) ([]int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return engine.ParseDepths(v)
}

// contextFromForm reads the context plan's settings.
func (s *BenchmarkScreen) contextFromForm() (engine.ContextPlan, error) {
	p := engine.DefaultContextPlan()
	var errs []error
	var err error
	if p.Depths, err = parseDepthsField(s.depthsEntry.Text); err != nil {
		errs = append(errs, fmt.Errorf("depths: %w", err))
	}
	if p.OutputTokens, err = engine.ParseCount("output tokens", s.outputEntry.Text, 2); err != nil {
		errs = append(errs, err)
	}
	if p.Repeats, err = engine.ParseCount("repeats", s.repeatsEntry.Text, 1); err != nil {
		errs = append(errs, err)
	}
	if p.Users, err = engine.ParseCount("users", s.contextUsersEntry.Text, 1); err != nil {
		errs = append(errs, err)
	}
	if p.Seed, p.FixedSeed, err = engine.ParseSeed(s.seedEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.Timeout, err = engine.ParseTimeout(s.timeoutEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		if err := p.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}
