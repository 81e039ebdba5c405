package ui

import (
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// TestEndpointFormLabelsFollowEditable: the endpoint form's labels are
// drawn in the normal text colour whenever the form can be edited, and
// greyed only on the simulator's read-only entry. Fyne colours a form
// label from its widget's state only when the form refreshes, so the
// labels once stayed grey after the simulator (the first entry shown)
// however editable the form became.
func TestEndpointFormLabelsFollowEditable(t *testing.T) {
	h := newHarness(t)
	s := h.u.endpointS
	labels := []string{"Name", "Address", "API key", "Timeout (s)", "GPU telemetry", "Wall power"}
	steps := []struct {
		name     string
		do       func()
		disabled bool
	}{
		{"the simulator, shown first", func() {}, true},
		{"Add endpoint", func() { test.Tap(s.addButton) }, false},
		{"back to the simulator", func() { s.list.Select(0) }, true},
		{"a saved endpoint", func() { s.list.Select(1) }, false},
		{"the simulator again", func() { s.list.Select(0) }, true},
		{"Add endpoint again", func() { test.Tap(s.addButton) }, false},
	}
	h.locked(func() {
		if err := h.u.endpoints.Put(storage.SavedEndpoint{Name: "lab box", URL: "http://127.0.0.1:8000", VerifyTLS: true}, ""); err != nil {
			t.Fatal(err)
		}
		s.reload()
		h.u.tabs.SelectIndex(3)
		h.win.Resize(h.win.Canvas().Size().Max(h.win.Content().MinSize()))
	})
	for _, st := range steps {
		h.locked(func() {
			st.do()
			if got, want := s.nameEntry.Disabled(), st.disabled; got != want {
				t.Fatalf("%s: name entry disabled %v, want %v", st.name, got, want)
			}
			markup := test.RenderToMarkup(h.win.Canvas())
			for _, l := range labels {
				m := regexp.MustCompile(`<text [^>]*>` + regexp.QuoteMeta(l) + `</text>`).FindString(markup)
				if m == "" {
					t.Fatalf("%s: no %q label in the window's markup", st.name, l)
				}
				if got, want := regexp.MustCompile(`\bcolor="disabled"`).MatchString(m), st.disabled; got != want {
					t.Errorf("%s: label %q drawn disabled %v, want %v: %s", st.name, l, got, want, m)
				}
			}
		})
	}
}

// TestEndpointSaveRefusesWhatTestRefuses: Save checks the address as Test
// does (setup.ParseBase, through the form's one check) before storing
// anything: a malformed address is refused by both in the same sentence,
// in the warning colour, and nothing is saved. "htp:/x" once passed as
// the host "htp", and Save stored it.
func TestEndpointSaveRefusesWhatTestRefuses(t *testing.T) {
	h := newHarness(t)
	s := h.u.endpointS
	for _, addr := range []string{"htp:/x", "http:/192.168.1.10:8000", "htp://x", "http://", "https://:8000", ""} {
		_, perr := setup.ParseBase(addr)
		if perr == nil {
			t.Fatalf("%q: the address check lets it through", addr)
		}
		h.locked(func() {
			test.Tap(s.addButton)
			test.Type(s.nameEntry, "typo box")
			test.Type(s.urlEntry, addr)
			test.Tap(s.testButton)
			if got, want := s.testResult.Text, "Cannot test: "+perr.Error(); got != want {
				t.Errorf("%q: Test says %q, want %q", addr, got, want)
			}
			if got, want := s.testResult.Importance, widget.WarningImportance; got != want {
				t.Errorf("%q: Test's refusal in importance %v, want %v", addr, got, want)
			}
			test.Tap(s.saveButton)
			if got, want := s.formNote.Text, "Not saved: "+perr.Error(); got != want {
				t.Errorf("%q: Save says %q, want %q", addr, got, want)
			}
			if got, want := s.formNote.Importance, widget.WarningImportance; got != want {
				t.Errorf("%q: Save's refusal in importance %v, want %v", addr, got, want)
			}
			if saved, err := h.u.endpoints.List(); err != nil || len(saved) != 0 {
				t.Errorf("%q: saved %v (%v), want nothing", addr, saved, err)
			}
			if got, want := s.names, []string{SimulatorName}; !slices.Equal(got, want) {
				t.Errorf("%q: the list is %v, want %v", addr, got, want)
			}
		})
	}
}

// TestEndpointTestReportStaysUntilTheAddressChanges: a failed Test is
// shown in the warning colour, a passing one is not; Save (refused or
// not) and edits elsewhere in the form leave the report, which is about
// the address; changing the address drops it. An address that failed its
// Test is still saved (the server may be down while it is set up), with a
// note that says so. The failure here is the engine's sentence for an
// https address on a plain-http port.
func TestEndpointTestReportStaysUntilTheAddressChanges(t *testing.T) {
	h := newHarness(t)
	plain := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	addr := strings.TrimPrefix(plain, "http://")
	s := h.u.endpointS
	warning := func(what string, l *widget.Label, want bool) {
		t.Helper()
		if got := l.Importance == widget.WarningImportance; got != want {
			t.Errorf("%s: in the warning colour %v, want %v (%q)", what, got, want, l.Text)
		}
	}

	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "lab box")
		test.Type(s.urlEntry, "https://"+addr)
		test.Tap(s.testButton)
	})
	h.waitFor("the failed Test", 20*time.Second, func() bool { return strings.HasPrefix(s.testResult.Text, "Failed:") })
	var failed string
	h.locked(func() {
		failed = s.testResult.Text
		if want := "Failed: the server at " + addr + " speaks plain HTTP, not HTTPS: try http://" + addr + " as the address"; failed != want {
			t.Errorf("Test says %q, want %q", failed, want)
		}
		warning("the failed Test", s.testResult, true)
		// Drawn so: its first line in the warning colour.
		h.u.tabs.SelectIndex(3)
		h.win.Resize(h.win.Canvas().Size().Max(h.win.Content().MinSize()))
		m := regexp.MustCompile(`<text [^>]*>Failed: [^<]*</text>`).FindString(test.RenderToMarkup(h.win.Canvas()))
		if !strings.Contains(m, `color="warning"`) {
			t.Errorf("the failed Test is drawn as %q, want the warning colour", m)
		}

		test.Tap(s.saveButton)
		if got, want := s.formNote.Text, "Saved. Its last Test failed (below): runs will fail the same way until that is fixed."; got != want {
			t.Errorf("Save after a failed Test says %q, want %q", got, want)
		}
		warning("Save after a failed Test", s.formNote, true)
		if saved, ok, err := h.u.endpoints.Get("lab box"); err != nil || !ok || saved.URL != "https://"+addr {
			t.Errorf("saved %+v %v %v, want the address as typed", saved, ok, err)
		}
		if s.testResult.Text != failed {
			t.Errorf("Save cleared the report: %q", s.testResult.Text)
		}
		warning("the report after Save", s.testResult, true)

		// Edits elsewhere, and a refused Save, leave it.
		s.nameEntry.SetText("lab box 2")
		s.timeoutEntry.SetText("zero")
		test.Tap(s.saveButton)
		if !strings.HasPrefix(s.formNote.Text, "Not saved:") {
			t.Errorf("a bad timeout saved: %q", s.formNote.Text)
		}
		s.timeoutEntry.SetText("")
		if s.testResult.Text != failed {
			t.Errorf("edits elsewhere cleared the report: %q", s.testResult.Text)
		}

		// The address changes: the report no longer applies.
		s.urlEntry.SetText("http://" + addr)
		if s.testResult.Text != "" {
			t.Errorf("after the address changed the report is %q, want none", s.testResult.Text)
		}
		warning("the cleared report", s.testResult, false)
		test.Tap(s.testButton)
	})
	h.waitFor("the passing Test", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Serving 1 model") })
	h.locked(func() {
		passed := s.testResult.Text
		warning("the passing Test", s.testResult, false)
		test.Tap(s.saveButton)
		if got, want := s.formNote.Text, "Saved."; got != want {
			t.Errorf("Save after a passing Test says %q, want %q", got, want)
		}
		warning("Save after a passing Test", s.formNote, false)
		if s.testResult.Text != passed {
			t.Errorf("Save changed the report to %q", s.testResult.Text)
		}
		if got, want := s.names, []string{SimulatorName, "lab box 2"}; !slices.Equal(got, want) {
			t.Errorf("the list is %v, want %v (renamed)", got, want)
		}

		// Saved without a Test: the note says it is untested.
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "new box")
		test.Type(s.urlEntry, plain)
		test.Tap(s.saveButton)
		if got, want := s.formNote.Text, "Saved. Not tested yet: Test asks the server whether it answers at this address."; got != want {
			t.Errorf("Save without a Test says %q, want %q", got, want)
		}
		warning("Save without a Test", s.formNote, false)
	})
}

