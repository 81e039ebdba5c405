package ui

import (
	"image"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/kovara/desktop/chart"
)

// The tests below replace Fyne's global app with test.NewTempApp, so they do
// not run in parallel.

var viewPalette = chart.Palette{
	Background: color.NRGBA{R: 0x10, G: 0x30, B: 0x50, A: 0xFF}, // distinct from any theme colour
	Foreground: color.NRGBA{R: 0xF0, G: 0xF0, B: 0xF0, A: 0xFF},
}

func viewSpec(points int) chart.Spec {
	s := chart.Series{Name: "tok/s"}
	for i := range points {
		s.X = append(s.X, float64(i))
		s.Y = append(s.Y, 100+10*math.Sin(float64(i)))
	}
	return chart.Spec{Title: "Output tokens/s", Series: []chart.Series{s}, Palette: viewPalette}
}

func TestChartViewPlaceholderThenChart(t *testing.T) {
	test.NewTempApp(t)
	v := NewChartView("Waiting for data…")
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(600, 400))

	if !v.ShowingPlaceholder() || v.ShowingChart() {
		t.Fatal("a new view should show its placeholder")
	}
	if v.Text() != "Waiting for data…" {
		t.Errorf("text %q", v.Text())
	}
	if v.Image() != nil {
		t.Error("Image() before any chart should be nil")
	}

	steps := []struct {
		name      string
		points    int
		wantChart bool
	}{
		{"no points", 0, false},
		{"one point", 1, false},
		{"two points", 2, true},
		{"many points", 50, true},
		{"back to one point (a new run)", 1, false},
		{"data again", 10, true},
	}
	for _, st := range steps {
		v.SetSpec(viewSpec(st.points))
		if v.ShowingChart() != st.wantChart || v.ShowingPlaceholder() == st.wantChart {
			t.Fatalf("%s: chart shown %v, placeholder shown %v", st.name, v.ShowingChart(), v.ShowingPlaceholder())
		}
		if st.wantChart {
			img := v.Image()
			if img == nil {
				t.Fatalf("%s: no image", st.name)
			}
			// Rendered at the view's size (the canvas scale is 1 in tests).
			if got, want := img.Bounds().Size(), sizeInPixels(v.Size()); got != want {
				t.Errorf("%s: image %v, view %v", st.name, got, want)
			}
		} else {
			if v.Image() != nil {
				t.Errorf("%s: Image() should be nil while the placeholder shows", st.name)
			}
			if v.Text() != "Waiting for data…" {
				t.Errorf("%s: text %q", st.name, v.Text())
			}
		}
		if v.Err() != nil {
			t.Errorf("%s: Err() = %v", st.name, v.Err())
		}
	}

	// The chart really is on the canvas: the captured window contains the
	// chart's background colour.
	shot := w.Canvas().Capture()
	if !containsColour(shot, viewPalette.Background) {
		t.Error("captured window does not show the chart")
	}
}

func TestChartViewRerendersOnResize(t *testing.T) {
	test.NewTempApp(t)
	v := NewChartView("Waiting for data…")
	w := test.NewTempWindow(t, v)
	w.Resize(fyne.NewSize(500, 300))
	v.SetSpec(viewSpec(20))
	before := v.Image().Bounds().Size()

	w.Resize(fyne.NewSize(900, 600))
	after := v.Image().Bounds().Size()
	if after == before {
		t.Fatalf("image still %v after the window grew", after)
	}
	if want := sizeInPixels(v.Size()); after != want {
		t.Errorf("image %v, view %v", after, want)
	}
}

func TestChartViewMinimumRenderSize(t *testing.T) {
	test.NewTempApp(t)
	v := NewChartView("…")
	if got := v.MinSize(); got.Width < chartViewMinWidth || got.Height < chartViewMinHeight {
		t.Errorf("MinSize %v, want at least %dx%d", got, chartViewMinWidth, chartViewMinHeight)
	}
	v.Resize(fyne.NewSize(100, 60))
	v.SetSpec(viewSpec(5))
	if got := v.Image().Bounds().Size(); got != image.Pt(chartViewMinWidth, chartViewMinHeight) {
		t.Errorf("small view rendered at %v, want the 320x200 minimum", got)
	}
}

func TestChartViewPlaceholderText(t *testing.T) {
	test.NewTempApp(t)
	v := NewChartView("Waiting for data…")
	v.SetPlaceholder("No GPU telemetry source set")
	if v.Text() != "No GPU telemetry source set" {
		t.Errorf("text %q", v.Text())
	}
	v.SetSpec(viewSpec(3))
	v.SetPlaceholder("changed while the chart shows")
	if !v.ShowingChart() {
		t.Error("changing the placeholder hid the chart")
	}
	v.SetSpec(viewSpec(0))
	if v.Text() != "changed while the chart shows" {
		t.Errorf("text %q", v.Text())
	}
}

func sizeInPixels(s fyne.Size) image.Point {
	return image.Pt(
		int(math.Round(math.Max(float64(s.Width), chartViewMinWidth))),
		int(math.Round(math.Max(float64(s.Height), chartViewMinHeight))),
	)
}

func containsColour(img image.Image, c color.Color) bool {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			if nearRGB(img.At(x, y), c, 3) {
				return true
			}
		}
	}
	return false
}
