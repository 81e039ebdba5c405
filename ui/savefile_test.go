package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// A whole path typed in the save dialog's name box made Fyne hand back an
// error, and the dialog closed without a word: the failure is said now.
func TestSaveFailureIsSaid(t *testing.T) {
	h := newHarness(t)
	wrote := false
	answer := h.u.saveChosen(func(fyne.URIWriteCloser) error { wrote = true; return nil })

	answer(nil, nil) // Cancel
	if top := h.win.Canvas().Overlays().Top(); top != nil || wrote {
		t.Fatalf("Cancel showed a dialog (%v) or wrote (%v)", top != nil, wrote)
	}

	answer(nil, errors.New("open /home/me/tmp/run.json: no such file or directory"))
	top := h.win.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("a failed save said nothing")
	}
	text := test.RenderObjectToMarkup(top)
	for _, want := range []string{"Not saved", "no such file or directory", "Type only the file's name"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, text)
		}
	}
	if wrote {
		t.Error("a failed save still wrote")
	}
}
