package ui

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/sim/simtest"
	"github.com/kovara/desktop/internal/keytest"
)

// Secrets in the GUI: an endpoint saved with a key through the form, a
// benchmark run through it against a server that checks the key (and, on
// some requests, repeats it in its errors), an endpoint Test with a wrong
// key: the key is in no file under the app's folders, on no label of the
// window, in no dialog.

const guiKey = "sk-gui-5d0c81f2a9b34e67c1d8e0f92a3b4c5d6e7f8091"

// windowTexts gathers the text of every label, rich text, entry (but the
// key field), select and button in o's tree.
func windowTexts(t *testing.T, o fyne.CanvasObject, skip *formEntry, out *[]string) {
	switch x := o.(type) {
	case nil:
		return
	case *widget.Label:
		*out = append(*out, x.Text)
	case *widget.RichText:
		*out = append(*out, x.String())
	case *widget.Entry:
		*out = append(*out, x.Text)
		return
	case *formEntry:
		if x != skip {
			*out = append(*out, x.Text)
		}
		return
	case *widget.Select:
		*out = append(*out, x.Selected)
		*out = append(*out, x.Options...)
	case *widget.Button:
		*out = append(*out, x.Text)
	case *fyne.Container:
		for _, c := range x.Objects {
			windowTexts(t, c, skip, out)
		}
		return
	}
	if w, ok := o.(fyne.Widget); ok {
		for _, c := range test.TempWidgetRenderer(t, w).Objects() {
			windowTexts(t, c, skip, out)
		}
	}
}

// checkWindow fails for any part of the key on the screens and dialogs.
func (h *harness) checkWindow(where string) {
	h.t.Helper()
	var texts []string
	h.locked(func() {
		// Every screen, whether or not it is the one showing.
		for _, o := range []fyne.CanvasObject{h.u.bench.content, h.u.bench.setup, h.u.endpointS.content, h.u.historyScreen.content, h.u.compareScreen.content} {
			windowTexts(h.T(), o, h.u.endpointS.keyEntry, &texts)
		}
		if h.u.bench.live != nil {
			windowTexts(h.T(), h.u.bench.live.content, nil, &texts)
		}
		if h.u.bench.result != nil {
			windowTexts(h.T(), h.u.bench.result.content, nil, &texts)
		}
		for _, o := range h.win.Canvas().Overlays().List() {
			windowTexts(h.T(), o, nil, &texts)
		}
	})
	if leak := keytest.Find(strings.Join(texts, "\n"), guiKey); leak != "" {
		h.t.Errorf("%s: the window shows the key: %s", where, leak)
	}
	if len(texts) < 20 {
		h.t.Errorf("%s: only %d texts found on the screens", where, len(texts))
	}
}

func TestGUIKeyLeavesNoTrace(t *testing.T) {
	h := newHarness(t)
	const requests = 6
	first := prompt.MeasuredRequest(1, requests, 0, 0)
	// Two measured requests of the first level answer with an error event
	// that repeats the key, cut by the 200-byte message limit.
	// Two requests' errors repeat the key, in the stream as a server
	// would send them.
	ks := keytest.NewServer(t, simtest.Fast(), guiKey, func(w http.ResponseWriter, n int64) bool {
		if n != first+1 && n != first+4 {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":" hi"}}]}`+"\n\n")
		fmt.Fprintf(w, "data: {\"error\":{\"message\":%q}}\n\n", strings.Repeat("y", 178)+guiKey)
		return true
	})
	s := h.u.endpointS

	// Save an endpoint with its key through the form, then Test it.
	h.locked(func() {
		test.Tap(s.addButton)
		test.Type(s.nameEntry, "locked box")
		test.Type(s.urlEntry, ks.URL)
		test.Type(s.keyEntry, guiKey)
		test.Tap(s.saveButton)
		if !strings.HasPrefix(s.formNote.Text, "Saved") {
			t.Fatalf("after Save: %q", s.formNote.Text)
		}
		test.Tap(s.testButton)
	})
	h.waitFor("the Test result", 30*time.Second, func() bool {
		return strings.Contains(s.testResult.Text, "Serving 1 model") || strings.HasPrefix(s.testResult.Text, "Failed")
	})
	h.locked(func() {
		if !strings.Contains(s.testResult.Text, "Serving 1 model") {
			t.Fatalf("Test: %q", s.testResult.Text)
		}
	})
	h.checkWindow("after Test")

	// Run a small benchmark through it.
	b := h.u.bench
	h.locked(func() {
		b.selectEndpoint("locked box")
		h.setPlan("1,2", strconv.Itoa(requests), "6")
		if b.runButton.Disabled() {
			t.Fatalf("run disabled: %q", b.planNote.Text)
		}
		test.Tap(b.runButton)
	})
	h.waitFor("the result", 60*time.Second, func() bool { return b.result != nil })
	h.checkWindow("after the run")
	h.locked(func() {
		r := b.result
		if len(r.rows) != 2 || r.rows[0][1] != fmt.Sprintf("%d / 2", requests-2) {
			t.Errorf("result rows %v: the key reached the server and two requests failed", r.rows)
		}
	})
	list, err := h.u.lib.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("library: %v %v", list, err)
	}
	f, err := h.u.lib.Load(list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if msgs := f.Local.Levels[0].Messages["error_event"]; len(msgs) == 0 {
		t.Errorf("the echoed errors are not in the file: %+v", f.Local.Levels[0])
	}
	if ks.Seen() < requests {
		t.Errorf("the server saw the key %d times", ks.Seen())
	}

	// A wrong key that the server repeats in its refusal.
	h.locked(func() {
		for i, n := range s.names {
			if n == "locked box" {
				s.list.Select(i)
			}
		}
	})
	h.waitFor("the key read back", 10*time.Second, func() bool { return s.keyEntry.Text == guiKey })
	h.locked(func() {
		s.keyEntry.SetText(guiKey[:len(guiKey)-1] + "X")
		test.Tap(s.testButton)
	})
	h.waitFor("the refusal", 30*time.Second, func() bool { return strings.HasPrefix(s.testResult.Text, "Failed:") })
	h.locked(func() {
		if !strings.Contains(s.testResult.Text, "check the key") {
			t.Errorf("refusal: %q", s.testResult.Text)
		}
	})
	h.checkWindow("after a refused key")

	// Export view of the run, then every file the app wrote.
	h.locked(func() { h.u.showExport(list[0].ID) })
	h.checkWindow("with the export dialog")
	if n := keytest.ScanTree(t, h.dir, guiKey); n < 3 {
		t.Errorf("scanned only %d files under %s", n, h.dir)
	}
	// Preferences (the last endpoint, recent manifests) hold names only.
	for _, k := range []string{prefLastEndpoint, prefRecentManifests} {
		if leak := keytest.Find(h.u.fyne.Preferences().String(k)+strings.Join(h.u.fyne.Preferences().StringList(k), " "), guiKey); leak != "" {
			t.Errorf("preference %s holds the key: %s", k, leak)
		}
	}
}
