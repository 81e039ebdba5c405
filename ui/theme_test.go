package ui

import (
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// TestFocusShowsOnEveryButton: with the app's theme a focused button —
// the primary-coloured Run button above all — looks different from an
// unfocused one, in both variants. Under Fyne's own theme the Run
// button's focus did not show.
func TestFocusShowsOnEveryButton(t *testing.T) {
	for _, variant := range []fyne.ThemeVariant{theme.VariantDark, theme.VariantLight} {
		for _, imp := range []widget.Importance{widget.HighImportance, widget.MediumImportance, widget.DangerImportance} {
			if got := focusContrast(t, Theme(), variant, imp); got < 40 {
				t.Errorf("variant %d, importance %d: focus changes the button by %d of 255, want at least 40", variant, imp, got)
			}
		}
	}
	if got := focusContrast(t, theme.DefaultTheme(), theme.VariantDark, widget.HighImportance); got >= 40 {
		t.Logf("Fyne's own theme now shows focus on a primary button (%d): the app theme may no longer be needed", got)
	}
}

// focusContrast is how far (the largest channel difference) a focused
// button's background is from the same button unfocused.
func focusContrast(t *testing.T, th fyne.Theme, v fyne.ThemeVariant, imp widget.Importance) int {
	t.Helper()
	a := test.NewTempApp(t)
	a.Settings().SetTheme(variantTheme{th, v})
	b := widget.NewButton("Run", func() {})
	b.Importance = imp
	w := test.NewWindow(b)
	defer w.Close()
	w.Resize(fyne.NewSize(120, 60))
	at := func() color.Color {
		img := w.Canvas().Capture()
		return img.At(8, img.Bounds().Dy()/2) // inside the button, left of its text
	}
	before := at()
	w.Canvas().Focus(b)
	after := at()
	r1, g1, b1, _ := before.RGBA()
	r2, g2, b2, _ := after.RGBA()
	d := 0
	for _, p := range [][2]uint32{{r1, r2}, {g1, g2}, {b1, b2}} {
		x := int(p[0]>>8) - int(p[1]>>8)
		d = max(d, x, -x)
	}
	return d
}

// variantTheme pins a theme to one variant.
type variantTheme struct {
	fyne.Theme
	v fyne.ThemeVariant
}

func (t variantTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.v)
}
