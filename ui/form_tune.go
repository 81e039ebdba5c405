package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/internal/serverproc"
	"github.com/kovara/desktop/internal/shellwords"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// The settings comparison's form: the settings as rows (a name, how the
// server gets there, and the command, model or what to change by hand,
// with a Test that starts and stops a command once), the rounds, and the
// Kovara plan each run measures.

// How a row reaches its setting, as the form offers it.
var tuneHows = []struct{ label, how, hint string }{
	{"Command", setup.ByCommand, "the server's command line, e.g. llama-server -m /models/q4.gguf -np 8 --port 8080 (NAME=VALUE first for its environment; ssh HOST … first to start it on another machine)"},
	{"Model", setup.ByModel, "another model of the same server, by its name"},
	{"By hand", setup.ByHand, "what you change, e.g. restart Ollama with OLLAMA_NUM_PARALLEL=4"},
}

type tuneForm struct {
	s                *BenchmarkScreen
	box              fyne.CanvasObject
	rows             []*tuneRow
	rowsBox          *fyne.Container
	addButton        *widget.Button
	roundsEntry      *formEntry
	concurrencyEntry *formEntry
	requestsEntry    *formEntry
	lengths          lengthFields
	timeoutEntry     *formEntry
	startEntry       *formEntry
	answersCheck     *widget.Check
	testNote         *widget.Label
	// levelsForm holds the Kovara plan's fields, greyed with their
	// labels while a trace is replayed instead.
	levelsForm *widget.Form
	// Replay a trace (form_replay.go), in place of the Kovara plan's
	// levels.
	replayFields
}

// tuneRow is one setting.
type tuneRow struct {
	f            *tuneForm
	nameEntry    *formEntry
	howSelect    *widget.Select
	whatEntry    *formEntry
	testButton   *widget.Button
	removeButton *widget.Button
	// before is a command run before each of the setting's turns, on
	// this machine ("sudo nvidia-smi -pl 250"); beforeButton edits it.
	before       string
	beforeButton *widget.Button
	box          fyne.CanvasObject
}

func newTuneForm(s *BenchmarkScreen) *tuneForm {
	f := &tuneForm{s: s}
	d := setup.TuneDefaultPlan()
	f.rowsBox = container.NewVBox()
	f.addButton = widget.NewButton("Add a setting", func() { f.onAdd("", setup.ByCommand, "") })
	// The simulator's two quantisations, so Run shows a comparison at
	// once; a person's own server gets its own rows.
	for _, m := range sim.TuneDemo().Models {
		f.addRow(strings.TrimPrefix(m, "kovara-sim-8b-"), setup.ByModel, m)
	}
	f.roundsEntry = s.entry(fmt.Sprint(setup.TuneDefaultRounds), countCheck("rounds", 1))
	f.concurrencyEntry = s.entry(engine.FormatLevels(d.Concurrency), func(v string) error { _, err := engine.ParseLevels(v); return err })
	f.requestsEntry = s.entry(fmt.Sprint(d.Requests), countCheck("requests", 1))
	var lengthItems []*widget.FormItem
	f.lengths, lengthItems = s.lengthFields(d.InputTokens, d.OutputTokens)
	var timeout *widget.FormItem
	f.timeoutEntry, timeout = s.timeoutItem(plans.ByID(results.PlanTune))
	f.startEntry = s.entry("300", func(v string) error { _, err := engine.ParseTimeout(v); return err })
	f.answersCheck = widget.NewCheck("Check that the settings answer the same (10 fixed prompts at temperature 0)", func(bool) { s.revalidate() })
	f.answersCheck.SetChecked(true)
	f.testNote = widget.NewLabel("")
	f.testNote.Wrapping = fyne.TextWrapWord
	f.testNote.Hide()
	items := []*widget.FormItem{
		widget.NewFormItem("Rounds", f.roundsEntry),
		widget.NewFormItem("Concurrency", f.concurrencyEntry),
		widget.NewFormItem("Requests per level", f.requestsEntry),
	}
	f.levelsForm = widget.NewForm(append(items, lengthItems...)...)
	replay := s.newReplayFields(&f.replayFields, "a Kovara plan at the levels above", f.onTraceFile)
	f.onTraceFile()
	f.box = container.NewVBox(
		widget.NewLabel("Settings (the first is the one the others are compared with):"),
		f.rowsBox,
		container.NewHBox(f.addButton),
		f.testNote,
		s.aligned(f.levelsForm),
		replay,
		f.answersCheck,
		s.advanced(timeout, widget.NewFormItem("Server start-up (s)", f.startEntry)),
	)
	return f
}

