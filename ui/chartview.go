package ui

import (
	"errors"
	"image"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
)

// Smallest size a ChartView renders at and asks for, in Fyne units. A smaller
// widget shows a 320×200 rendering scaled down to fit.
const (
	chartViewMinWidth  = 320
	chartViewMinHeight = 200
	// chartReadableHeight is the least height at which a chart with a
	// title and a legend row still has three ticks or more on its value
	// axis (chart.Render gives one tick per 38 units of plot); below it
	// the axis shows only its two ends.
	chartReadableHeight = 240
)

// resultCharts are a plan result view's charts, one a spec: each shows
// placeholder while it has too few points, and is saved as a PNG under
// run's name by its own button (added to saves), under it in its cell.
func resultCharts(u *App, specs []chart.Spec, placeholder, run string, saves *[]*widget.Button) ([]*ChartView, []fyne.CanvasObject) {
	views := make([]*ChartView, len(specs))
	cells := make([]fyne.CanvasObject, len(specs))
	for i, spec := range specs {
		views[i] = NewChartView(placeholder)
		views[i].SetSpec(spec)
		views[i].SetRun(run)
		cells[i] = savableChart(u, views[i], spec.Title, saves)
	}
	return views, cells
}

// ChartView shows one chart, or a line of text while there is nothing to draw
// yet. It renders a chart.Spec with chart.Render (or a request timeline with
// chart.RenderTimeline) at the widget's own size and renders it again
// whenever it is resized.
//
// ChartView is not safe for concurrent use: call its methods on the Fyne UI
// goroutine, and wrap calls from other goroutines (progress readers, samplers)
// in fyne.Do. Rendering happens synchronously inside SetSpec and Resize.
type ChartView struct {
	widget.BaseWidget

	placeholder string
	// draw renders what the view shows at a size in device pixels; nil
	// while it shows text. title names it (the PNG's name), failed
	// prefixes a rendering error shown in its place.
	draw func(w, h int, scale float64) (*image.RGBA, error)
	// posted and postedTimeline are what Save PNG draws (one of them;
	// both nil while text shows), as chart.Post makes it, subtitled with
	// run where that is set.
	posted         *chart.Spec
	postedTimeline *chart.TimelineSpec
	run            string
	title          string
	failed         string
	rendered       *image.RGBA
	renderedFor    [2]int // pixel size of the last rendering attempt
	err            error

	image *canvas.Image
	label *widget.Label

	// minHeight is the least height asked for: chartViewMinHeight, or
	// less where many charts share a screen (the live view).
	minHeight float32
}

// SetMinHeight lowers (or raises) the height the view asks for and
// renders at least.
func (v *ChartView) SetMinHeight(h float32) {
	v.minHeight = h
	v.Refresh()
}

// NewChartView returns a view that shows placeholder (for example
// "Waiting for data…") until SetSpec gives it at least two points to draw.
func NewChartView(placeholder string) *ChartView {
	v := &ChartView{placeholder: placeholder, minHeight: chartViewMinHeight}
	v.image = canvas.NewImageFromImage(nil)
	v.image.FillMode = canvas.ImageFillContain
	v.image.ScaleMode = canvas.ImageScaleSmooth
	v.image.Hide()
	v.label = widget.NewLabel(placeholder)
	v.label.Alignment = fyne.TextAlignCenter
	v.label.Importance = widget.LowImportance
	// A long placeholder wraps within the chart's width (half the window
	// beside another chart) rather than running past it.
	v.label.Wrapping = fyne.TextWrapWord
	v.ExtendBaseWidget(v)
	return v
}

// CreateRenderer implements fyne.Widget.
func (v *ChartView) CreateRenderer() fyne.WidgetRenderer {
	return &chartViewRenderer{
		view:    v,
		objects: []fyne.CanvasObject{container.NewStack(v.image, container.NewVBox(layout.NewSpacer(), v.label, layout.NewSpacer()))},
	}
}

