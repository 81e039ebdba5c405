package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/plans/planstest"
)

// TestCopyAsMarkdownKeepsEveryPrivateKeyOut: on every plan's result view,
// clean and failed, with a distinct value planted in every private key of
// its local section (results.PrivateKeys), Copy as Markdown puts none of
// them on the clipboard.
func TestCopyAsMarkdownKeepsEveryPrivateKeyOut(t *testing.T) {
	h := newHarness(t)
	old := copiedFor
	copiedFor = 1 << 40 // the button's words stay for the test's end
	t.Cleanup(func() { copiedFor = old })
	for _, c := range planstest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			d, plants := planstest.Planted(t, c.Doc)
			id := h.savedLabelled(d)
			h.locked(func() {
				h.u.fyne.Clipboard().SetContent("")
				v := h.u.resultView(d, id, nil, func() {})
				h.win.SetContent(v.content)
				b := partsOf(t, v.content).buttons[copyMarkdownText]
				if b == nil {
					t.Fatal("no Copy as Markdown button")
				}
				test.Tap(b)
				md := h.u.fyne.Clipboard().Content()
				if !strings.Contains(md, "\n| ") {
					t.Fatalf("the clipboard holds no Markdown table:\n%s", md)
				}
				for _, p := range plants {
					if strings.Contains(md, p.Value) {
						t.Errorf("the Markdown holds %s's %s (%q)", p.Key, p.Path, p.Value)
					}
				}
			})
		})
	}
}