func (f *tuneForm) content() fyne.CanvasObject { return f.box }

// onTraceFile greys the Kovara plan's levels while a trace is given: each
// run replays it instead.
func (f *tuneForm) onTraceFile() {
	f.enableUnless(f.concurrencyEntry, f.requestsEntry, f.lengths.inputEntry, f.lengths.outputEntry)
	f.levelsForm.Refresh() // Fyne greys a form's labels only as it refreshes
}

// addRow adds a setting's row.
func (f *tuneForm) addRow(name, how, what string) *tuneRow {
	r := &tuneRow{f: f}
	r.nameEntry = f.s.entry(name, nil)
	r.nameEntry.SetPlaceHolder("name")
	r.whatEntry = f.s.entry(what, nil)
	labels := make([]string, len(tuneHows))
	for i, h := range tuneHows {
		labels[i] = h.label
	}
	r.howSelect = widget.NewSelect(labels, func(string) { r.onHow() })
	r.testButton = widget.NewButton("Test", r.onTest)
	r.removeButton = widget.NewButton("Remove", func() { f.onRemove(r) })
	r.beforeButton = widget.NewButton("Before…", r.onBefore)
	for _, h := range tuneHows {
		if h.how == how {
			r.howSelect.SetSelected(h.label)
		}
	}
	left := container.NewHBox(container.NewGridWrap(fyne.NewSize(110, r.nameEntry.MinSize().Height), r.nameEntry), r.howSelect)
	r.box = container.NewBorder(nil, nil, left, container.NewHBox(r.beforeButton, r.testButton, r.removeButton), r.whatEntry)
	f.rows = append(f.rows, r)
	f.rowsBox.Add(r.box)
	f.refreshButtons()
	return r
}

// rowsState is the rows as typed, kept for the next start (the form's
// other fields are kept as every form's are: kept).
func (f *tuneForm) rowsState() *storage.TuneFormState {
	st := &storage.TuneFormState{}
	for _, r := range f.rows {
		st.Rows = append(st.Rows, storage.TuneFormRow{Name: r.nameEntry.Text, How: r.how(), What: r.whatEntry.Text, Before: r.before})
	}
	return st
}

// kept is the form's fields beside the rows, as kept for the next start.
func (f *tuneForm) kept() []keptField {
	return append([]keptField{keptEntry("rounds", f.roundsEntry), keptEntry("concurrency", f.concurrencyEntry), keptEntry("requests", f.requestsEntry)},
		append(append(f.lengths.kept(), keptEntry("timeout", f.timeoutEntry), keptEntry("start_timeout", f.startEntry), keptCheck("answers", f.answersCheck)), f.keptReplay()...)...)
}

// restoreRows puts back the rows of the last start; rows that could not
// be a comparison's (too few or too many) are left aside.
func (f *tuneForm) restoreRows(st storage.TuneFormState) {
	if n := len(st.Rows); n < setup.TuneMinSettings || n > setup.TuneMaxSettings {
		return
	}
	f.rows = nil
	f.rowsBox.RemoveAll()
	for _, row := range st.Rows {
		r := f.addRow(row.Name, row.How, row.What)
		r.whatEntry.SetText(row.What) // after its how, which clears a demo model from a command row
		r.setBefore(row.Before)
	}
}