// TestEndpointAddressChangeDropsTheTestInFlight: a Test still waiting for
// its server stops when the address changes; its answer would be about
// the old address.
func TestEndpointAddressChangeDropsTheTestInFlight(t *testing.T) {
	h := newHarness(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts and never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "silent box")
		test.Type(s.urlEntry, "http://"+ln.Addr().String())
		test.Tap(s.testButton)
		if s.testing == nil || !s.testButton.Disabled() || !strings.HasPrefix(s.testResult.Text, "Testing silent box") {
			t.Fatalf("no Test in flight: %q", s.testResult.Text)
		}
		test.Type(s.urlEntry, "0")
		if s.testing != nil || s.testButton.Disabled() || s.testResult.Text != "" {
			t.Errorf("after the address changed: Test in flight %v, Test button disabled %v, report %q",
				s.testing != nil, s.testButton.Disabled(), s.testResult.Text)
		}
	})
}

// TestEndpointScreenFits1024x640: the Endpoints screen fits a 1024×640
// window (its content below the tabs, with room for the window's own).
func TestEndpointScreenFits1024x640(t *testing.T) {
	h := newHarness(t)
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		s.setReport(strings.Repeat("Serving 40 models: a long list of model names; ", 30), testFailed, "")
		if got := s.content.MinSize(); got.Width > 1000 || got.Height > 590 {
			t.Errorf("the Endpoints screen needs %v, more than 1000×590", got)
		}
		// The form's side of the split holds its page without cutting
		// its right edge (the entries' ends and Record were cut: the
		// page is as wide as its widest field's placeholder).
		h.u.tabs.SelectIndex(3)
		h.win.Resize(fyne.NewSize(1024, 640))
		if need, has := s.formPage.MinSize().Width, s.content.(*container.Split).Trailing.Size().Width; need > has {
			t.Errorf("the endpoint form needs %v wide, its side of the split gives %v", need, has)
		}
	})
}

