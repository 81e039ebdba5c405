package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/storage/repository"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// Manifest choices besides the recent files.
const (
	manifestNone = "None — protocol test"
	// manifestHint says what a protocol test is, under the manifest picker.
	manifestHint = "None makes a protocol test: how this endpoint answers, with no kovara.yaml stating the hardware it runs on."
	// profileHint says what a profile is, under its picker.
	profileHint  = "One of the manifest's named settings (lengths, levels, requests); choosing one fills them in."
	manifestOpen = "Open kovara.yaml…"
	maxRecent    = 6
)

// kovaraForm is the Kovara method's form: a manifest (a hardware run) or
// none (a protocol test), the lengths, the levels, the requests, and
// Repeat; "Run again like this" fills it from a run.
type kovaraForm struct {
	s              *BenchmarkScreen
	box            fyne.CanvasObject
	manifestSelect *widget.Select
	manifestCard   *widget.Card
	profileSelect  *widget.Select
	// manifestForm holds the manifest and profile pickers (setEnabled).
	manifestForm *widget.Form
	lengthFields
	levelsEntry   *formEntry
	requestsEntry *formEntry
	warmupEntry   *formEntry
	seedEntry     *formEntry
	timeoutEntry  *formEntry
	repeatEntry   *formEntry
	// sloTTFTEntry and sloTPOTEntry are the service level goodput is
	// judged by, each request on its own; empty: not judged.
	sloTTFTEntry *formEntry
	sloTPOTEntry *formEntry
	// sharedLoadFields are the levels' workload (a shared prefix, its
	// groups, conversations); empty: the method's own prompts.
	sharedLoadFields
	manifest     *storage.Manifest // nil for a protocol test
	lastManifest string            // the select's value before "Open…"
	// like is the run "Run again like this" filled the form from: it
	// arms the next run only, said on the form with a way out (likeBar),
	// and is dropped once that run starts or the endpoint, the model or a
	// field of the plan changes (syncLike), never armed again by fields
	// that happen to match. likeEndpoint is the endpoint it was armed on.
	like         *results.LikeRef
	likePlan     setup.KovaraPlan
	likeName     string
	likeEndpoint string
	likeModel    string // the model chosen when it was armed ("": none yet)
	likeBar      *fyne.Container
	likeLabel    *widget.Label
	likeCancel   *widget.Button
	// compareLike, on the result of a run again like another, compares
	// the two (nil before one).
	compareLike *widget.Button
	// quickButton offers a quick check when the plan is long (planEstimate).
	quickButton *widget.Button
}

func newKovaraForm(s *BenchmarkScreen) *kovaraForm {
	f := &kovaraForm{s: s}
	d := setup.DefaultPlan()
	f.manifestSelect = widget.NewSelect(nil, f.onManifest)
	f.manifestCard = widget.NewCard("", "", widget.NewLabel(""))
	f.manifestCard.Hide()
	f.profileSelect = widget.NewSelect(nil, f.onProfile)
	f.profileSelect.PlaceHolder = "(choose a manifest first)"
	f.profileSelect.Disable()
	var lengths []*widget.FormItem
	f.lengthFields, lengths = s.lengthFields(d.InputTokens, d.OutputTokens)
	f.levelsEntry = s.entry(engine.FormatLevels(d.Concurrency), func(v string) error { _, err := engine.ParseLevels(v); return err })
	f.requestsEntry = s.entry(fmt.Sprint(d.Requests), countCheck("requests", 1))
	f.warmupEntry = s.entry(fmt.Sprint(d.Warmup), countCheck("warmup", 0))
	var seed, timeout *widget.FormItem
	f.seedEntry, seed = s.seedItem()
	f.timeoutEntry, timeout = s.timeoutItem(plans.KovaraMethod)
	f.repeatEntry = s.entry("1", func(v string) error { _, err := parseRepeat(v); return err })
	f.sloTTFTEntry = s.entry("", optionalPositive("TTFT limit"))
	f.sloTTFTEntry.SetPlaceHolder("not judged")
	f.sloTPOTEntry = s.entry("", optionalPositive("TPOT limit"))
	f.sloTPOTEntry.SetPlaceHolder("not judged")
	f.sharedLoadFields = newSharedLoadFields(s, "none: the method's own prompts")
	f.likeLabel = widget.NewLabel("")
	f.likeLabel.Wrapping = fyne.TextWrapWord
	f.likeCancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { f.clearLike(); s.revalidate() })
	f.likeBar = container.NewBorder(nil, nil, nil, f.likeCancel, f.likeLabel)
	f.likeBar.Hide()
	f.quickButton = f.newQuickButton()
	// The two words a newcomer meets here, each said beside its picker.
	manifestItem := widget.NewFormItem("Manifest", f.manifestSelect)
	manifestItem.HintText = manifestHint
	profileItem := widget.NewFormItem("Profile", f.profileSelect)
	profileItem.HintText = profileHint
	f.manifestForm = widget.NewForm(manifestItem, profileItem)
	f.box = container.NewVBox(
		f.likeBar,
		s.aligned(f.manifestForm),
		f.manifestCard,
		s.aligned(widget.NewForm(append(lengths, widget.NewFormItem("Concurrency levels", f.levelsEntry))...)),
		s.advanced(append([]*widget.FormItem{
			widget.NewFormItem("Requests per level", f.requestsEntry),
			widget.NewFormItem("Warmup requests", f.warmupEntry),
			seed, timeout,
			widget.NewFormItem("Repeat (runs in a row)", f.repeatEntry),
			widget.NewFormItem("Goodput: TTFT at most (ms)", f.sloTTFTEntry),
			widget.NewFormItem("Goodput: TPOT at most (ms)", f.sloTPOTEntry),
		}, f.sharedLoadFields.items()...)...),
	)
	return f
}

