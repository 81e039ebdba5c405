package ui

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"
)

// A whole path typed in the save dialog's name box made Fyne hand back an
// error, and the dialog closed without a word: the failure is said now.
func TestSaveFailureIsSaid(t *testing.T) {
	h := newHarness(t)
	wrote := false
	answer := h.u.saveChosen("the file", func(fyne.URIWriteCloser) error { wrote = true; return nil })

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

// TestSaveSaysWhere: a file saved through the save dialog (Save report…,
// Save CSV…, Save PNG…) is said with its path along the window's foot,
// with Show folder, until closed; Save report… said nothing of where it
// wrote. A failed write says its problem and no path.
func TestSaveSaysWhere(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(t.TempDir(), "kovara report.html")
	writer := func() fyne.URIWriteCloser {
		w, err := fstorage.Writer(fstorage.NewFileURI(path))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	n := h.u.notice
	h.locked(func() {
		if n.content.Visible() {
			t.Fatalf("a notice before anything was saved: %q", n.text.Text)
		}
		h.u.saveChosen("the report", func(w fyne.URIWriteCloser) error {
			return writeClose(w, func(w io.Writer) error { _, err := io.WriteString(w, "<html></html>"); return err })
		})(writer(), nil)
		if got, want := n.text.Text, "Saved the report to "+path; got != want || !n.content.Visible() || !n.show.Visible() {
			t.Errorf("after saving the window says %q (shown %v, Show folder %v), want %q", got, n.content.Visible(), n.show.Visible(), want)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != "<html></html>" {
			t.Errorf("the file holds %q (%v)", data, err)
		}
		// Said in the window itself, where a 1024×640 window shows it.
		h.win.Resize(minWindowSize)
		if !strings.Contains(test.RenderToMarkup(h.win.Canvas()), path) {
			t.Errorf("the path is not drawn in the window")
		}
		test.Tap(n.close)
		if n.content.Visible() {
			t.Errorf("the close button left the notice")
		}

		h.u.saveChosen("the report", func(w fyne.URIWriteCloser) error {
			w.Close()
			return errors.New("disk full")
		})(writer(), nil)
		if n.content.Visible() {
			t.Errorf("a failed write said %q", n.text.Text)
		}
	})
}
