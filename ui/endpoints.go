package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// SimulatorName is the built-in simulator's entry, always first in every
// endpoint list.
const SimulatorName = "Built-in simulator"

// appKeyHint is where the app takes an endpoint's API key, for the error
// that asks for one (setup.Endpoint.KeyHint).
const appKeyHint = "in the endpoint's API key field (Endpoints: select the endpoint, type the key, Save), which keeps it in the system keyring"

// appTypeKey follows a keyring that could not be read.
const appTypeKey = "To send one, type it under Endpoints: it is then kept for this session."

const simulatorAbout = "A vLLM-like server inside the app, for trying Kovara Desktop " +
	"without a GPU. Its runs are marked simulated and can never be published."

// EndpointsScreen lists saved endpoints and edits one at a time.
type EndpointsScreen struct {
	u       *App
	content fyne.CanvasObject

	names    []string // the list, simulator first
	selected string   // name being edited; "" for a new endpoint

	list         *widget.List
	nameEntry    *formEntry
	urlEntry     *formEntry
	keyEntry     *formEntry
	verifyCheck  *widget.Check
	timeoutEntry *formEntry
	gpuEntry     *formEntry
	wallEntry    *formEntry
	wallToken    *formEntry      // a Home Assistant sensor's token, beside the plug's address
	wallField    *wallField      // the two, as the form's Wall power row
	formPage     *fyne.Container // the form, its note and buttons, the Test's report, Record my traffic
	formNote     *widget.Label
	saveButton   *widget.Button
	deleteButton *widget.Button
	testButton   *widget.Button
	addButton    *widget.Button
	testResult   *widget.Label
	form         *widget.Form
	labels       labelColumn // the form's and Record my traffic's
	// rec is Record my traffic, under the endpoint's form.
	rec *recorder

	// testing is the cancel of the Test in flight, if any; testGen counts
	// the Tests started and cancelled, so a cancelled one's answer, which
	// no longer applies, is dropped.
	testing context.CancelFunc
	testGen int
	// tested is what the Test report shown says, and testedURL the
	// address it is about: the report stays until the address changes.
	tested    testState
	testedURL string
	// saved is what the last Save said before its sentence about the
	// Test, while the form's note still shows it (sayTested): a Test
	// made after it replaces that sentence.
	saved savedNote
}

// savedNote is the note Save left: its own words (the key's fate), their
// colour, the address saved, and the whole note as shown.
type savedNote struct {
	base    string
	problem bool
	url     string
	shown   string
}

// testState is what the endpoint form's Test report says.
type testState int

const (
	testNone    testState = iota // no report
	testRefused                  // the form could not be tested as filled in
	testRunning
	testPassed
	testFailed // the server was asked and the Test failed
)