func (f *kovaraForm) content() fyne.CanvasObject { return f.box }

// kept is the form's fields as kept for the next start: the manifest by
// its file and its profile first, as choosing them fills the lengths and
// levels, which are put back after them as typed. A manifest that no
// longer reads leaves a protocol test.
func (f *kovaraForm) kept() []keptField {
	manifest := keptField{key: "manifest", w: f.manifestSelect,
		get: func() string {
			if f.manifest == nil {
				return ""
			}
			return f.manifest.Path
		},
		set: func(path string) { _ = f.useManifestFile(path) },
	}
	fields := append([]keptField{manifest, keptSelect("profile", f.profileSelect)}, f.lengthFields.kept()...)
	fields = append(fields,
		keptEntry("concurrency", f.levelsEntry), keptEntry("requests", f.requestsEntry), keptEntry("warmup", f.warmupEntry),
		keptEntry("seed", f.seedEntry), keptEntry("timeout", f.timeoutEntry), keptEntry("repeat", f.repeatEntry),
		keptEntry("slo_ttft", f.sloTTFTEntry), keptEntry("slo_tpot", f.sloTPOTEntry))
	return append(fields, f.sharedLoadFields.kept()...)
}

// check holds the longest prompt to the server's context: with a
// workload, the system prompt and a conversation's earlier turns too (as
// the run's own check counts them).
func (f *kovaraForm) check() (int, int, error) {
	p, err := f.plan()
	if err == nil {
		_, err = parseRepeat(f.repeatEntry.Text)
	}
	return p.InputTokens + p.Workload.ExtraTokens(p.InputTokens, p.OutputTokens), p.OutputTokens, err
}

