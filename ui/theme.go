package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
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