func newEndpointsScreen(u *App) *EndpointsScreen {
	s := &EndpointsScreen{u: u}
	s.list = widget.NewList(
		func() int { return len(s.names) },
		func() fyne.CanvasObject {
			status := widget.NewLabel("endpoint status placeholder")
			status.Truncation = fyne.TextTruncateEllipsis
			return container.NewVBox(widget.NewLabel("endpoint name placeholder"), status)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			row := o.(*fyne.Container).Objects
			row[0].(*widget.Label).SetText(s.names[i])
			text, failed := s.u.endpointStatus(s.names[i]).text()
			setLabel(row[1].(*widget.Label), text, failed)
		},
	)
	s.list.OnSelected = func(i widget.ListItemID) {
		// The entry the form already shows (just saved) is not read
		// again: that would clear its Test report.
		if i >= 0 && i < len(s.names) && s.names[i] != s.selected {
			s.onSelect(s.names[i])
		}
	}
	s.nameEntry = newFormEntry(s.u)
	s.nameEntry.SetPlaceHolder("e.g. 4090 box")
	s.urlEntry = newFormEntry(s.u)
	s.urlEntry.SetPlaceHolder("http://192.168.1.10:8000")
	s.urlEntry.OnChanged = s.onAddressChanged
	s.keyEntry = newPasswordFormEntry(s.u)
	s.keyEntry.SetPlaceHolder("optional; kept in the system keyring")
	s.verifyCheck = widget.NewCheck("Verify TLS certificate", nil)
	s.verifyCheck.SetChecked(true)
	s.timeoutEntry = newFormEntry(s.u)
	s.timeoutEntry.SetPlaceHolder("120")
	s.gpuEntry = newFormEntry(s.u)
	s.gpuEntry.SetPlaceHolder("local or ssh://user@host (NVIDIA, AMD, Apple, Intel), or http://host:9400/metrics")
	s.wallEntry = newFormEntry(s.u)
	s.wallEntry.SetPlaceHolder("smart plug: http://plug-address (Shelly, Tasmota) or ha://host:8123/sensor.name")
	// A Home Assistant sensor answers only with its long-lived token,
	// kept in the keyring like the API key: its entry shows beside the
	// plug's address once that is an ha:// one.
	s.wallToken = newPasswordFormEntry(s.u)
	s.wallToken.SetPlaceHolder("its token (keyring)")
	s.wallToken.Hide()
	s.wallField = newWallField(s.wallEntry, s.wallToken)
	s.wallEntry.OnChanged = func(string) { s.showWallToken() }
	s.formNote = widget.NewLabel("")
	s.formNote.Wrapping = fyne.TextWrapWord
	s.form = widget.NewForm(
		widget.NewFormItem("Name", s.nameEntry),
		widget.NewFormItem("Address", s.urlEntry),
		widget.NewFormItem("API key", s.keyEntry),
		widget.NewFormItem("", s.verifyCheck),
		widget.NewFormItem("Timeout (s)", s.timeoutEntry),
		widget.NewFormItem("GPU telemetry", s.gpuEntry),
		widget.NewFormItem("Wall power", s.wallField),
	)
	s.saveButton = widget.NewButton("Save", s.onSave)
	s.deleteButton = widget.NewButton("Delete", s.onDelete)
	s.testButton = widget.NewButton("Test", s.onTest)
	s.addButton = widget.NewButton("Add endpoint", s.onAdd)
	s.testResult = widget.NewLabel("Test checks the server: its models, its engine, and what it accepts.")
	s.testResult.Wrapping = fyne.TextWrapWord

	s.rec = newRecorder(s)

	left := container.NewBorder(nil, s.addButton, nil, nil, s.list)
	s.formPage = container.NewVBox(
		alignedWith(&s.labels, s.form),
		s.formNote,
		container.NewHBox(s.saveButton, s.testButton, s.deleteButton),
		widget.NewSeparator(),
		s.testResult,
		s.rec.content,
	)
	split := container.NewHSplit(left, pageScroll(s.formPage))
	split.Offset = 0.28
	s.content = split
	s.reload()
	s.list.Select(0)
	return s
}

// reload reads the saved endpoints again.
func (s *EndpointsScreen) reload() {
	saved, err := s.u.endpoints.List()
	if err != nil {
		setLabel(s.formNote, "The saved endpoints could not be read: "+err.Error(), true)
	}
	s.names = []string{SimulatorName}
	for _, e := range saved {
		s.names = append(s.names, e.Name)
	}
	s.list.Refresh()
}

func (s *EndpointsScreen) onSelect(name string) {
	s.cancelTest()
	s.selected = name
	s.clearReport()
	s.rec.refresh()
	if name == SimulatorName {
		s.fill(storage.SavedEndpoint{Name: SimulatorName, URL: "(inside the app)", VerifyTLS: true}, "")
		s.setEditable(false)
		setLabel(s.formNote, simulatorAbout, false)
		return
	}
	e, ok, err := s.u.endpoints.Get(name)
	if err != nil || !ok {
		setLabel(s.formNote, fmt.Sprintf("%q could not be read: %v", name, err), true)
		return
	}
	s.fill(e, "")
	s.setEditable(true)
	setLabel(s.formNote, "", false)
	if e.NoKey {
		return // saved without a key: nothing to ask the keyring for
	}
	// The keyring may be slow to answer (or ask the user to unlock it):
	// fetch the key off the UI goroutine.
	s.keyEntry.SetPlaceHolder("reading the keyring…")
	go func() {
		key, kerr := e.Key(s.u.keys)
		s.u.do(func() {
			if s.selected != name {
				return // the user moved on
			}
			s.keyEntry.SetPlaceHolder("optional; kept in the system keyring")
			if kerr == nil {
				s.keyEntry.SetText(key)
			} else if !errors.Is(kerr, storage.ErrNoKey) {
				setLabel(s.formNote, storage.KeyringReadProblem(kerr)+" "+appTypeKey, true)
			}
		})
	}()
}

