package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// listStatus is the status line the Endpoints list shows under name (its
// row made and filled as the list does), and whether it is in the
// warning colour.
func (h *harness) listStatus(name string) (string, bool) {
	h.t.Helper()
	s := h.u.endpointS
	for i, n := range s.names {
		if n == name {
			row := s.list.CreateItem()
			s.list.UpdateItem(i, row)
			l := row.(*fyne.Container).Objects[1].(*widget.Label)
			return l.Text, l.Importance == widget.WarningImportance
		}
	}
	h.t.Fatalf("no %q in the list %v", name, s.names)
	return "", false
}

// TestEndpointListSaysTheLatestCheck: the Endpoints list says each
// endpoint's latest check in the Test report's own first sentence, with
// when: a refused API key reads as refused (not "the server may be
// down", nor in Save's note), and a server gone since its passing Test
// reads as failed, never as the older "Serving 1 model", whether the
// Test or a run's check found it gone.
func TestEndpointListSaysTheLatestCheck(t *testing.T) {
	h := newHarness(t)
	s := h.u.endpointS
	keyed := startTestSim(t, sim.Config{Personality: sim.LlamaCpp, APIKey: "right-key", TokenInterval: time.Millisecond, PrefillRate: 1e6})
	srv, plain, err := sim.Start(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h.addEndpoint("keyed box", keyed, "wrong-key")
	h.addEndpoint("lab box", plain, "")
	checked := regexp.MustCompile(`^Checked \d\d:\d\d: `)
	status := func(what, name, want string, wantFailed bool) {
		t.Helper()
		var got string
		var failed bool
		h.locked(func() { got, failed = h.listStatus(name) })
		if !checked.MatchString(got) || !strings.HasPrefix(checked.ReplaceAllString(got, ""), want) {
			t.Errorf("%s: the list says %q under %q, want \"Checked HH:MM: %s…\"", what, got, name, want)
		}
		if failed != wantFailed {
			t.Errorf("%s: %q in the warning colour %v, want %v", what, got, failed, wantFailed)
		}
	}
	runTest := func(name string) string {
		t.Helper()
		h.locked(func() {
			s.list.Select(0)
			for i, n := range s.names {
				if n == name {
					s.list.Select(i)
				}
			}
		})
		// The key comes from the keyring off the UI goroutine.
		h.waitFor("the key of "+name, 5*time.Second, func() bool { return s.keyEntry.PlaceHolder != "reading the keyring…" })
		h.locked(func() { test.Tap(s.testButton) })
		var report string
		h.waitFor("the Test of "+name, 20*time.Second, func() bool {
			report = s.testResult.Text
			return s.tested == testPassed || s.tested == testFailed
		})
		return report
	}

	h.locked(func() {
		if got, _ := h.listStatus("lab box"); got != "" {
			t.Errorf("before any check the list says %q", got)
		}
	})

	// A wrong key: the Test's words, in the list and the note.
	report := runTest("keyed box")
	first := strings.SplitN(report, "\n", 2)[0]
	if !strings.HasPrefix(first, "Failed: ") || !strings.Contains(first, "the server refused the API key") {
		t.Fatalf("the Test of a wrong key says %q", report)
	}
	status("a wrong key", "keyed box", first, true)
	h.locked(func() {
		test.Tap(s.saveButton)
		if note := s.formNote.Text; strings.Contains(note, "down") || !strings.Contains(note, "failed") {
			t.Errorf("Save after a refused key says %q", note)
		}
	})

	// A passing Test, then the server gone: the Test says so.
	if report := runTest("lab box"); !strings.HasPrefix(report, "Serving 1 model") {
		t.Fatalf("the Test of a running server says %q", report)
	}
	status("a running server", "lab box", "Serving 1 model", false)
	srv.Close()
	report = runTest("lab box")
	status("the server gone, tested", "lab box", strings.SplitN(report, "\n", 2)[0], true)
	if !strings.HasPrefix(report, "Failed: nothing is listening") {
		t.Errorf("the Test of a gone server says %q", report)
	}

	// Passing again, then a run's check finds it gone: the list and the
	// report still on the form say the failure, not "Serving 1 model".
	srv2, again, err := sim.Start(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, strings.TrimPrefix(plain, "http://"))
	if err != nil {
		t.Fatalf("the simulator again at %s: %v", plain, err)
	}
	t.Cleanup(func() { srv2.Close() })
	if again != plain {
		t.Fatalf("the simulator came back at %s, not %s", again, plain)
	}
	if report := runTest("lab box"); !strings.HasPrefix(report, "Serving 1 model") {
		t.Fatalf("the Test of the server back says %q", report)
	}
	srv2.Close()
	ep := setup.Endpoint{Name: "lab box", URL: plain}
	_, cerr := engine.Check(context.Background(), ep, "")
	if cerr == nil {
		t.Fatal("a run's check of a closed server passed")
	}
	h.locked(func() {
		// What a run that could not reach the endpoint hands the app.
		h.u.rememberCheck(ep, "", nil, cerr)
	})
	status("the server gone, found by a run", "lab box", "Failed: "+cerr.Error(), true)
	h.locked(func() {
		if got := s.testResult.Text; strings.Contains(got, "Serving") || !strings.Contains(got, "Failed: "+cerr.Error()) {
			t.Errorf("after a run found the server gone, the form's report says %q", got)
		}
		if s.testResult.Importance != widget.WarningImportance {
			t.Errorf("the report of the server gone is not in the warning colour: %q", s.testResult.Text)
		}
		// A run it answered since: the failure is no longer the news.
		h.u.rememberCheck(ep, "kovara-sim-8b", &results.Detection{Family: results.FamilyVLLM}, nil)
		if got := s.testResult.Text; strings.Contains(got, "Failed") || s.testResult.Importance == widget.WarningImportance {
			t.Errorf("after a run the server answered, the form's report says %q", got)
		}
		// A run stopped by its user says nothing of the endpoint.
		h.u.rememberCheck(ep, "kovara-sim-8b", nil, context.Canceled)
	})
	status("a run it answered, then one stopped", "lab box", "Answered a run", false)
}
