package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
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

// planForm is one plan's own settings on the Benchmark form, under the
// endpoint, model and plan every plan shares; each keeps its fields (and
// so their values) for itself.
type planForm interface {
	// content is the form's own fields.
	content() fyne.CanvasObject
	// check reads the form and says what is wrong with it, if anything,
	// and the prompt and answer lengths to hold to the server's context
	// (0 for a plan that sizes its own prompts).
	check() (input, output int, err error)
	// summary says in a sentence what Run will do.
	summary() string
	// run is the plan read from the form for this model.
	run(model string, simulated bool) (planRun, error)
	// kept is every field of the form, as kept for the next start
	// (formstate.go; TestEveryFormFieldIsKept holds each form to it).
	kept() []keptField
}

// endpointsWatcher is a form that offers the saved endpoints itself (the
// answers plan's other setting): told when the list changes.
type endpointsWatcher interface{ endpointsChanged() }

// formOf is a plan's form constructor as planScreens holds it.
func formOf[F planForm](newForm func(s *BenchmarkScreen) F) func(s *BenchmarkScreen) planForm {
	return func(s *BenchmarkScreen) planForm { return newForm(s) }
}

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
	forms          map[string]planForm // by plan id
	formBox        *fyne.Container     // the chosen plan's form
	// Each plan's form, for what is its own (run again like this, a
	// manifest's model) and for the tests.
	kovara   *kovaraForm
	stages   *stagesForm
	specDec  *specDecForm
	capacity *capacityForm
	context  *contextForm
	tune     *tuneForm

	planNote  *widget.Label
	runButton *widget.Button
	// labels is the page's one label column (aligned).
	labels labelColumn
	// failNote is why the last run could not run; it stays under the
	// plan until the person changes the form, so an update the app makes
	// on its own (the model listing arriving) does not replace it.
	// listing is set while such an update runs.
	failNote string
	listing  bool

	live        *LiveView
	result      *ResultView
	running     *runState // nil when no benchmark is in flight
	shownResult bool      // a plan's result view is showing
	// saver keeps the form for the next start (formstate.go); nil until
	// the form is restored. defaults are each plan's fields as its form
	// opens, before anything is restored: what is not kept.
	saver    *formSaver
	defaults map[string]storage.PlanFormState
}