// onAdd starts a new, empty endpoint.
func (s *EndpointsScreen) onAdd() {
	s.list.UnselectAll()
	s.selected = ""
	s.fill(storage.SavedEndpoint{VerifyTLS: true}, "")
	s.setEditable(true)
	setLabel(s.formNote, "Give the server's address and a name; the API key is optional.", false)
	s.cancelTest()
	s.clearReport()
	s.rec.refresh()
	s.u.win.Canvas().Focus(s.nameEntry)
}

func (s *EndpointsScreen) fill(e storage.SavedEndpoint, key string) {
	s.nameEntry.SetText(e.Name)
	s.urlEntry.SetText(e.URL)
	s.keyEntry.SetText(key)
	s.verifyCheck.SetChecked(e.VerifyTLS)
	if e.Timeout > 0 {
		s.timeoutEntry.SetText(trimFloat(e.Timeout.Seconds()))
	} else {
		s.timeoutEntry.SetText("")
	}
	s.gpuEntry.SetText(e.GPU)
	s.wallEntry.SetText(e.Wall)
	s.wallToken.SetText("")
	s.showWallToken()
}

// showWallToken shows the token's entry while the plug is a Home
// Assistant sensor.
func (s *EndpointsScreen) showWallToken() {
	s.wallField.showToken((storage.SavedEndpoint{Wall: s.wallEntry.Text}).NeedsWallToken())
}

// wallField is the Wall power row: the plug's address and, for a Home
// Assistant sensor, its token beside it. One widget, so that the form
// greys its label with the others' (it reads a row's state from its
// widget, and a container has none: the label stayed white on the
// simulator's read-only entry), and the token's room is taken only while
// the token shows (a hidden token inside a fixed-width box left the
// address 190 px short, its placeholder scrolled).
type wallField struct {
	widget.BaseWidget
	entry, token *formEntry
	tokenBox     *fyne.Container
}

func newWallField(entry, token *formEntry) *wallField {
	f := &wallField{entry: entry, token: token,
		tokenBox: container.NewGridWrap(fyne.NewSize(190, token.MinSize().Height), token)}
	f.tokenBox.Hidden = !token.Visible()
	f.ExtendBaseWidget(f)
	return f
}

func (f *wallField) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewBorder(nil, nil, nil, f.tokenBox, f.entry))
}

// showToken shows the token's entry beside the address, or gives its room
// back to the address.
func (f *wallField) showToken(on bool) {
	if on {
		f.token.Show()
		f.tokenBox.Show()
	} else {
		f.token.Hide()
		f.tokenBox.Hide()
	}
	f.Refresh()
}

func (f *wallField) Enable()        { f.entry.Enable(); f.token.Enable() }
func (f *wallField) Disable()       { f.entry.Disable(); f.token.Disable() }
func (f *wallField) Disabled() bool { return f.entry.Disabled() }

func (s *EndpointsScreen) setEditable(on bool) {
	// Through setEnabled: the labels stayed grey after the simulator's
	// read-only entry (the first one selected), however editable the form
	// had become.
	setEnabled(s.form, on, s.nameEntry, s.urlEntry, s.keyEntry, s.verifyCheck, s.timeoutEntry, s.gpuEntry, s.wallField, s.saveButton, s.deleteButton)
}

// formEndpoint reads the form into a saved endpoint and its key.
func (s *EndpointsScreen) formEndpoint() (storage.SavedEndpoint, string, error) {
	e := storage.SavedEndpoint{
		Name:      strings.TrimSpace(s.nameEntry.Text),
		URL:       strings.TrimSpace(s.urlEntry.Text),
		VerifyTLS: s.verifyCheck.Checked,
		GPU:       strings.TrimSpace(s.gpuEntry.Text),
		Wall:      strings.TrimSpace(s.wallEntry.Text),
	}
	if t := strings.TrimSpace(s.timeoutEntry.Text); t != "" {
		d, err := engine.ParseTimeout(t)
		if err != nil {
			return e, "", err
		}
		e.Timeout = d
	}
	e.NoKey = s.keyEntry.Text == ""
	return e, s.keyEntry.Text, e.Validate()
}

