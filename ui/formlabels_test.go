package ui

import (
	"regexp"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// drawnDisabled says whether the form label text is drawn in the
// disabled colour in the window's markup.
func (h *harness) drawnDisabled(label string) bool {
	h.t.Helper()
	markup := test.RenderToMarkup(h.win.Canvas())
	m := regexp.MustCompile(`<text [^>]*>` + regexp.QuoteMeta(label) + `</text>`).FindString(markup)
	if m == "" {
		h.t.Fatalf("no %q label in the window's markup", label)
	}
	return regexp.MustCompile(`\bcolor="disabled"`).MatchString(m)
}

// TestProfileLabelFollowsItsField: the Kovara form's Profile label is
// grey only while its picker is disabled (no manifest) and in the normal
// text colour once a manifest makes it usable. Fyne colours a form label
// from its widget's state only when the form refreshes, so the label
// stayed grey beside a working picker, and white beside a disabled one.
func TestProfileLabelFollowsItsField(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	manifest := writeTestManifest(t)
	steps := []struct {
		name     string
		do       func()
		disabled bool
	}{
		{"no manifest, as the form opens", func() {}, true},
		{"a manifest chosen", func() { b.kovara.loadManifest(manifest) }, false},
		{"back to none", func() { b.kovara.manifestSelect.SetSelected(manifestNone) }, true},
		{"the manifest again", func() { b.kovara.manifestSelect.SetSelected(manifest) }, false},
	}
	h.locked(func() {
		b.planSelect.SetSelected(planKovara)
		h.win.Resize(h.win.Canvas().Size().Max(h.win.Content().MinSize()))
	})
	for _, st := range steps {
		h.locked(func() {
			st.do()
			if got := b.kovara.profileSelect.Disabled(); got != st.disabled {
				t.Fatalf("%s: the picker disabled %v, want %v", st.name, got, st.disabled)
			}
			if got := h.drawnDisabled("Profile"); got != st.disabled {
				t.Errorf("%s: the Profile label drawn grey %v, want %v", st.name, got, st.disabled)
			}
		})
	}
}

// TestKovaraFormExplainsItsWords: the words a newcomer meets first on the
// Kovara form — a protocol test, a profile — are each explained beside
// their picker, and the empty profile picker says what it waits for.
func TestKovaraFormExplainsItsWords(t *testing.T) {
	h := newHarness(t)
	h.locked(func() {
		h.u.bench.planSelect.SetSelected(planKovara)
		h.win.Resize(h.win.Canvas().Size().Max(h.win.Content().MinSize()))
		markup := test.RenderToMarkup(h.win.Canvas())
		for _, want := range []string{manifestNone, manifestHint, profileHint, "(choose a manifest first)"} {
			if !regexp.MustCompile(`<text [^>]*>` + regexp.QuoteMeta(want) + `</text>`).MatchString(markup) {
				t.Errorf("the form does not show %q", want)
			}
		}
		if !strings.Contains(manifestHint, "protocol test") || !strings.Contains(profileHint, "manifest") {
			t.Errorf("the hints do not name what they explain: %q, %q", manifestHint, profileHint)
		}
	})
}