// plan reads the form; the error lists every field that is wrong.
func (f *kovaraForm) plan() (setup.KovaraPlan, error) {
	p := setup.DefaultPlan()
	errs := f.lengthFields.read(&p)
	errs = readParsed(f.levelsEntry, "concurrency levels", engine.ParseLevels, &p.Concurrency, errs)
	errs = readCount(f.requestsEntry, "requests", 1, &p.Requests, errs)
	errs = readCount(f.warmupEntry, "warmup", 0, &p.Warmup, errs)
	errs = readSeed(f.seedEntry, &p.Seed, &p.FixedSeed, errs)
	errs = readTimeout(f.timeoutEntry, &p.Timeout, errs)
	var err error
	if p.SLO.TTFTMs, err = readOptional("TTFT limit", f.sloTTFTEntry.Text); err != nil {
		errs = append(errs, err)
	}
	if p.SLO.TPOTMs, err = readOptional("TPOT limit", f.sloTPOTEntry.Text); err != nil {
		errs = append(errs, err)
	}
	errs = f.sharedLoadFields.read(&p.Workload, errs)
	if len(errs) == 0 {
		if f.manifest != nil {
			if f.profileSelect.Selected == "" {
				errs = append(errs, errors.New("choose one of the manifest's profiles"))
			} else if c, cerr := f.manifest.Conditions(f.profileSelect.Selected); cerr != nil {
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

func (f *kovaraForm) summary() string {
	p, _ := f.plan()
	kind := "Protocol test"
	if p.Conditions != nil {
		kind = "Hardware run (" + p.Conditions.Profile + ")"
	}
	repeat, _ := parseRepeat(f.repeatEntry.Text)
	slo := ""
	if p.SLO.Set() {
		slo = " Goodput: requests with " + (&results.RateSLO{TTFTMs: p.SLO.TTFTMs, TPOTMs: p.SLO.TPOTMs}).Words() + "."
	}
	if w := workloadWords(p.Workload); w != "" {
		slo += " The requests: " + w + ", so the run cannot be published."
	}
	return fmt.Sprintf("%s: %d %s × %d requests, %d input and %d output tokens.%s",
		kind, len(p.Concurrency), results.Plural(len(p.Concurrency), "level", "levels"), p.Requests, p.InputTokens, p.OutputTokens, slo) + f.planEstimate(p, max(repeat, 1))
}

func (f *kovaraForm) run(model string, simulated bool) (planRun, error) {
	p, err := f.plan()
	if err != nil {
		return nil, err
	}
	p.Model, p.Simulated = model, simulated
	repeat, _ := parseRepeat(f.repeatEntry.Text) // check let Run on only when it reads
	like, likeName := f.likeFollowed(), f.likeName
	f.clearLike() // it armed this run only
	f.compareLike = nil
	return f.runs(p, max(repeat, 1), like, likeName), nil
}

// runs is the Kovara method, saved after every level: repeat times in a
// row (one group, fresh prompts each), each run recording the run it
// follows when like is given. One run shows its result; several open
// Compare on them; a run again like another (likeName) shows its own
// result first, with a button that compares it with the run it repeats.
func (f *kovaraForm) runs(plan setup.KovaraPlan, repeat int, like *results.LikeRef, likeName string) planRun {
	s := f.s
	return func(ctx context.Context, ep setup.Endpoint, obs engine.Observer) func() {
		var (
			file         *results.File
			err, saveErr error
			id           string
			ids          []string
		)
		for _, g := range engine.RepeatGroup(repeat, time.Now()) {
			if g != nil {
				obs.Live.SetRepeat(g.Index, g.Of) // the whole-plan bar and time left are the group's
				s.u.do(func() {
					base, _, _ := strings.Cut(s.live.title.Text, " — ")
					s.live.title.SetText(fmt.Sprintf("%s — run %d of %d", base, g.Index, g.Of))
				})
			}
			mark := func(f *results.File) { f.Local.Group, f.Local.Like = g, like }
			cp := s.u.lib.Checkpoint()
			saveErr = nil
			obs.Checkpoint = func(f *results.File) { mark(f); saveErr = cp.Save(f) }
			if s.u.opts.Observe != nil {
				s.u.opts.Observe(&obs)
			}
			file, err = engine.Run(ctx, plan, ep, obs)
			id = ""
			if file != nil {
				mark(file)
				if saveErr = cp.Save(file); saveErr == nil {
					id = cp.ID() // else the result shown is not the one in the history
					ids = append(ids, id)
				}
			}
			if file == nil || err != nil || ctx.Err() != nil {
				break
			}
		}
		return func() {
			s.u.rememberCheck(ep, requestedModel(file, plan.Model), detectionOf(file), err)
			if file == nil {
				s.runFailed(err)
				return
			}
			s.showResult(file, id, err, saveErr)
			if like != nil && like.ID != "" && len(ids) > 0 {
				f.offerCompare(append([]string{like.ID}, ids...), likeName)
				return
			}
			if len(ids) >= 2 {
				s.u.compareRuns(ids[:min(len(ids), maxCompare)])
			}
		}
	}
}

// offerCompare puts "Compare with <the run repeated>" first among the
// shown result's buttons: the new run is seen on its own before Compare.
func (f *kovaraForm) offerCompare(ids []string, name string) {
	ids = ids[:min(len(ids), maxCompare)]
	b := widget.NewButton("Compare with "+name, func() { f.s.u.compareRuns(ids) })
	b.Importance = widget.HighImportance
	f.compareLike = b
	row := f.s.result.buttons
	row.Objects = append([]fyne.CanvasObject{b}, row.Objects...)
	row.Refresh()
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

// fill puts the plan a run ran into the form (Run again like this),
// with a fresh seed, and keeps which run it follows.
func (f *kovaraForm) fill(id, name, createdAt string, p setup.KovaraPlan) {
	f.manifestSelect.SetSelected(manifestNone)
	f.inputEntry.SetText(fmt.Sprint(p.InputTokens))
	f.outputEntry.SetText(fmt.Sprint(p.OutputTokens))
	f.levelsEntry.SetText(engine.FormatLevels(p.Concurrency))
	f.requestsEntry.SetText(fmt.Sprint(p.Requests))
	f.warmupEntry.SetText(fmt.Sprint(p.Warmup))
	f.seedEntry.SetText("")
	f.timeoutEntry.SetText(trimFloat(p.Timeout.Seconds()))
	w := p.Workload
	f.prefixEntry.SetText(countText(w.SharedPrefix, 0))
	f.groupsEntry.SetText(countText(w.PrefixGroups, 1))
	f.turnsEntry.SetText(countText(w.Turns, 1))
	f.like, f.likePlan, f.likeName = &results.LikeRef{ID: id, CreatedAt: createdAt}, p, name
	f.likeEndpoint, f.likeModel = f.s.endpointSelect.Selected, f.s.chosenModel()
	f.likeBar.Show()
	f.syncLike()
	f.s.relayout()
}

// clearLike drops the run the form was filled from: the next run is a
// plan of its own.
func (f *kovaraForm) clearLike() {
	f.like, f.likePlan, f.likeName, f.likeEndpoint, f.likeModel = nil, setup.KovaraPlan{}, "", "", ""
	if f.likeBar.Visible() {
		f.likeBar.Hide()
		f.s.relayout()
	}
}

// syncLike drops the run the form repeats once the form no longer asks
// for it (another plan, endpoint or model, a changed field); it is not
// armed again when the fields come back.
func (f *kovaraForm) syncLike() {
	if f.like == nil {
		return
	}
	if f.likeFollowed() == nil {
		f.clearLike()
		return
	}
	line := fmt.Sprintf("The next run repeats %s: its model, lengths, levels, requests, warmup and timeout, with fresh prompts. "+
		"Its result shows first, with a button to compare the two.", f.likeName)
	if m := f.s.chosenModel(); m != "" && m != f.likePlan.Model {
		line += fmt.Sprintf(" It asked for the model %s; this endpoint does not serve it, so this run asks for %s.", f.likePlan.Model, m)
	}
	f.likeLabel.SetText(line)
}

// likeFollowed is the run the form still repeats, nil once the endpoint,
// the model or a field of its plan is not that run's: then it is a plan
// of its own. A model not chosen yet (its listing on the way), or the one
// chosen when it was armed where the run's own is not served, is not a
// change.
func (f *kovaraForm) likeFollowed() *results.LikeRef {
	if f.like == nil || f.s.kind() != plans.KovaraMethod || f.s.endpointSelect.Selected != f.likeEndpoint {
		return nil
	}
	if m := f.s.chosenModel(); m != "" && m != f.likePlan.Model && m != f.likeModel {
		return nil // another model chosen since
	}
	p, err := f.plan()
	l := f.likePlan
	if err != nil || p.Conditions != nil || p.InputTokens != l.InputTokens || p.OutputTokens != l.OutputTokens ||
		!slices.Equal(p.Concurrency, l.Concurrency) || p.Requests != l.Requests || p.Warmup != l.Warmup || !sameWorkload(p.Workload, l.Workload) {
		return nil
	}
	return f.like
}

// sameWorkload: two workloads send the same requests (an empty field and
// its default are one).
func sameWorkload(a, b setup.Workload) bool {
	return a.SharedPrefix == b.SharedPrefix && a.Groups() == b.Groups() && a.Conversation() == b.Conversation()
}

// countText is an optional count's field: empty at or under its default.
func countText(n, def int) string {
	if n <= def {
		return ""
	}
	return fmt.Sprint(n)
}

// recentManifests are the manifest files opened before, newest first.
func (f *kovaraForm) recentManifests() []string {
	return f.s.u.fyne.Preferences().StringList(prefRecentManifests)
}

func (f *kovaraForm) refreshManifests(selected string) {
	opts := []string{manifestNone}
	opts = append(opts, f.recentManifests()...)
	opts = append(opts, manifestOpen)
	f.manifestSelect.Options = opts
	f.manifestSelect.Refresh()
	if selected == "" {
		selected = manifestNone
	}
	f.lastManifest = selected
	f.manifestSelect.SetSelected(selected)
}

func (f *kovaraForm) onManifest(choice string) {
	switch choice {
	case manifestOpen:
		f.openManifestDialog()
	case manifestNone, "":
		f.useManifest(nil)
		f.lastManifest = manifestNone
	default:
		if choice == f.lastManifest && f.manifest != nil {
			return
		}
		f.loadManifest(choice)
	}
}

func (f *kovaraForm) openManifestDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			f.manifestSelect.SetSelected(f.lastManifest) // cancelled
			return
		}
		path := r.URI().Path()
		r.Close()
		f.loadManifest(path)
	}, f.s.u.win)
	d.SetFilter(fstorage.NewExtensionFileFilter([]string{".yaml", ".yml"}))
	if recent := f.recentManifests(); len(recent) > 0 {
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
func (f *kovaraForm) loadManifest(path string) {
	if err := f.useManifestFile(path); err != nil {
		f.s.u.showProblem("This manifest cannot be used", err.Error())
		f.refreshManifests(f.lastManifest)
	}
}

// useManifestFile reads a kovara.yaml and uses it, first among the
// recent ones; a bad one changes nothing.
func (f *kovaraForm) useManifestFile(path string) error {
	m, err := storage.LoadManifest(path)
	if err != nil {
		return err
	}
	recent := []string{path}
	for _, p := range f.recentManifests() {
		if p != path && len(recent) < maxRecent {
			recent = append(recent, p)
		}
	}
	f.s.u.fyne.Preferences().SetStringList(prefRecentManifests, recent)
	f.useManifest(m)
	f.refreshManifests(path)
	return nil
}

// useManifest shows m's summary and profiles (nil: a protocol test).
func (f *kovaraForm) useManifest(m *storage.Manifest) {
	s := f.s
	f.manifest = m
	if m == nil {
		f.manifestCard.Hide()
		f.profileSelect.Options = nil
		f.profileSelect.ClearSelected()
		setEnabled(f.manifestForm, false, f.profileSelect)
		s.relayout()
		s.revalidate()
		return
	}
	f.manifestCard.SetTitle(manifestTitle(m))
	f.manifestCard.SetSubTitle("revision " + m.Revision)
	f.manifestCard.SetContent(widget.NewLabel(strings.Join(m.Summary(), "\n")))
	f.manifestCard.Show()
	if slices.Contains(s.modelSelect.Options, m.Model.ID) {
		s.modelSelect.SetSelected(m.Model.ID) // the model the manifest describes
	}
	f.profileSelect.Options = m.ProfileNames()
	setEnabled(f.manifestForm, true, f.profileSelect)
	f.profileSelect.Refresh()
	if p, err := m.SelectProfile(""); err == nil && p != "" {
		f.profileSelect.SetSelected(p)
	} else {
		f.profileSelect.ClearSelected()
		s.sayPlan("Choose a profile.", true)
	}
	s.relayout()
	s.revalidate()
}

func manifestTitle(m *storage.Manifest) string {
	if m.Name != "" {
		return m.Name
	}
	return filepath.Base(m.Path)
}

// onProfile fills the lengths and levels from the chosen profile.
func (f *kovaraForm) onProfile(name string) {
	if f.manifest == nil || name == "" {
		return
	}
	p, _ := f.plan()
	if err := f.manifest.ApplyProfile(&p, name); err != nil {
		f.s.sayPlan(err.Error(), true)
		return
	}
	f.inputEntry.SetText(fmt.Sprint(p.InputTokens))
	f.outputEntry.SetText(fmt.Sprint(p.OutputTokens))
	f.levelsEntry.SetText(engine.FormatLevels(p.Concurrency))
	f.requestsEntry.SetText(fmt.Sprint(p.Requests))
	f.warmupEntry.SetText(fmt.Sprint(p.Warmup))
	f.s.revalidate()
}
