package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// SimulatorName is the built-in simulator's entry, always first in every
// endpoint list.
const SimulatorName = "Built-in simulator"

// appKeyHint is where the app takes an endpoint's API key, for the error
// that asks for one (engine.Endpoint.KeyHint).
const appKeyHint = "in the endpoint's API key field (Endpoints: select the endpoint, type the key, Save), which keeps it in the system keyring"

const simulatorAbout = "A vLLM-like server inside the app, for trying Kovara Desktop " +
	"without a GPU. Its runs are marked simulated and can never be published."

// EndpointsScreen lists saved endpoints and edits one at a time.
type EndpointsScreen struct {
	u       *App
	content fyne.CanvasObject

	names    []string // the list, simulator first
	selected string   // name being edited; "" for a new endpoint

	list         *widget.List
	nameEntry    *widget.Entry
	urlEntry     *widget.Entry
	keyEntry     *widget.Entry
	verifyCheck  *widget.Check
	timeoutEntry *widget.Entry
	gpuEntry     *widget.Entry
	formNote     *widget.Label
	saveButton   *widget.Button
	deleteButton *widget.Button
	testButton   *widget.Button
	addButton    *widget.Button
	testResult   *widget.Label
	form         *widget.Form

	// testing is the cancel of the Test in flight, if any.
	testing context.CancelFunc
}

