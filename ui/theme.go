package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Theme is Fyne's own theme with a focus colour that shows on every
// button. Fyne's focus colour is the primary colour made translucent, so
// on the primary-coloured Run button the keyboard focus was invisible:
// here focus lightens (dark variant) or darkens (light variant) whatever
// it lies on, more strongly than hovering does.
func Theme() fyne.Theme { return appTheme{theme.DefaultTheme()} }

type appTheme struct{ fyne.Theme }

var (
	focusOnDark  = color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0x5c}
	focusOnLight = color.NRGBA{A: 0x3d}
)

func (t appTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	if n == theme.ColorNameFocus {
		if v == theme.VariantLight {
			return focusOnLight
		}
		return focusOnDark
	}
	return t.Theme.Color(n, v)
}

// setEnabled enables (on) or disables ws, widgets of form, and refreshes
// the form: Fyne colours a form's labels from their widgets' state only
// when the form itself refreshes, so without it a label stayed grey beside
// a field made usable (the Kovara form's Profile, once a manifest was
// chosen), or in the normal colour beside one disabled.
func setEnabled(form *widget.Form, on bool, ws ...fyne.Disableable) {
	for _, w := range ws {
		if on {
			w.Enable()
		} else {
			w.Disable()
		}
	}
	form.Refresh()
}