// onAdd adds a setting (up to the most a comparison takes).
func (f *tuneForm) onAdd(name, how, what string) {
	if len(f.rows) >= setup.TuneMaxSettings {
		return
	}
	if name == "" {
		name = string(rune('A' + len(f.rows)))
	}
	f.addRow(name, how, what)
	f.s.revalidate()
}

// onRemove removes a setting (down to the fewest a comparison takes).
func (f *tuneForm) onRemove(r *tuneRow) {
	if len(f.rows) <= setup.TuneMinSettings {
		return
	}
	for i, x := range f.rows {
		if x == r {
			f.rows = append(f.rows[:i], f.rows[i+1:]...)
		}
	}
	f.rowsBox.Remove(r.box)
	f.refreshButtons()
	f.s.revalidate()
}

func (f *tuneForm) refreshButtons() {
	for _, r := range f.rows {
		if len(f.rows) <= setup.TuneMinSettings {
			r.removeButton.Disable()
		} else {
			r.removeButton.Enable()
		}
	}
	if len(f.rows) >= setup.TuneMaxSettings {
		f.addButton.Disable()
	} else {
		f.addButton.Enable()
	}
}

// onBefore asks for the command to run before each of the setting's
// turns.
func (r *tuneRow) onBefore() {
	e := widget.NewEntry()
	e.SetText(r.before)
	e.SetPlaceHolder("e.g. sudo nvidia-smi -pl 250 (empty: none)")
	items := []*widget.FormItem{widget.NewFormItem("Command", e)}
	d := dialog.NewForm("Before each turn of "+strings.TrimSpace(r.nameEntry.Text), "Keep", "Cancel", items, func(ok bool) {
		if ok {
			r.setBefore(strings.TrimSpace(e.Text))
		}
	}, r.f.s.u.win)
	d.Resize(fyne.NewSize(560, 180))
	d.Show()
}

func (r *tuneRow) setBefore(cmd string) {
	r.before = cmd
	r.beforeButton.SetText("Before…")
	if cmd != "" {
		r.beforeButton.SetText("Before ✓")
	}
	r.f.s.revalidate()
}

// how is the row's way to its setting (setup.By…).
func (r *tuneRow) how() string {
	for _, h := range tuneHows {
		if h.label == r.howSelect.Selected {
			return h.how
		}
	}
	return ""
}

func (r *tuneRow) onHow() {
	// A demo model's name is no command line or instruction.
	if r.how() != setup.ByModel && slices.Contains(sim.TuneDemo().Models, strings.TrimSpace(r.whatEntry.Text)) {
		r.whatEntry.SetText("")
	}
	for _, h := range tuneHows {
		if h.label == r.howSelect.Selected {
			r.whatEntry.SetPlaceHolder(h.hint)
		}
	}
	if r.how() == setup.ByHand {
		r.testButton.Disable()
	} else {
		r.testButton.Enable()
	}
	r.f.s.revalidate()
}

// setting is the row read as a setting.
func (r *tuneRow) setting() (setup.TuneSetting, error) {
	s := setup.TuneSetting{Name: strings.TrimSpace(r.nameEntry.Text), How: r.how(), Before: r.before}
	what := strings.TrimSpace(r.whatEntry.Text)
	switch s.How {
	case setup.ByCommand:
		env, cmd, err := shellwords.Command(what)
		if err != nil {
			return s, fmt.Errorf("setting %s: %w", s.Name, err)
		}
		s.Env, s.Command = env, cmd
	case setup.ByModel:
		s.Model = what
	case setup.ByHand:
		s.Instruction = what
	}
	return s, nil
}

