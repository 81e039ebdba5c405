package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// lockedKeys is a keyring that refuses everything, and counts the asks.
type lockedKeys struct{ asked int }

func (k *lockedKeys) Get(string) (string, error) { k.asked++; return "", storage.ErrKeyringLocked }
func (k *lockedKeys) Set(string, string) error   { k.asked++; return storage.ErrKeyringLocked }
func (k *lockedKeys) Delete(string) error        { k.asked++; return storage.ErrKeyringLocked }

// An endpoint saved without an API key never asks the keyring: on a
// desktop whose keyring is locked (or missing), selecting it and running
// it say nothing about a key nobody gave.
func TestEndpointWithoutKeyLeavesTheKeyringAlone(t *testing.T) {
	h := newHarness(t)
	keys := &lockedKeys{}
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6})
	s, b := h.u.endpointS, h.u.bench
	h.locked(func() {
		h.u.keys = keys
		test.Tap(s.addButton)
		s.nameEntry.SetText("open box")
		s.urlEntry.SetText(url)
		test.Tap(s.saveButton)
		if e, ok, _ := h.u.endpoints.Get("open box"); !ok || !e.NoKey {
			t.Fatalf("saved %+v (found %v): want it marked as having no key", e, ok)
		}
		s.list.Select(0)
		s.list.Select(1)
		b.refreshEndpoints()
		b.selectEndpoint("open box")
		h.setPlan("1", "2", "4")
		test.Tap(b.runButton)
	})
	h.waitFor("the result", 30*time.Second, func() bool { return b.result != nil })
	h.locked(func() {
		if strings.Contains(s.formNote.Text, "keyring") || strings.Contains(b.live.lastError.Text, "keyring") {
			t.Errorf("the keyring was mentioned for an endpoint without a key: form %q, run %q", s.formNote.Text, b.live.lastError.Text)
		}
		// Deleting an old key on Save is the only ask allowed.
		if keys.asked > 1 {
			t.Errorf("the keyring was asked %d times", keys.asked)
		}
	})
}
