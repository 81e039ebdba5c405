package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Fyne gives a mouse wheel's turn to the innermost fyne.Scrollable under
// the pointer and to no other (fyne-io/fyne#1939, #3442: "each type of
// interaction works only on the child-most item in the tree"). Every text
// field holds a scroll of its own (its text, clipped to its width), and
// every table one for its cells, so the wheel did nothing over a form's
// fields or a result's table: the page around them never heard it. A
// page made by pageScroll hears every turn over it (wheelCatcher) and
// hands it to the innermost scroll under the pointer that can move that
// way — a table's, a field's, a scroll inside the page — else to the page.

// pageScroll is a page that scrolls vertically, whatever is under the
// pointer when the wheel turns.
func pageScroll(content fyne.CanvasObject) fyne.CanvasObject {
	s := container.NewVScroll(content)
	return container.NewStack(s, newWheelCatcher(s))
}

// innerScroller is a widget with a scroll of its own inside it (a text
// field's, a table's), which the wheel may move when it can.
type innerScroller interface {
	innerScroll() *container.Scroll
}

// wheelCatcher lies over a page, drawn as nothing and deaf to all but the
// wheel (taps, hovers and drags reach what is under it), and gives each
// turn of the wheel to the scroll that should move (Scrolled).
type wheelCatcher struct {
	widget.BaseWidget
	page *container.Scroll
}

func newWheelCatcher(page *container.Scroll) *wheelCatcher {
	w := &wheelCatcher{page: page}
	w.ExtendBaseWidget(w)
	return w
}

func (w *wheelCatcher) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(&fyne.Container{})
}

func (w *wheelCatcher) MinSize() fyne.Size { return fyne.Size{} }

// Scrolled moves the innermost scroll under the pointer that can move
// the way the wheel turned, else the page.
func (w *wheelCatcher) Scrolled(ev *fyne.ScrollEvent) {
	at := ev.AbsolutePosition
	if at == (fyne.Position{}) {
		// Fyne's test driver says no position: the event's own, from
		// this catcher's place on the canvas.
		at = absolutePos(w).Add(ev.Position)
	}
	target := w.page
	walkScrolls(w.page.Content, func(o fyne.CanvasObject, s *container.Scroll) {
		if s == nil || !canMove(s, ev.Scrolled) {
			return
		}
		p := absolutePos(o)
		if size := o.Size(); at.X >= p.X && at.Y >= p.Y && at.X < p.X+size.Width && at.Y < p.Y+size.Height {
			target = s // walked outer first: the last is the innermost
		}
	})
	target.Scrolled(ev)
}

// absolutePos is where o is on its canvas.
func absolutePos(o fyne.CanvasObject) fyne.Position {
	if a := fyne.CurrentApp(); a != nil {
		return a.Driver().AbsolutePositionForObject(o)
	}
	return fyne.Position{}
}

// walkScrolls calls f, outer first, for each visible scroll in o's tree
// as the app builds its pages (containers, forms, accordions, tabs,
// splits) with the object that shows it: a scroll inside the page, or a
// text field's or table's own (innerScroller). A widget of another kind
// is not looked into: the wheel over it moves the page.
func walkScrolls(o fyne.CanvasObject, f func(o fyne.CanvasObject, s *container.Scroll)) {
	if o == nil || !o.Visible() {
		return
	}
	switch x := o.(type) {
	case innerScroller:
		f(o, x.innerScroll())
	case *container.Scroll:
		f(o, x)
		walkScrolls(x.Content, f)
	case *fyne.Container:
		for _, c := range x.Objects {
			walkScrolls(c, f)
		}
	case *widget.Form:
		for _, it := range x.Items {
			walkScrolls(it.Widget, f)
		}
	case *widget.Accordion:
		for _, it := range x.Items {
			if it.Open {
				walkScrolls(it.Detail, f)
			}
		}
	case *container.AppTabs:
		if t := x.Selected(); t != nil {
			walkScrolls(t.Content, f)
		}
	case *container.Split:
		walkScrolls(x.Leading, f)
		walkScrolls(x.Trailing, f)
	}
}

// canMove says whether s can move the way delta turns: across for a
// turn mostly sideways (a tilt, Shift and the wheel), else up or down.
func canMove(s *container.Scroll, delta fyne.Delta) bool {
	if s.Content == nil {
		return false
	}
	room := s.Content.MinSize().Subtract(s.Size())
	if abs32(delta.DX) > abs32(delta.DY) {
		if s.Direction != container.ScrollBoth && s.Direction != container.ScrollHorizontalOnly {
			return false
		}
		return (delta.DX < 0 && s.Offset.X < room.Width) || (delta.DX > 0 && s.Offset.X > 0)
	}
	if s.Direction != container.ScrollBoth && s.Direction != container.ScrollVerticalOnly {
		return false
	}
	return (delta.DY < 0 && s.Offset.Y < room.Height) || (delta.DY > 0 && s.Offset.Y > 0)
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// innerScroll is the table's scroll of its cells, once it is drawn.
func (t *fitTable) innerScroll() *container.Scroll { return t.cellScroll }

// CreateRenderer is the table's, keeping its scroll of cells for the
// wheel (innerScroller).
func (t *fitTable) CreateRenderer() fyne.WidgetRenderer {
	r := t.Table.CreateRenderer()
	t.cellScroll = scrollIn(r.Objects())
	return r
}

// innerScroll is the field's scroll of its text, once it is drawn.
func (e *formEntry) innerScroll() *container.Scroll { return e.textScroll }

// CreateRenderer is the entry's, keeping its scroll of text for the
// wheel (innerScroller).
func (e *formEntry) CreateRenderer() fyne.WidgetRenderer {
	r := e.Entry.CreateRenderer()
	e.textScroll = scrollIn(r.Objects())
	return r
}

// scrollIn is the first scroll among a renderer's objects, or nil.
func scrollIn(objects []fyne.CanvasObject) *container.Scroll {
	for _, o := range objects {
		if s, ok := o.(*container.Scroll); ok {
			return s
		}
	}
	return nil
}