// plan reads the comparison from the form.
func (f *tuneForm) plan() (setup.TunePlan, error) {
	p := setup.TunePlan{Inner: setup.TuneDefaultPlan()}
	var errs []error
	for _, r := range f.rows {
		s, err := r.setting()
		if err != nil {
			errs = append(errs, err)
		}
		p.Settings = append(p.Settings, s)
	}
	errs = readCount(f.roundsEntry, "rounds", 1, &p.Rounds, errs)
	levels, err := engine.ParseLevels(f.concurrencyEntry.Text)
	if err != nil {
		errs = append(errs, fmt.Errorf("concurrency: %w", err))
	}
	p.Inner.Concurrency = levels
	errs = readCount(f.requestsEntry, "requests", 1, &p.Inner.Requests, errs)
	errs = append(errs, f.lengths.read(&p.Inner)...)
	errs = readTimeout(f.timeoutEntry, &p.Inner.Timeout, errs)
	errs = readTimeout(f.startEntry, &p.StartTimeout, errs)
	p.NoAnswers = !f.answersCheck.Checked
	var r *setup.Replay
	if r, errs = f.replay(errs); r != nil {
		rp := setup.DefaultRatePlan()
		rp.Rates, rp.Sweep, rp.Replay = nil, false, r
		p.Replay = &rp
	}
	return p, formError(errs, p.Validate)
}

// check reads the form; the built-in simulator is one server the app
// runs itself, so only its models can be compared there.
func (f *tuneForm) check() (int, int, error) {
	f.ownRows()
	p, err := f.plan()
	if err == nil && f.s.endpointSelect.Selected == SimulatorName {
		for _, st := range p.Settings {
			if st.How == setup.ByCommand {
				err = fmt.Errorf("setting %s starts a server, but the built-in simulator is one the app runs itself: compare its models (kovara-sim-8b-q4, kovara-sim-8b-q8), or choose your endpoint to start your own server", st.Name)
				break
			}
		}
	}
	return p.Inner.InputTokens, p.Inner.OutputTokens, err
}

// startsServer: some setting starts the server, which is not up before
// Run, so the endpoint's listing said nothing of it.
func (f *tuneForm) startsServer() bool {
	for _, r := range f.rows {
		if r.how() == setup.ByCommand {
			return true
		}
	}
	return false
}

// ownRows turns the simulator's two models, untouched, into two empty
// command rows once an endpoint of the person's own is chosen: there the
// demo's model names mean nothing.
func (f *tuneForm) ownRows() {
	if f.s.endpointSelect.Selected == SimulatorName || f.s.endpointSelect.Selected == "" {
		return
	}
	demo := sim.TuneDemo().Models
	if len(f.rows) != len(demo) {
		return
	}
	for i, r := range f.rows {
		if r.how() != setup.ByModel || r.whatEntry.Text != demo[i] || r.before != "" {
			return
		}
	}
	for i, r := range f.rows {
		r.nameEntry.SetText(string(rune('A' + i)))
		r.howSelect.SetSelected(tuneHows[0].label) // clears the demo model (onHow)
	}
}

// ownModels: every setting names its model, so the form's Model field
// need not choose one.
func (f *tuneForm) ownModels() bool {
	for _, r := range f.rows {
		if r.how() != setup.ByModel {
			return false
		}
	}
	return true
}

func (f *tuneForm) summary() string {
	p, _ := f.plan()
	var names, started, before []string
	for _, s := range p.Settings {
		names = append(names, s.Name)
		if s.How == setup.ByCommand {
			started = append(started, s.Name)
		}
		if s.Before != "" {
			before = append(before, s.Name+": "+s.Before)
		}
	}
	each := fmt.Sprintf("a Kovara plan at %s users, %d requests a level", joinInts(p.Inner.Concurrency), p.Inner.Requests)
	if p.Replay != nil {
		what, when := replayWords(p.Replay.Replay)
		each = fmt.Sprintf("a replay of %s, %s", what, when)
	}
	out := fmt.Sprintf("Compare settings: %s, in %d %s each running every setting once (in turns), each run %s: %d runs. ",
		results.JoinAnd(names), p.Rounds, results.Plural(p.Rounds, "round", "rounds"), each, p.Rounds*len(p.Settings))
	if len(started) > 0 {
		url, _ := f.endpointURL() // "" before one is chosen
		out += engine.TuneServersNote(p.Settings, url) + " "
	}
	if len(before) > 0 {
		out += "Before each turn it runs " + strings.Join(before, "; ") + ". "
	}
	if !p.NoAnswers && len(names) > 0 {
		out += engine.TuneAnswersLine(names[0]) + " "
	}
	if p.Rounds < 3 {
		out += fmt.Sprintf("With %d %s the intervals are too wide to call most changes (they narrow fast with more rounds; the default is %d). ", p.Rounds, results.Plural(p.Rounds, "round", "rounds"), setup.TuneDefaultRounds)
	}
	return out + "Every run is kept in the history, and the comparison too."
}