// TestEndpointSaveNoteFollowsTheTest: the note Save leaves says what the
// Test said of the address, and a Test made after the Save replaces it:
// an endpoint saved while its server was down says its last Test failed,
// in the warning colour, and once the server is up and Test passes the
// note is plain "Saved." (it stayed orange, "Its last Test failed
// (below)", above a Test that had just succeeded).
func TestEndpointSaveNoteFollowsTheTest(t *testing.T) {
	h := newHarness(t)
	// A port with nothing listening on it, for now.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "restarted box")
		test.Type(s.urlEntry, "http://"+addr)
		test.Tap(s.testButton)
	})
	h.waitFor("the failed Test", 20*time.Second, func() bool { return strings.HasPrefix(s.testResult.Text, "Failed:") })
	h.locked(func() {
		test.Tap(s.saveButton)
		if got, want := s.formNote.Text, "Saved. Its last Test failed (below): runs will fail the same way until that is fixed."; got != want {
			t.Fatalf("Save after a failed Test says %q, want %q", got, want)
		}
	})
	srv, _, err := sim.Start(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h.locked(func() {
		test.Tap(s.testButton)
		if got, want := s.formNote.Text, "Saved. Testing it now (below)."; got != want {
			t.Errorf("while the Test runs the note says %q, want %q", got, want)
		}
	})
	h.waitFor("the passing Test", 20*time.Second, func() bool { return strings.Contains(s.testResult.Text, "Serving 1 model") })
	h.locked(func() {
		if got, want := s.formNote.Text, "Saved."; got != want {
			t.Errorf("after a passing Test the note says %q, want %q", got, want)
		}
		if s.formNote.Importance == widget.WarningImportance {
			t.Errorf("after a passing Test the note is in the warning colour")
		}
		// Another endpoint chosen: the note is that endpoint's, and a
		// Test there leaves it alone.
		s.list.Select(0)
		test.Tap(s.testButton)
		if s.formNote.Text != simulatorAbout {
			t.Errorf("the simulator's note is %q", s.formNote.Text)
		}
	})
	h.waitFor("the simulator's Test", 20*time.Second, func() bool { return s.tested == testPassed || s.tested == testFailed })
	h.locked(func() {
		if s.formNote.Text != simulatorAbout {
			t.Errorf("a Test of another endpoint changed its note to %q", s.formNote.Text)
		}
	})
}

// TestWallAddressAsWideAsTheOthers: without a Home Assistant sensor the
// plug's address is as wide as the GPU source's above it, and the token's
// entry takes its room beside it only for an ha:// sensor (the hidden
// token's box kept 190 px and the address's placeholder scrolled).
func TestWallAddressAsWideAsTheOthers(t *testing.T) {
	h := newHarness(t)
	s := h.u.endpointS
	h.locked(func() {
		h.u.tabs.SelectIndex(3)
		test.Tap(s.addButton)
		h.win.Resize(fyne.NewSize(1024, 640))
		if got, want := s.wallEntry.Size().Width, s.gpuEntry.Size().Width; got != want {
			t.Errorf("the plug's address is %v wide, the GPU source's %v", got, want)
		}
		test.Type(s.wallEntry, "ha://hass.local:8123/sensor.rack_power")
		h.win.Resize(fyne.NewSize(1024, 641))
		if got, gpu := s.wallEntry.Size().Width, s.gpuEntry.Size().Width; !s.wallToken.Visible() || got >= gpu-150 {
			t.Errorf("a sensor's address is %v wide beside the GPU source's %v, token shown %v: no room for its token", got, gpu, s.wallToken.Visible())
		}
	})
}