// onSave stores the form's endpoint after the same checks Test makes of
// it (formEndpoint: the address through setup.ParseBase), so an address
// Test refuses is refused here in the same words. An address that is well
// formed but did not answer its Test is saved (the server may be down
// while it is set up), and the note says so.
func (s *EndpointsScreen) onSave() {
	e, key, err := s.formEndpoint()
	if err != nil {
		setLabel(s.formNote, "Not saved: "+err.Error(), true)
		return
	}
	old := s.selected
	// The plug it had: its token is the keyring's only while the plug
	// is a Home Assistant sensor (the keyring is never asked otherwise).
	prev, _, _ := s.u.endpoints.Get(old)
	if err := s.u.endpoints.Put(e, old); err != nil {
		setLabel(s.formNote, "Not saved: "+err.Error(), true)
		return
	}
	note, problem := "Saved.", false
	if old != "" && old != e.Name {
		_ = s.u.keys.Delete(old)
		s.u.forgetCheck(old)
		s.u.forgetStatus(old)
	}
	if key != "" {
		if err := s.u.keys.Set(e.Name, key); err != nil {
			note, problem = "Saved, but the API key was not: "+err.Error(), true
		} else if sk, ok := s.u.keys.(*storage.SessionKeys); ok && sk.SessionOnly(e.Name) {
			note, problem = "Saved. "+storage.KeyringProblem(sk.Problem()), true
		}
	} else {
		_ = s.u.keys.Delete(e.Name)
	}
	token := s.wallToken.Text
	if token == "" && e.NeedsWallToken() && prev.NeedsWallToken() && old != e.Name {
		// Renamed: the token kept under the old name goes with it.
		token, _ = prev.WallToken(s.u.keys)
	}
	if prev.NeedsWallToken() && (old != e.Name || !e.NeedsWallToken()) {
		_ = s.u.keys.Delete(storage.WallAccount(old))
	}
	if e.NeedsWallToken() && token != "" {
		// Left empty, the token kept before stays.
		if err := s.u.keys.Set(storage.WallAccount(e.Name), token); err != nil && !problem {
			note, problem = "Saved, but the wall plug's token was not: "+err.Error(), true
		}
	}
	// The form already shows what was saved: selecting its new row
	// leaves the form, the key typed and the Test report as they are
	// (see list.OnSelected).
	s.selected = e.Name
	s.reload()
	for i, n := range s.names {
		if n == e.Name {
			s.list.Select(i)
		}
	}
	s.saved = savedNote{base: note, problem: problem, url: e.URL}
	s.sayTested()
	s.rec.refresh()
	s.u.endpointsChanged()
}

// sayTested finishes the note Save left with what the form's Test report
// says of the address saved: not tested yet, or its last Test failed (in
// the warning colour). Called again whenever the report changes, so a
// Test that passes after a failed one replaces "Its last Test failed"
// (the note once stayed orange above a Test that had just succeeded);
// nothing once the note says something else.
func (s *EndpointsScreen) sayTested() {
	if s.saved.shown != "" && s.formNote.Text != s.saved.shown {
		s.saved = savedNote{} // the note has moved on
	}
	if s.saved.base == "" {
		return
	}
	note, problem := s.saved.base, s.saved.problem
	switch {
	case s.tested == testRunning:
		note += " Testing it now (below)."
	case s.testedURL != s.saved.url || s.tested == testNone || s.tested == testRefused:
		note += " Not tested yet: Test asks the server whether it answers at this address."
	case s.tested == testFailed:
		// The report below says why, in the Test's own words: a refused
		// key is not a server that is down.
		note += " Its last Test failed (below): runs will fail the same way until that is fixed."
		problem = true
	}
	s.saved.shown = note
	setLabel(s.formNote, note, problem)
}