// endpointURL is the chosen endpoint's address, where started servers
// answer.
func (f *tuneForm) endpointURL() (string, error) {
	name := f.s.endpointSelect.Selected
	if name == "" || name == SimulatorName {
		return "", errors.New("choose your endpoint first: a started server must answer at its address")
	}
	e, ok, err := f.s.u.endpoints.Get(name)
	if err != nil || !ok {
		return "", fmt.Errorf("the endpoint %q cannot be found", name)
	}
	return e.URL, nil
}

// onTest starts a command's server once and stops it, or looks for a
// model in the endpoint's list, and says what happened under the rows.
func (r *tuneRow) onTest() {
	f := r.f
	s, err := r.setting()
	say := func(text string) {
		f.testNote.SetText(text)
		f.testNote.Show()
	}
	if err != nil {
		say(err.Error())
		return
	}
	switch s.How {
	case setup.ByModel:
		if !f.s.models.listed || f.s.models.err != nil {
			say(fmt.Sprintf("%s: the endpoint's models are not listed yet, so the model cannot be looked for; Run will say whether it is served.", s.Name))
		} else if slices.Contains(f.s.modelSelect.Options, s.Model) {
			say(fmt.Sprintf("%s: the endpoint serves %s.", s.Name, s.Model))
		} else {
			say(fmt.Sprintf("%s: the endpoint does not list %s (it serves %s).", s.Name, s.Model, strings.Join(f.s.modelSelect.Options, ", ")))
		}
		return
	case setup.ByCommand:
	default:
		return
	}
	url, err := f.endpointURL()
	if err != nil {
		say(s.Name + ": " + err.Error())
		return
	}
	var timeout time.Duration
	if errs := readTimeout(f.startEntry, &timeout, nil); len(errs) > 0 {
		say(s.Name + ": server start-up: " + errs[0].Error())
		return
	}
	// Where its command listens, and the one sentence when that is not
	// the endpoint's address, before it starts.
	l := engine.ListenOf(s, url)
	before, at := "", ""
	if d := l.Disagreement(); d != "" {
		before = d + " "
	}
	if l.Known {
		at = " (" + l.Why + ")"
	}
	r.testButton.Disable()
	say(fmt.Sprintf("%s%s: starting the server…", before, s.Name))
	go func() {
		began := time.Now()
		srv, err := serverproc.Start(context.Background(), serverproc.Spec{Command: s.Command, Env: s.Env, SSH: s.SSH}, serverproc.Options{URL: l.URL, StartTimeout: timeout})
		text := ""
		if err != nil {
			text = fmt.Sprintf("%s%s: %v", before, s.Name, err)
		} else {
			took := time.Since(began)
			srv.Stop()
			text = fmt.Sprintf("%s%s: the server answered at %s%s after %.1f s, and was stopped again.", before, s.Name, l.URL, at, took.Seconds())
		}
		f.s.u.do(func() {
			r.testButton.Enable()
			say(text)
		})
	}()
}