// SetSpec replaces the chart. The spec's Width, Height and Scale are ignored:
// the view renders at its current size (at least 320×200) in device pixels,
// without the subtitle (the page says whose run it is). With too few points
// the placeholder text is shown instead of a chart; any other rendering
// failure is shown as text in the same place. Save PNG writes the spec as
// chart.Post makes it, subtitled with SetRun's name where one is set.
func (v *ChartView) SetSpec(spec chart.Spec) { v.SetSpecs(spec, spec) }

// SetSpecs shows screen and saves posted as its PNG: a chart whose legend
// on screen is short ("[1]", as the compare table's columns) and names each
// run in full in the file, which is seen without the table.
func (v *ChartView) SetSpecs(screen, posted chart.Spec) {
	screen.Subtitle = ""
	v.posted, v.postedTimeline = &posted, nil
	v.setDraw(screen.Title, "Chart unavailable: ", func(w, h int, scale float64) (*image.RGBA, error) {
		screen.Width, screen.Height, screen.Scale = w, h, scale
		return chart.Render(screen)
	})
}

// SetTimeline shows a request timeline (chart.RenderTimeline) as SetSpec
// shows a chart; its Width, Height and Scale are the view's.
func (v *ChartView) SetTimeline(spec chart.TimelineSpec) {
	posted := spec
	v.posted, v.postedTimeline = nil, &posted
	spec.Subtitle = ""
	v.setDraw(spec.Title, "Timeline unavailable: ", func(w, h int, scale float64) (*image.RGBA, error) {
		spec.Width, spec.Height, spec.Scale = w, h, scale
		return chart.RenderTimeline(spec)
	})
}

// SetRun names the run (chart.RunName: label, model, engine) under the
// title of the PNG Save PNG writes.
func (v *ChartView) SetRun(name string) { v.run = name }

// PostImage is what Save PNG writes: the chart drawn at chart.PostWidth ×
// chart.PostHeight in the light palette, titled and subtitled to stand
// alone; nil (with why) while text shows instead of a chart.
func (v *ChartView) PostImage() (image.Image, error) {
	if v.draw == nil || v.rendered == nil {
		return nil, errNothingDrawn
	}
	spec, tl := v.postSpecs()
	var img *image.RGBA
	var err error
	switch {
	case spec != nil:
		img, err = chart.Render(*spec)
	case tl != nil:
		img, err = chart.RenderTimeline(*tl)
	default:
		return nil, errNothingDrawn
	}
	if err != nil {
		return nil, err
	}
	return img, nil
}

// postSpecs are what PostImage draws: a chart or a timeline as chart.Post
// makes it, the run (SetRun) under its title; nil, nil while text shows.
func (v *ChartView) postSpecs() (*chart.Spec, *chart.TimelineSpec) {
	if v.draw == nil {
		return nil, nil
	}
	if v.posted != nil {
		p := chart.Post(*v.posted)
		if v.run != "" {
			p.Subtitle = v.run
		}
		return &p, nil
	}
	if v.postedTimeline != nil {
		p := chart.PostTimeline(*v.postedTimeline)
		if v.run != "" {
			p.Subtitle = v.run
		}
		return nil, &p
	}
	return nil, nil
}

// errNothingDrawn says a chart showing text has nothing to save.
var errNothingDrawn = errors.New("this chart has nothing drawn yet")

func (v *ChartView) setDraw(title, failed string, draw func(w, h int, scale float64) (*image.RGBA, error)) {
	v.draw, v.title, v.failed = draw, title, failed
	v.render()
}

// SetText shows a sentence in place of what the view drew, until the next
// SetSpec or SetTimeline.
func (v *ChartView) SetText(text string) {
	v.draw, v.posted, v.postedTimeline, v.rendered, v.err = nil, nil, nil, nil, nil
	v.image.Image = nil
	v.image.Hide()
	v.label.Importance = widget.MediumImportance
	v.label.SetText(text)
	v.label.Show()
}

