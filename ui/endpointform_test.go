package ui

import (
	"regexp"
	"testing"

	"fyne.io/fyne/v2/test"

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
	labels := []string{"Name", "Address", "API key", "Timeout (s)", "GPU telemetry"}
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