func (f *tuneForm) run(model string, simulated bool) (planRun, error) {
	p, err := f.plan()
	if err != nil {
		return nil, err
	}
	p.Inner.Model, p.Inner.Simulated = model, simulated
	s := f.s
	return func(ctx context.Context, ep setup.Endpoint, obs engine.Observer) func() {
		t := &tuneProgress{}
		stopTicker := t.watch(s, len(p.Settings)*p.Rounds)
		tobs := engine.TuneObserver{
			Observer: obs,
			Status:   t.set,
			Saved: func(rf *results.File) string {
				id, err := s.u.lib.SaveTuneRun(rf)
				if err != nil {
					t.note("a run could not be saved in the history: " + err.Error())
				}
				t.turnDone()
				return id
			},
			SavedReplay: func(rr *results.RateResult) string {
				id, err := s.u.lib.SaveTuneReplay(rr)
				if err != nil {
					t.note("a replay could not be saved in the history: " + err.Error())
				}
				t.turnDone()
				return id
			},
			Pause: func(ctx context.Context, st setup.TuneSetting) error { return s.askByHand(ctx, st) },
		}
		r, err := engine.RunTune(ctx, p, ep, tobs)
		stopTicker()
		show := func() { s.runFailed(err) }
		if r != nil {
			show = s.shows(plans.NewTune(r))
		}
		return show
	}, nil
}

// tuneProgress is what the comparison last said of itself, read by the
// live view's ticker.
type tuneProgress struct {
	mu     sync.Mutex
	status engine.TuneStatus
	done   int
	notes  []string
}

func (t *tuneProgress) set(s engine.TuneStatus) {
	t.mu.Lock()
	t.status = s
	t.mu.Unlock()
}

func (t *tuneProgress) turnDone() {
	t.mu.Lock()
	t.done++
	t.mu.Unlock()
}

func (t *tuneProgress) note(n string) {
	t.mu.Lock()
	t.notes = append(t.notes, n)
	t.mu.Unlock()
}

// watch shows the comparison's turn, with how long it has been at it, and
// its server's log, once a second until stopped; the whole-plan bar is
// the comparison's.
func (t *tuneProgress) watch(s *BenchmarkScreen, turns int) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	s.u.do(func() {
		if s.live == nil {
			return
		}
		s.live.overall = func(snap engine.Snapshot) float64 {
			t.mu.Lock()
			done, doing := t.done, t.status.Doing
			t.mu.Unlock()
			// Only a run measuring adds its own share: the answers check
			// after it is a plan of its own on the same live view.
			frac := 0.0
			if doing == "measuring" && snap.Phase.Measured() {
				frac = min(snap.Progress, 0.99)
			}
			return min(1, (float64(done)+frac)/float64(max(turns, 1)))
		}
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			t.mu.Lock()
			st, notes := t.status, append([]string(nil), t.notes...)
			t.mu.Unlock()
			line := "Starting…"
			if st.Setting != "" {
				line = fmt.Sprintf("Round %d of %d — setting %s: %s", st.Round, st.Rounds, st.Setting, st.Doing)
				if st.Doing != "measuring" {
					line += fmt.Sprintf(": %d s …", int(time.Since(st.Since).Seconds()))
				}
				if st.Instruction != "" {
					line += " (" + st.Instruction + ")"
				}
			}
			if len(notes) > 0 {
				line += "\n" + strings.Join(notes, "\n")
			}
			var log []string
			if st.Server != nil {
				log = st.Server.Log()
				if len(log) > 60 {
					log = log[len(log)-60:]
				}
			}
			s.u.do(func() {
				if s.live != nil {
					s.live.showTurn(line, log)
				}
			})
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
	}
}

// askByHand says what to change and waits for Continue (or Stop).
func (s *BenchmarkScreen) askByHand(ctx context.Context, st setup.TuneSetting) error {
	answered := make(chan bool, 1)
	s.u.do(func() {
		text := widget.NewLabel(fmt.Sprintf("Setting %s: %s.\n\nPress Continue when it is done; the comparison goes on once the server answers again.", st.Name, st.Instruction))
		text.Wrapping = fyne.TextWrapWord
		d := dialog.NewCustomConfirm("Change the server by hand", "Continue", "Stop the comparison", text, func(ok bool) { answered <- ok }, s.u.win)
		d.Resize(fyne.NewSize(520, 220))
		d.Show()
		go func() {
			<-ctx.Done()
			s.u.do(d.Hide)
		}()
	})
	select {
	case ok := <-answered:
		if !ok {
			s.u.do(func() {
				if s.running != nil {
					s.stopRun(s.running)
				}
			})
			return errors.New("stopped by you")
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