func newEndpointsScreen(u *App) *EndpointsScreen {
	s := &EndpointsScreen{u: u}
	s.list = widget.NewList(
		func() int { return len(s.names) },
		func() fyne.CanvasObject { return widget.NewLabel("endpoint name placeholder") },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(s.names[i]) },
	)
	s.list.OnSelected = func(i widget.ListItemID) {
		if i >= 0 && i < len(s.names) {
			s.onSelect(s.names[i])
		}
	}
	s.nameEntry = widget.NewEntry()
	s.nameEntry.SetPlaceHolder("e.g. 4090 box")
	s.urlEntry = widget.NewEntry()
	s.urlEntry.SetPlaceHolder("http://192.168.1.10:8000")
	s.keyEntry = widget.NewPasswordEntry()
	s.keyEntry.SetPlaceHolder("optional; kept in the system keyring")
	s.verifyCheck = widget.NewCheck("Verify TLS certificate", nil)
	s.verifyCheck.SetChecked(true)
	s.timeoutEntry = widget.NewEntry()
	s.timeoutEntry.SetPlaceHolder("120")
	s.gpuEntry = widget.NewEntry()
	s.gpuEntry.SetPlaceHolder("local, ssh://user@host or http://host:9400/metrics")
	s.formNote = widget.NewLabel("")
	s.formNote.Wrapping = fyne.TextWrapWord
	s.form = widget.NewForm(
		widget.NewFormItem("Name", s.nameEntry),
		widget.NewFormItem("Address", s.urlEntry),
		widget.NewFormItem("API key", s.keyEntry),
		widget.NewFormItem("", s.verifyCheck),
		widget.NewFormItem("Timeout (s)", s.timeoutEntry),
		widget.NewFormItem("GPU telemetry", s.gpuEntry),
	)
	s.saveButton = widget.NewButton("Save", s.onSave)
	s.deleteButton = widget.NewButton("Delete", s.onDelete)
	s.testButton = widget.NewButton("Test", s.onTest)
	s.addButton = widget.NewButton("Add endpoint", s.onAdd)
	s.testResult = widget.NewLabel("Test checks the server: its models, its engine, and what it accepts.")
	s.testResult.Wrapping = fyne.TextWrapWord

	left := container.NewBorder(nil, s.addButton, nil, nil, s.list)
	right := container.NewVScroll(container.NewVBox(
		s.form,
		s.formNote,
		container.NewHBox(s.saveButton, s.testButton, s.deleteButton),
		widget.NewSeparator(),
		s.testResult,
	))
	split := container.NewHSplit(left, right)
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
		s.formNote.SetText("The saved endpoints could not be read: " + err.Error())
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
	s.testResult.SetText("")
	if name == SimulatorName {
		s.fill(storage.SavedEndpoint{Name: SimulatorName, URL: "(inside the app)", VerifyTLS: true}, "")
		s.setEditable(false)
		s.formNote.SetText(simulatorAbout)
		return
	}
	e, ok, err := s.u.endpoints.Get(name)
	if err != nil || !ok {
		s.formNote.SetText(fmt.Sprintf("%q could not be read: %v", name, err))
		return
	}
	s.fill(e, "")
	s.setEditable(true)
	s.formNote.SetText("")
	// The keyring may be slow to answer (or ask the user to unlock it):
	// fetch the key off the UI goroutine.
	s.keyEntry.SetPlaceHolder("reading the keyring…")
	go func() {
		key, kerr := s.u.keys.Get(name)
		s.u.do(func() {
			if s.selected != name {
				return // the user moved on
			}
			s.keyEntry.SetPlaceHolder("optional; kept in the system keyring")
			if kerr == nil {
				s.keyEntry.SetText(key)
			} else if !errors.Is(kerr, storage.ErrNoKey) {
				s.formNote.SetText(storage.KeyringProblem(kerr))
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
	s.formNote.SetText("Give the server's address and a name; the API key is optional.")
	s.testResult.SetText("")
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
}

func (s *EndpointsScreen) setEditable(on bool) {
	for _, w := range []fyne.Disableable{s.nameEntry, s.urlEntry, s.keyEntry, s.verifyCheck, s.timeoutEntry, s.gpuEntry, s.saveButton, s.deleteButton} {
		if on {
			w.Enable()
		} else {
			w.Disable()
		}
	}
	// The form colours each label from its widget's state, but only when
	// the form itself refreshes: without this the labels stay grey after
	// the simulator's read-only entry (the first one selected), however
	// editable the form has become.
	s.form.Refresh()
}

// formEndpoint reads the form into a saved endpoint and its key.
func (s *EndpointsScreen) formEndpoint() (storage.SavedEndpoint, string, error) {
	e := storage.SavedEndpoint{
		Name:      strings.TrimSpace(s.nameEntry.Text),
		URL:       strings.TrimSpace(s.urlEntry.Text),
		VerifyTLS: s.verifyCheck.Checked,
		GPU:       strings.TrimSpace(s.gpuEntry.Text),
	}
	if t := strings.TrimSpace(s.timeoutEntry.Text); t != "" {
		d, err := engine.ParseTimeout(t)
		if err != nil {
			return e, "", err
		}
		e.Timeout = d
	}
	return e, s.keyEntry.Text, e.Validate()
}

func (s *EndpointsScreen) onSave() {
	e, key, err := s.formEndpoint()
	if err != nil {
		s.formNote.SetText("Not saved: " + err.Error())
		return
	}
	old := s.selected
	if err := s.u.endpoints.Put(e, old); err != nil {
		s.formNote.SetText("Not saved: " + err.Error())
		return
	}
	note := "Saved."
	if old != "" && old != e.Name {
		_ = s.u.keys.Delete(old)
		s.u.forgetCheck(old)
	}
	if key != "" {
		if err := s.u.keys.Set(e.Name, key); err != nil {
			note = "Saved, but the API key was not: " + err.Error()
		} else if sk, ok := s.u.keys.(*storage.SessionKeys); ok && sk.SessionOnly(e.Name) {
			note = "Saved. " + storage.KeyringProblem(sk.Problem())
		}
	} else {
		_ = s.u.keys.Delete(e.Name)
	}
	s.selected = e.Name
	s.reload()
	for i, n := range s.names {
		if n == e.Name {
			s.list.Select(i)
		}
	}
	// Selecting reads the key back from the keyring in the background;
	// until then the form keeps the key just saved, so a Test right after
	// Save sends it.
	s.keyEntry.SetText(key)
	s.formNote.SetText(note)
	s.u.endpointsChanged()
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
		if err := s.u.endpoints.Delete(name); err != nil {
			s.formNote.SetText("Not deleted: " + err.Error())
			return
		}
		_ = s.u.keys.Delete(name)
		s.u.forgetCheck(name)
		s.reload()
		s.list.Select(0)
		s.u.endpointsChanged()
	}, s.u.win)
}

// onTest checks the endpoint in the form (saved or not) in the background.
func (s *EndpointsScreen) onTest() {
	s.cancelTest()
	var ep engine.Endpoint
	var stop func()
	if s.selected == SimulatorName {
		srv, url, err := sim.Start(sim.Demo(), "127.0.0.1:0")
		if err != nil {
			s.testResult.SetText("The simulator could not start: " + err.Error())
			return
		}
		stop = func() { srv.Close() }
		ep = engine.Endpoint{Name: SimulatorName, URL: url}
	} else {
		e, key, err := s.formEndpoint()
		if err != nil {
			s.testResult.SetText("Cannot test: " + err.Error())
			return
		}
		ep = e.WithKey(key)
		ep.KeyHint = appKeyHint
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	s.testing = cancel
	s.testButton.Disable()
	s.testResult.SetText("Testing " + ep.Name + "…")
	go func() {
		defer cancel()
		if stop != nil {
			defer stop()
		}
		lines, rep, err := engine.TestEndpointReport(ctx, ep)
		text := strings.Join(lines, "\n")
		s.u.do(func() {
			s.testButton.Enable()
			s.testResult.SetText(text)
			if rep != nil {
				// The Benchmark form refuses a plan this context
				// cannot hold.
				s.u.rememberCheck(ep, &rep.Detection, err)
				s.u.bench.revalidate()
			}
		})
	}()
}

func (s *EndpointsScreen) cancelTest() {
	if s.testing != nil {
		s.testing()
		s.testing = nil
	}
}
