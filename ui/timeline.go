package ui

import (
	"fmt"
	"image"
	"math"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
)

// TimelinePane is the request timeline of one run or of several side by
// side: a level chooser (when there is more than one level to choose), one
// timeline per run with its Save PNG… button, or a sentence when there is
// nothing to draw (docs/plans.md, "The request timeline"). The result view
// shows one run's; Compare can show two or more runs' at one level on one
// time scale with newTimelinePane(u, files...).
type TimelinePane struct {
	content fyne.CanvasObject

	u      *App
	files  []*results.File
	levels []chart.TimelineLevel // offered: the levels every run kept
	shown  int                   // the concurrency shown; 0 with nothing to show

	level *widget.Select       // nil with fewer than two levels
	views []*ChartView         // one per run
	specs []chart.TimelineSpec // what each view draws (zero where it shows a sentence)
	saves []*widget.Button     // Save PNG… under each view
	note  *widget.Label        // the sentence shown instead of timelines; nil when there are some
}

// newTimelinePane shows the timelines of files at the levels all of them
// kept, the highest finished one first. With several files each title
// starts with the run's number as Compare names them ([1], [2], …) and
// all are drawn on the longest one's time scale.
func newTimelinePane(u *App, files ...*results.File) *TimelinePane {
	p := &TimelinePane{u: u, files: files, levels: sharedTimelineLevels(files)}
	if len(p.levels) == 0 {
		p.note = widget.NewLabel(noTimelineText(files))
		p.note.Wrapping = fyne.TextWrapWord
		p.content = container.NewVBox(p.note)
		return p
	}
	tools := container.NewHBox()
	for i := range files {
		view := NewChartView("")
		text := "Save PNG…"
		if len(files) > 1 {
			text = fmt.Sprintf("Save [%d] PNG…", i+1)
		}
		save := widget.NewButton(text, func() { u.saveChart(view, view.Title()) })
		p.views = append(p.views, view)
		p.saves = append(p.saves, save)
	}
	first := p.levels[len(p.levels)-1]
	for i := len(p.levels) - 1; i >= 0; i-- {
		if !p.levels[i].Partial {
			first = p.levels[i]
			break
		}
	}
	if len(p.levels) > 1 {
		labels := make([]string, len(p.levels))
		for i, l := range p.levels {
			labels[i] = l.Label()
		}
		p.level = widget.NewSelect(labels, func(label string) {
			if i := slices.Index(labels, label); i >= 0 {
				p.show(p.levels[i].Concurrency)
			}
		})
		p.level.SetSelected(first.Label()) // shows it
		tools.Add(widget.NewLabel("Level:"))
		tools.Add(p.level)
	} else {
		p.show(first.Concurrency)
	}
	for _, b := range p.saves {
		tools.Add(b)
	}
	views := make([]fyne.CanvasObject, len(p.views))
	for i, v := range p.views {
		views[i] = v
	}
	// One row of tools above the timelines, so the pane is no taller than
	// the charts it shares a tab bar with; two timelines a row at most,
	// so four runs still fit a 1024-wide window.
	p.content = container.NewBorder(tools, nil, nil, nil, container.NewGridWithColumns(min(len(views), 2), views...))
	return p
}

// fitHeight makes the pane ask for at most h of height, its tools
// included, where the timelines share a small window's height with a
// table (the result view).
func (p *TimelinePane) fitHeight(h float32) {
	if len(p.views) == 0 {
		return
	}
	tools := p.content.MinSize().Height - p.views[0].minHeight
	for _, v := range p.views {
		v.SetMinHeight(max(h-tools, 100))
	}
}

// show draws every run's timeline at concurrency c, on one time scale.
func (p *TimelinePane) show(c int) {
	p.shown = c
	pal := PaletteFor(p.u.fyne.Settings().Theme(), p.u.fyne.Settings().ThemeVariant())
	specs := make([]*chart.TimelineSpec, len(p.files))
	span := 0.0
	for i, f := range p.files {
		spec, err := chart.ResultTimeline(f, c, pal)
		if err != nil {
			p.views[i].SetText("Timeline unavailable: " + err.Error())
			continue
		}
		if len(p.files) > 1 {
			spec.Title = fmt.Sprintf("[%d] %s", i+1, spec.Title)
		}
		specs[i] = &spec
		span = math.Max(span, spec.Span)
	}
	p.specs = make([]chart.TimelineSpec, len(specs))
	for i, spec := range specs {
		if spec != nil {
			spec.Span = span
			p.specs[i] = *spec
			p.views[i].SetTimeline(*spec)
		}
	}
}

// sharedTimelineLevels are the levels of the first file that every file
// kept the requests of.
func sharedTimelineLevels(files []*results.File) []chart.TimelineLevel {
	if len(files) == 0 {
		return nil
	}
	var out []chart.TimelineLevel
	for _, l := range chart.TimelineLevels(files[0]) {
		if !slices.ContainsFunc(files[1:], func(f *results.File) bool { return f.SamplesAt(l.Concurrency) == nil }) {
			out = append(out, l)
		}
	}
	return out
}

// noTimelineText says why there is no timeline: the run (or which of the
// runs) was saved before requests were kept, or the runs kept no level of
// the same number of users.
func noTimelineText(files []*results.File) string {
	if len(files) == 1 {
		return chart.NoTimeline
	}
	for i, f := range files {
		if !f.HasSamples() {
			return fmt.Sprintf("Run [%d]: %s", i+1, chart.NoTimeline)
		}
	}
	return chart.NoSharedTimeline
}

// saveImage writes an image as PNG where the user chooses, offering the
// title as the file's name.
func (u *App) saveImage(img image.Image, title string) {
	if img == nil {
		u.showProblem("Nothing to save", "This chart has nothing drawn yet.")
		return
	}
	u.askSave(chart.FileName(title), "the chart", func(w fyne.URIWriteCloser) error {
		defer w.Close()
		return chart.EncodePNG(img, w)
	})
}
