package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// titleRow lays a page's title out with the page's buttons: on one row
// while the title fits beside them on one line, else the title across the
// page and the buttons under it, in as many rows as the width needs
// (flowRow). The buttons keep their own height either way. In a Border,
// a result's title was squeezed beside a longer row of buttons (Run again
// like this adds "Compare with …" first) to one word a line, the buttons
// stretched to its height, and the last of them left the 1024-wide window.
type titleRow struct {
	title   *widget.Label
	buttons *fyne.Container // laid out by a flowRow
	width   float32         // the width last laid out at; 0 before
}

// newTitleRow makes the row of title and buttons (a container whose
// Objects may change: it is laid out by flowRow).
func newTitleRow(title *widget.Label, buttons *fyne.Container) *fyne.Container {
	buttons.Layout = &flowRow{}
	return container.New(&titleRow{title: title, buttons: buttons}, title, buttons)
}

// oneLine is the title's width on one line.
func (r *titleRow) oneLine() float32 { return textWidth(r.title.Text, r.title.TextStyle) }

// together says whether the title fits beside the buttons at width w.
func (r *titleRow) together(w float32) bool {
	return r.oneLine()+theme.Padding()+flowWidth(r.buttons.Objects) <= w
}

func (r *titleRow) Layout(_ []fyne.CanvasObject, size fyne.Size) {
	r.width = size.Width
	pad := theme.Padding()
	if r.together(size.Width) {
		bw := flowWidth(r.buttons.Objects)
		bh := flowHeight(r.buttons.Objects, bw)
		tw := size.Width - bw - pad
		r.title.Resize(fyne.NewSize(tw, r.title.MinSize().Height))
		th := r.title.MinSize().Height
		h := max(th, bh)
		r.title.Resize(fyne.NewSize(tw, th))
		r.title.Move(fyne.NewPos(0, (h-th)/2))
		r.buttons.Resize(fyne.NewSize(bw, bh))
		r.buttons.Move(fyne.NewPos(size.Width-bw, (h-bh)/2))
		return
	}
	r.title.Resize(fyne.NewSize(size.Width, r.title.MinSize().Height))
	th := r.title.MinSize().Height // at the page's width
	r.title.Resize(fyne.NewSize(size.Width, th))
	r.title.Move(fyne.NewPos(0, 0))
	r.buttons.Resize(fyne.NewSize(size.Width, flowHeight(r.buttons.Objects, size.Width)))
	r.buttons.Move(fyne.NewPos(0, th+pad))
}

// MinSize is as narrow as the widest button or the title's longest word,
// and as high as the layout at the width last given needs (before any,
// one row): a wrapped label's height depends on its width the same way,
// and the canvas lays the page out again when it changes.
func (r *titleRow) MinSize([]fyne.CanvasObject) fyne.Size {
	w := max(r.title.MinSize().Width, flowRow{}.MinSize(r.buttons.Objects).Width)
	if r.width <= 0 || r.together(r.width) {
		return fyne.NewSize(w, max(r.title.MinSize().Height, flowHeight(r.buttons.Objects, flowWidth(r.buttons.Objects))))
	}
	return fyne.NewSize(w, r.title.MinSize().Height+theme.Padding()+flowHeight(r.buttons.Objects, r.width))
}

// flowRow lays its objects left to right at their own size, starting a
// new row where the next does not fit the width.
type flowRow struct{}

func (flowRow) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	flow(objects, size.Width, func(o fyne.CanvasObject, at fyne.Position, s fyne.Size) {
		o.Move(at)
		o.Resize(s)
	})
}

// MinSize is the widest object's width (the row wraps down to it) and the
// height of one row; titleRow asks flowHeight for more at its width.
func (flowRow) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objects {
		if o.Visible() {
			m = m.Max(o.MinSize())
		}
	}
	return m
}

// flow places each visible object at its own size, left to right in rows
// of at most width.
func flow(objects []fyne.CanvasObject, width float32, place func(o fyne.CanvasObject, at fyne.Position, s fyne.Size)) {
	pad := theme.Padding()
	var x, y, rowH float32
	for _, o := range objects {
		if !o.Visible() {
			continue
		}
		s := o.MinSize()
		if x > 0 && x+s.Width > width {
			x, y, rowH = 0, y+rowH+pad, 0
		}
		place(o, fyne.NewPos(x, y), s)
		x += s.Width + pad
		rowH = max(rowH, s.Height)
	}
}

// flowWidth is the objects' width on one row.
func flowWidth(objects []fyne.CanvasObject) float32 {
	var w float32
	n := 0
	for _, o := range objects {
		if o.Visible() {
			w += o.MinSize().Width
			n++
		}
	}
	return w + theme.Padding()*float32(max(n-1, 0))
}

// flowHeight is the height the objects take in rows of at most width.
func flowHeight(objects []fyne.CanvasObject, width float32) float32 {
	var h float32
	flow(objects, width, func(_ fyne.CanvasObject, at fyne.Position, s fyne.Size) { h = max(h, at.Y+s.Height) })
	return h
}
