package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/kovara/desktop/chart"
)

// PaletteFor is the chart palette of a Fyne theme: the theme's background
// and text colours for the variant, and the chart package's series colours,
// which read on light and dark backgrounds alike. A nil theme means Fyne's
// default theme. Charts are drawn by the chart package, which knows no Fyne
// (docs/architecture.md).
func PaletteFor(th fyne.Theme, v fyne.ThemeVariant) chart.Palette {
	if th == nil {
		th = theme.DefaultTheme()
	}
	return chart.NewPalette(th.Color(theme.ColorNameBackground, v), th.Color(theme.ColorNameForeground, v))
}