// Title is the title of what is drawn ("" while text shows): the name
// its PNG is offered under.
func (v *ChartView) Title() string {
	if v.draw == nil {
		return ""
	}
	return v.title
}

// SetPlaceholder changes the text shown while there is nothing to draw.
func (v *ChartView) SetPlaceholder(text string) {
	v.placeholder = text
	if v.ShowingPlaceholder() && v.err == nil {
		v.label.SetText(text)
	}
}

// Resize implements fyne.CanvasObject; it re-renders the last spec at the new
// size.
func (v *ChartView) Resize(size fyne.Size) {
	v.BaseWidget.Resize(size)
	if v.draw != nil {
		if w, h, _ := v.pixelSize(); w != v.renderedFor[0] || h != v.renderedFor[1] {
			v.render()
		}
	}
}

// Image returns the chart now on screen, for saving as PNG; nil while the
// placeholder (or an error) is showing.
func (v *ChartView) Image() image.Image {
	if v.rendered == nil {
		return nil
	}
	return v.rendered
}

// ShowingChart reports whether a rendered chart is visible.
func (v *ChartView) ShowingChart() bool { return v.image.Visible() }

// ShowingPlaceholder reports whether the text line is visible instead of a
// chart (before data arrives, or after a rendering error).
func (v *ChartView) ShowingPlaceholder() bool { return v.label.Visible() }

// Text returns the text line's current wording.
func (v *ChartView) Text() string { return v.label.Text }

// Err returns the last rendering error other than too few points, or nil.
func (v *ChartView) Err() error { return v.err }

// pixelSize is the rendering size in device pixels and the canvas scale.
func (v *ChartView) pixelSize() (int, int, float64) {
	size := v.Size()
	w := math.Max(float64(size.Width), chartViewMinWidth)
	h := math.Max(float64(size.Height), float64(v.minHeight))
	scale := 1.0
	if app := fyne.CurrentApp(); app != nil {
		if c := app.Driver().CanvasForObject(v); c != nil && c.Scale() > 0 {
			scale = float64(c.Scale())
		}
	}
	return int(math.Round(w * scale)), int(math.Round(h * scale)), scale
}

func (v *ChartView) render() {
	w, h, scale := v.pixelSize()
	v.renderedFor = [2]int{w, h}
	img, err := v.draw(w, h, scale)
	switch {
	case err == nil:
		v.rendered, v.err = img, nil
		v.image.Image = img
		v.label.Hide()
		v.image.Show()
		v.image.Refresh()
		return
	case errors.Is(err, chart.ErrTooFewPoints):
		v.err = nil
		v.label.Importance = widget.LowImportance
		v.label.SetText(v.placeholder)
	default:
		v.err = err
		v.label.Importance = widget.LowImportance
		v.label.SetText(v.failed + err.Error())
	}
	v.rendered = nil
	v.image.Image = nil
	v.image.Hide()
	v.label.Show()
}

type chartViewRenderer struct {
	view    *ChartView
	objects []fyne.CanvasObject
}

func (r *chartViewRenderer) Layout(size fyne.Size) {
	for _, o := range r.objects {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

func (r *chartViewRenderer) MinSize() fyne.Size {
	return fyne.NewSize(chartViewMinWidth, r.view.minHeight)
}

func (r *chartViewRenderer) Refresh() {
	// A change of canvas scale (the window moved to another screen) arrives
	// as a refresh, not a resize.
	if v := r.view; v.draw != nil {
		if w, h, _ := v.pixelSize(); w != v.renderedFor[0] || h != v.renderedFor[1] {
			v.render()
		}
	}
	for _, o := range r.objects {
		o.Refresh()
	}
}

func (r *chartViewRenderer) Objects() []fyne.CanvasObject { return r.objects }

func (r *chartViewRenderer) Destroy() {}