func newBenchmarkScreen(u *App) *BenchmarkScreen {
	s := &BenchmarkScreen{u: u, forms: map[string]planForm{}}
	s.endpointSelect = widget.NewSelect(nil, s.onEndpoint)
	s.modelSelect = widget.NewSelect(nil, func(string) { s.revalidate() })
	s.planSelect = widget.NewSelect(plans.Titles(), func(string) { s.onPlan() })
	s.planNote = widget.NewLabel("")
	s.planNote.Wrapping = fyne.TextWrapWord
	s.runButton = widget.NewButton("Run", s.onRun)
	s.runButton.Importance = widget.HighImportance
	for _, k := range plans.All {
		ps, ok := planScreens[k.ID]
		if !ok {
			// A plan registered without its screens cannot be offered
			// (TestEveryPlanHasAFormAndAView names it too).
			panic(fmt.Sprintf("ui: plan %q has no entry in planScreens", k.ID))
		}
		s.forms[k.ID] = ps.form(s)
	}
	main := s.aligned(widget.NewForm(
		widget.NewFormItem("Endpoint", s.endpointSelect),
		widget.NewFormItem("Model", s.modelSelect),
		widget.NewFormItem("Plan", s.planSelect),
	))
	s.formBox = container.NewStack()
	// The fields scroll; what Run will do and Run itself stay in a bar
	// below them, so a tall form (advanced settings open on a 1024×640
	// screen) never puts Run below the fold.
	s.setup = container.NewBorder(nil,
		container.NewVBox(widget.NewSeparator(), container.NewPadded(container.NewVBox(
			s.planNote,
			container.NewHBox(s.runButton, s.kovara.quickButton),
		))),
		nil, nil,
		pageScroll(container.NewPadded(container.NewVBox(
			widget.NewLabelWithStyle("New benchmark", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
			main,
			s.formBox,
		))),
	)
	s.content = container.NewStack(s.setup)
	s.planSelect.SetSelected(planKovara)
	s.refreshEndpoints()
	s.kovara.refreshManifests("")
	s.restoreForm() // and revalidates
	return s
}

// kind is the plan chosen.
func (s *BenchmarkScreen) kind() *plans.Kind {
	if k := plans.ByTitle(s.planSelect.Selected); k != nil {
		return k
	}
	return plans.KovaraMethod
}

// form is the chosen plan's form.
func (s *BenchmarkScreen) form() planForm { return s.forms[s.kind().ID] }

// entry is a field of a plan's form: checked as typed, and the form
// checked again on every change.
func (s *BenchmarkScreen) entry(text string, check func(string) error) *formEntry {
	e := newFormEntry(s.u)
	e.SetText(text)
	e.Validator = check
	e.OnChanged = func(string) { s.revalidate() }
	return e
}

// advanced is a form's own advanced settings, folded away, their fields
// lined up with the page's (aligned).
func (s *BenchmarkScreen) advanced(items ...*widget.FormItem) fyne.CanvasObject {
	return widget.NewAccordion(widget.NewAccordionItem("Advanced settings", s.aligned(widget.NewForm(items...))))
}

// aligned puts a form of the Benchmark page on the page's one label
// column: Fyne sizes each form's labels to its own longest, so the
// fields of the forms one under another (endpoint, the plan's fields,
// its advanced settings) started at different places, and moved when
// another plan was chosen. Every form of every plan shares the column,
// so the Endpoint field stays put whatever the plan.
func (s *BenchmarkScreen) aligned(f *widget.Form) fyne.CanvasObject {
	a := &alignedForm{column: &s.labels, form: f}
	s.labels = append(s.labels, a)
	return container.New(a, f)
}

// labelColumn is the forms sharing a label column.
type labelColumn []*alignedForm

// width is the column's: the widest form's own.
func (c labelColumn) width() float32 {
	var w float32
	for _, a := range c {
		w = max(w, a.labelWidth())
	}
	return w
}

// alignedForm is a layout that insets its form by what its own label
// column lacks of the shared one; a form's labels are right-aligned, so
// the labels end, and the fields start, at the same place in every form.
type alignedForm struct {
	column *labelColumn
	form   *widget.Form
	own    float32 // the form's own label column, once measured
}

// labelWidth is the form's own label column: its widest label as the
// form draws it (bold rich text).
func (a *alignedForm) labelWidth() float32 {
	if a.own == 0 {
		for _, it := range a.form.Items {
			l := widget.NewRichTextWithText(it.Text)
			l.Segments[0].(*widget.TextSegment).Style.TextStyle.Bold = true
			a.own = max(a.own, l.MinSize().Width)
		}
	}
	return a.own
}

func (a *alignedForm) inset() float32 { return a.column.width() - a.labelWidth() }

func (a *alignedForm) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	in := a.inset()
	for _, o := range objects {
		o.Move(fyne.NewPos(in, 0))
		o.Resize(fyne.NewSize(size.Width-in, size.Height))
	}
}

func (a *alignedForm) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objects {
		m = m.Max(o.MinSize())
	}
	return fyne.NewSize(m.Width+a.inset(), m.Height)
}

// formBase is what the plans' forms beyond the Kovara method share: the
// screen, the form's own fields laid out (box), and its timeout field.
type formBase struct {
	s            *BenchmarkScreen
	box          fyne.CanvasObject
	timeoutEntry *formEntry
}

// init sets the form on s, with its plan's timeout field (timeoutItem),
// which it returns for the form's advanced settings.
func (b *formBase) init(s *BenchmarkScreen, plan string) *widget.FormItem {
	b.s = s
	var item *widget.FormItem
	b.timeoutEntry, item = s.timeoutItem(plans.ByID(plan))
	return item
}

func (b *formBase) content() fyne.CanvasObject { return b.box }

// noLengths is check for a plan that sizes its own prompts: nothing to
// hold to the server's context, only whether the form reads.
func noLengths[P any](_ P, err error) (input, output int, _ error) { return 0, 0, err }