func (s *EndpointsScreen) onDelete() {
	name := s.selected
	if name == "" || name == SimulatorName {
		return
	}
	dialog.ShowConfirm("Delete endpoint", fmt.Sprintf("Delete %q and its stored API key? Runs already made stay in the history.", name), func(ok bool) {
		if !ok {
			return
		}
		gone, _, _ := s.u.endpoints.Get(name)
		if err := s.u.endpoints.Delete(name); err != nil {
			setLabel(s.formNote, "Not deleted: "+err.Error(), true)
			return
		}
		_ = s.u.keys.Delete(name)
		if gone.NeedsWallToken() {
			_ = s.u.keys.Delete(storage.WallAccount(name))
		}
		s.u.forgetCheck(name)
		s.u.forgetStatus(name)
		s.reload()
		s.list.Select(0)
		s.u.endpointsChanged()
	}, s.u.win)
}

// onTest checks the endpoint in the form (saved or not) in the background.
func (s *EndpointsScreen) onTest() {
	s.cancelTest()
	url := strings.TrimSpace(s.urlEntry.Text)
	var ep setup.Endpoint
	var wallFrom storage.SavedEndpoint // whose plug token the Test reads from the keyring
	var stop func()
	if s.selected == SimulatorName {
		srv, simURL, err := sim.Start(sim.Demo(), "127.0.0.1:0")
		if err != nil {
			s.setReport("The simulator could not start: "+err.Error(), testFailed, url)
			return
		}
		stop = func() { srv.Close() }
		ep = setup.Endpoint{Name: SimulatorName, URL: simURL}
	} else {
		e, key, err := s.formEndpoint()
		if err != nil {
			s.setReport("Cannot test: "+err.Error(), testRefused, url)
			return
		}
		ep = e.WithKey(key)
		ep.KeyHint = appKeyHint
		ep.WallToken = s.wallToken.Text
		if ep.WallToken == "" {
			// Read with the rest of the Test, off the UI goroutine.
			wallFrom = e
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	s.testing = cancel
	gen := s.testGen
	s.testButton.Disable()
	s.setReport("Testing "+ep.Name+"…", testRunning, url)
	go func() {
		defer cancel()
		if wallFrom.NeedsWallToken() {
			ep.WallToken, _ = wallFrom.WallToken(s.u.keys)
		}
		if stop != nil {
			defer stop()
		}
		lines, rep, err := engine.TestEndpointReport(ctx, ep)
		text := strings.Join(lines, "\n")
		s.u.do(func() {
			if s.testGen != gen {
				return // cancelled: another endpoint or address now
			}
			s.testing = nil
			s.testButton.Enable()
			st := testPassed
			if err != nil {
				st = testFailed
			}
			s.setReport(text, st, url)
			if rep != nil {
				// The Benchmark form refuses a plan this context
				// cannot hold.
				s.u.rememberCheck(ep, rep.Model, &rep.Detection, err)
				s.u.rememberSpeed(ep, rep.Model, rep.Speed)
				s.u.bench.revalidate()
			}
			// After rememberCheck, which takes this for a run's check.
			s.u.rememberStatus(ep, lines, err)
		})
	}()
}

func (s *EndpointsScreen) cancelTest() {
	if s.testing != nil {
		s.testing()
		s.testing = nil
		s.testGen++
		s.testButton.Enable()
	}
}

// onAddressChanged drops the Test report (and the Test in flight) once
// the address differs from the one tested: it no longer applies.
// Everything else in the form, and Save, leave it.
func (s *EndpointsScreen) onAddressChanged(text string) {
	if s.tested != testNone && strings.TrimSpace(text) != s.testedURL {
		s.cancelTest()
		s.clearReport()
	}
}

// setReport shows a Test report about the address url, in the warning
// colour when the form could not be tested or the Test failed.
func (s *EndpointsScreen) setReport(text string, st testState, url string) {
	s.tested, s.testedURL = st, url
	setLabel(s.testResult, text, st == testRefused || st == testFailed)
	s.sayTested()
}

func (s *EndpointsScreen) clearReport() {
	s.setReport("", testNone, "")
}

// setLabel shows text in l, in the warning colour when it says something
// went wrong.
func setLabel(l *widget.Label, text string, problem bool) {
	l.Importance = widget.MediumImportance
	if problem {
		l.Importance = widget.WarningImportance
	}
	l.Text = text
	l.Refresh()
}

// prefStatusPrefix keys each endpoint's latest check as the Endpoints list
// shows it: the endpoint's Test, or a run's endpoint check.
const prefStatusPrefix = "endpoint.status."

// endpointStatus is an endpoint's latest check: when, against which
// address, and its one sentence (checkStatusLine).
type endpointStatus struct {
	URL    string    `json:"url"`
	At     time.Time `json:"at"`
	Line   string    `json:"line"`
	Failed bool      `json:"failed"`
}

// checkStatusLine is the one sentence a check is summed up in, the same
// words the Test report opens with (engine's EndpointReport.Lines): the
// reason on failure ("Failed: the server refused the API key …", never a
// guess that the server is down), else the models served. A run's check
// has no report: its failure reads as the Test's would, and its success
// says the server answered a run.
func checkStatusLine(lines []string, err error) string {
	if len(lines) == 0 {
		lines = (*engine.EndpointReport)(nil).Lines(err)
	}
	if len(lines) == 0 {
		return "Answered a run"
	}
	return lines[0]
}

// text is the status as the list shows it, with when it was checked, and
// whether it failed; "" before any check.
func (st endpointStatus) text() (string, bool) {
	if st.Line == "" {
		return "", false
	}
	when := st.At.Local().Format("15:04")
	if y, m, d := st.At.Local().Date(); time.Now().Year() != y || time.Now().Month() != m || time.Now().Day() != d {
		when = st.At.Local().Format("2 Jan 15:04")
	}
	return "Checked " + when + ": " + st.Line, st.Failed
}

// rememberStatus keeps ep's latest check (lines as the Test reported
// them, nil for a run's check) so the Endpoints list says it, and a Test
// report still shown for ep that the check contradicts is replaced: a
// server gone since its Test passed is no longer "Serving 1 model".
func (u *App) rememberStatus(ep setup.Endpoint, lines []string, err error) {
	if ep.Name == "" {
		return
	}
	st := endpointStatus{URL: ep.URL, At: time.Now(), Line: checkStatusLine(lines, err), Failed: err != nil}
	if ep.Name == SimulatorName {
		st.URL = "" // a new address at every start
	}
	data, jerr := json.Marshal(st)
	if jerr != nil {
		return
	}
	u.fyne.Preferences().SetString(prefStatusPrefix+ep.Name, string(data))
	s := u.endpointS
	if s == nil {
		return
	}
	s.list.Refresh()
	if lines == nil && s.selected == ep.Name && s.tested != testRunning && s.tested != testNone &&
		(s.tested == testFailed) != st.Failed {
		text, _ := st.text()
		state := testPassed
		if st.Failed {
			state = testFailed
		}
		s.setReport(text, state, s.testedURL)
	}
}

// rememberRunCheck keeps what a run found of ep as its latest check: a
// failure to reach or use the endpoint, or a run it answered. Anything
// else (stopped, a plan refused) says nothing of the endpoint.
func (u *App) rememberRunCheck(ep setup.Endpoint, err error) {
	var ee *engine.EndpointError
	if err == nil || errors.As(err, &ee) {
		u.rememberStatus(ep, nil, err)
	}
}

// forgetStatus drops an endpoint's latest check (deleted or renamed).
func (u *App) forgetStatus(name string) {
	u.fyne.Preferences().RemoveValue(prefStatusPrefix + name)
}

// endpointStatus is the latest check of the endpoint called name at its
// address as saved now, or none.
func (u *App) endpointStatus(name string) endpointStatus {
	raw := u.fyne.Preferences().String(prefStatusPrefix + name)
	var st endpointStatus
	if raw == "" || json.Unmarshal([]byte(raw), &st) != nil {
		return endpointStatus{}
	}
	if name != SimulatorName {
		saved, ok, err := u.endpoints.Get(name)
		if err != nil || !ok || saved.URL != st.URL {
			return endpointStatus{}
		}
	}
	return st
}
