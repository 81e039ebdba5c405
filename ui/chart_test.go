package ui

import (
	"flag"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// -update rewrites the golden files under testdata/ (the screens' markup)
// instead of comparing against them. The flag is registered here only when
// no other test file of the package has registered one already, so several
// golden tests can share it.
var updateGolden = func() func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
	return func() bool {
		f := flag.Lookup("update")
		return f != nil && f.Value.String() == "true"
	}
}()

func sameRGB(a color.Color, b color.Color) bool {
	na := color.NRGBAModel.Convert(a).(color.NRGBA)
	nb := color.NRGBAModel.Convert(b).(color.NRGBA)
	return na.R == nb.R && na.G == nb.G && na.B == nb.B
}

func nearRGB(a, b color.Color, tol int) bool {
	na := color.NRGBAModel.Convert(a).(color.NRGBA)
	nb := color.NRGBAModel.Convert(b).(color.NRGBA)
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(na.R, nb.R) <= tol && d(na.G, nb.G) <= tol && d(na.B, nb.B) <= tol
}

func TestPaletteFor(t *testing.T) {
	test.NewTempApp(t)
	th := theme.DefaultTheme()
	for _, v := range []struct {
		name    string
		variant fyne.ThemeVariant
	}{{"dark", theme.VariantDark}, {"light", theme.VariantLight}} {
		variant := v.variant
		p := PaletteFor(th, variant)
		if !sameRGB(p.Background, th.Color(theme.ColorNameBackground, variant)) {
			t.Errorf("%s: background %v, want theme's", v.name, p.Background)
		}
		if !sameRGB(p.Foreground, th.Color(theme.ColorNameForeground, variant)) {
			t.Errorf("%s: foreground %v, want theme's", v.name, p.Foreground)
		}
		if sameRGB(p.Grid, p.Background) || sameRGB(p.Grid, p.Foreground) {
			t.Errorf("%s: grid %v should sit between background and foreground", v.name, p.Grid)
		}
		if len(p.Series) < 4 {
			t.Fatalf("%s: %d series colours, want at least 4", v.name, len(p.Series))
		}
	}
	// Every series colour must read on both backgrounds (WCAG contrast >= 3).
	dark := PaletteFor(th, theme.VariantDark).Background
	light := PaletteFor(th, theme.VariantLight).Background
	for i, c := range PaletteFor(th, theme.VariantDark).Series {
		for _, bg := range []color.Color{dark, light} {
			if cr := contrast(c, bg); cr < 3 {
				t.Errorf("series colour %d %v: contrast %.2f against %v", i, c, cr, bg)
			}
		}
	}
	if p := PaletteFor(nil, theme.VariantDark); p.Background == nil {
		t.Error("nil theme gave no background")
	}
}

func contrast(a, b color.Color) float64 {
	lum := func(c color.Color) float64 {
		n := color.NRGBAModel.Convert(c).(color.NRGBA)
		lin := func(v uint8) float64 {
			f := float64(v) / 255
			if f <= 0.04045 {
				return f / 12.92
			}
			return math.Pow((f+0.055)/1.055, 2.4)
		}
		return 0.2126*lin(n.R) + 0.7152*lin(n.G) + 0.0722*lin(n.B)
	}
	la, lb := lum(a), lum(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}