// timeoutItem is a plan's per-request timeout field, starting from its
// plan's own (plans.Kind.Timeout: 900 s for the plans whose long answers
// a slow server takes minutes over).
func (s *BenchmarkScreen) timeoutItem(k *plans.Kind) (*formEntry, *widget.FormItem) {
	e := s.entry(trimFloat(k.Timeout.Seconds()), func(v string) error { _, err := engine.ParseTimeout(v); return err })
	return e, widget.NewFormItem("Timeout (s)", e)
}

// seedItem is a plan's prompt seed field: empty for new prompts each run.
func (s *BenchmarkScreen) seedItem() (*formEntry, *widget.FormItem) {
	e := s.entry("", func(v string) error { _, _, err := engine.ParseSeed(v); return err })
	e.SetPlaceHolder("new for each run")
	return e, widget.NewFormItem("Seed", e)
}

// formError joins what is wrong with a plan's fields; only a plan whose
// fields all read is checked as a whole (validate).
func formError(errs []error, validate func() error) error {
	if len(errs) == 0 {
		return validate()
	}
	return errors.Join(errs...)
}

// readSeed reads a seed field into a plan's seed, and says what is wrong.
func readSeed(e *formEntry, seed *int64, fixed *bool, errs []error) []error {
	var err error
	if *seed, *fixed, err = engine.ParseSeed(e.Text); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// readCount reads a count field of at least min into a plan's count, and
// says what is wrong in errs.
func readCount(e *formEntry, field string, min int, n *int, errs []error) []error {
	var err error
	if *n, err = engine.ParseCount(field, e.Text, min); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// readTimeout reads a timeout field into a plan's timeout, and says what
// is wrong.
func readTimeout(e *formEntry, to *time.Duration, errs []error) []error {
	var err error
	if *to, err = engine.ParseTimeout(e.Text); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// formRun is a plan form's run: the plan the form reads (read), aimed at
// model (aim sets the plan's model and whether it runs against the
// simulator), run by planRunOf.
func formRun[P, R any](s *BenchmarkScreen, model string, read func() (P, error), aim func(*P),
	run func(context.Context, P, setup.Endpoint, engine.Observer) (*R, error), doc func(*R) plans.Doc, detected func(*R) (string, *results.Detection)) (planRun, error) {
	p, err := read()
	if err != nil {
		return nil, err
	}
	aim(&p)
	return planRunOf(s, p, model, run, doc, detected), nil
}

// planRunOf runs a plan with run and shows its result (as doc makes it a
// plan document) in the Benchmark place; detected, when given, says what
// the run found of the endpoint (the model it ran and its detection), which
// is remembered as the endpoint's last check (with model, the one asked
// for, when the run gave no result).
func planRunOf[P, R any](s *BenchmarkScreen, p P, model string, run func(context.Context, P, setup.Endpoint, engine.Observer) (*R, error),
	doc func(*R) plans.Doc, detected func(*R) (string, *results.Detection)) planRun {
	return func(ctx context.Context, ep setup.Endpoint, obs engine.Observer) func() {
		r, err := run(ctx, p, ep, obs)
		show := func() { s.runFailed(err) }
		if r != nil {
			if d := doc(r); engine.Kept(err, d.Measured()) {
				show = s.shows(d)
			}
		}
		return func() {
			if detected != nil {
				var d *results.Detection
				if r != nil {
					model, d = detected(r)
				}
				s.u.rememberCheck(ep, model, d, err)
			}
			show()
		}
	}
}

func positiveNumber(field string) func(string) error {
	return func(v string) error { _, err := engine.ParsePositive(field, v); return err }
}

func countCheck(field string, min int) func(string) error {
	return func(v string) error { _, err := engine.ParseCount(field, v, min); return err }
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
	for _, f := range s.forms {
		if w, ok := f.(endpointsWatcher); ok {
			w.endpointsChanged()
		}
	}
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

// onPlan shows the chosen plan's form.
func (s *BenchmarkScreen) onPlan() {
	if s.formBox == nil {
		return // still building the screen
	}
	s.formBox.Objects = []fyne.CanvasObject{s.form().content()}
	if s.endpointSelect.Selected == SimulatorName && !slices.Equal(s.modelSelect.Options, s.kind().Demo().Models) {
		s.listModels(SimulatorName) // another plan's demo serves other models
	}
	s.relayout()
	s.revalidate()
}

// relayout lays the whole page out again after a part of it changed its
// height: a shorter form than the last left the last one's height as a
// gap above Run, and a manifest's card shown under the Profile was drawn
// over the plan's summary and Run.
func (s *BenchmarkScreen) relayout() {
	if s.setup != nil {
		s.setup.Refresh()
	}
}

// revalidate says what is wrong with the form, if anything, and enables
// Run only for a plan that can run.
func (s *BenchmarkScreen) revalidate() {
	if s.runButton == nil || s.formBox == nil {
		return // still building the form
	}
	s.keepForm()
	if !s.listing {
		s.failNote = ""
	}
	defer func() {
		if s.failNote != "" {
			s.sayPlan(s.failNote, true)
		}
	}()
	// Run again like a run holds while the form asks for it; the quick
	// check is offered by the Kovara plan's summary only.
	s.kovara.syncLike()
	s.kovara.quickButton.Hide()
	f := s.form()
	input, output, err := f.check()
	if err == nil && s.endpointSelect.Selected == "" {
		err = errNoEndpoint
	}
	if own, ok := f.(interface{ ownModels() bool }); err == nil && !(ok && own.ownModels()) {
		err = s.modelProblem()
	}
	if err == nil && input > 0 {
		if why := s.u.contextProblem(s.endpointSelect.Selected, s.chosenModel(), input, output); why != "" {
			err = errors.New(why)
		}
	}
	if err != nil {
		s.sayPlan(err.Error(), true)
		s.runButton.Disable()
		return
	}
	note := s.modelNote()
	if st, ok := f.(interface{ startsServer() bool }); ok && st.startsServer() {
		note = "" // the server is not up yet: the plan starts it
	}
	s.sayPlan(f.summary()+note, false)
	s.runButton.Enable()
}

// sayPlan puts text under the plan: in the warning colour when it says
// why the plan cannot run (or could not), plainly when it is the plan's
// summary.
func (s *BenchmarkScreen) sayPlan(text string, warn bool) {
	imp := widget.MediumImportance
	if warn {
		imp = widget.WarningImportance
	}
	if s.planNote.Importance != imp {
		s.planNote.Importance = imp
		s.planNote.Refresh()
	}
	s.planNote.SetText(text)
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
	// Its own endpoint when it is still saved, and its model when listed
	// (else it follows when the endpoint's listing arrives: pickModel),
	// before the form is armed: changing them after disarms it.
	if e := f.Local.EndpointName; e != "" && e != s.endpointSelect.Selected && slices.Contains(s.endpointSelect.Options, e) {
		s.endpointSelect.SetSelected(e)
	}
	if slices.Contains(s.modelSelect.Options, p.Model) {
		s.modelSelect.SetSelected(p.Model)
	}
	s.kovara.fill(id, name, f.CreatedAt, p)
	s.revalidate()
	return nil
}

// lengthFields are the prompt and answer length fields the Kovara and
// capacity plans share the shape of.
type lengthFields struct {
	inputEntry, outputEntry *formEntry
}

func (s *BenchmarkScreen) lengthFields(input, output int) (lengthFields, []*widget.FormItem) {
	l := lengthFields{
		inputEntry:  s.entry(fmt.Sprint(input), countCheck("input tokens", 1)),
		outputEntry: s.entry(fmt.Sprint(output), countCheck("output tokens", 1)),
	}
	return l, []*widget.FormItem{widget.NewFormItem("Input tokens", l.inputEntry), widget.NewFormItem("Output tokens", l.outputEntry)}
}

// kept is the lengths as kept for the next start.
func (l lengthFields) kept() []keptField {
	return []keptField{keptEntry("input_tokens", l.inputEntry), keptEntry("output_tokens", l.outputEntry)}
}

// read puts the lengths into p, returning what is wrong.
func (l lengthFields) read(p *setup.KovaraPlan) []error {
	errs := readCount(l.inputEntry, "input tokens", 1, &p.InputTokens, nil)
	return readCount(l.outputEntry, "output tokens", 1, &p.OutputTokens, errs)
}
