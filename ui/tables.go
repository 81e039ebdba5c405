package ui

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/internal/clip"
)

const (
	// maxColumnWidth caps a column, so one long cell (a model id, a note)
	// is shortened with "…" instead of widening the table without limit.
	maxColumnWidth float32 = 320
	// keepWidth is what a column keeps when a table must fit a narrow
	// place: one no wider (a date and time, any number) is never
	// shortened; a wider one gives way down to this or its heading.
	keepWidth float32 = 130
	// lastWidth is what such a column gives way to when the table does
	// not fit even so: about a dozen characters before its "…".
	lastWidth float32 = 90
	// compactPadding is the least space left and right of a cell's text
	// when a table does not fit the window with a label's own
	// (InnerPadding), which gives way only as much as it must:
	// a table of many short columns (a result's fifteen with the GPU's
	// power) then fits a 1024-wide window without cutting any text.
	compactPadding float32 = 3
)

var headingStyle = fyne.TextStyle{Bold: true}

// fitTable is a read-only table of one-line texts under bold headings
// (a heading may hold "\n" to take two lines), its columns as wide as
// their content: the widest heading line or cell plus a label's padding,
// at most maxColumnWidth (the last column may take what room is left, up
// to its whole content). Where the table is narrower than that, the
// widest columns give way first, none below keepWidth or its heading. A
// cell wider than its column is shortened with "…" and shown whole again
// once the column is wide enough. A person can drag a column's divider in
// the heading row (Fyne's table resizing); from then on the table keeps
// their widths rather than fitting itself again.
type fitTable struct {
	widget.Table

	columns []string
	text    func(row, col int) string
	full    []float32 // each column's content width
	natural []float32 // the same, capped
	floor   []float32 // the narrowest each column gives way to
	head    []float32 // each column's heading width
	widths  []float32 // as last set
	// inset is how much of each cell's label padding, left and right, the
	// table gives up where it does not fit otherwise (compact); 0 else.
	inset float32
	// fittedTo is the width the columns were last fitted to; 0 before
	// the table is first laid out.
	fittedTo    float32
	onDivider   bool // the last press was on a heading's divider
	personSized bool // a person has dragged a divider
	// allRows makes the table ask for the height of every row (a result
	// view's few levels) instead of scrolling them.
	allRows    bool
	headHeight float32 // the heading row's
	// onOpen, when set, opens the row of a cell double-tapped (double
	// clicked) or under the keyboard's highlight when Enter is pressed.
	onOpen func(id widget.TableCellID)
	// cellScroll is the table's own scroll of its cells (wheel.go).
	cellScroll *container.Scroll
}

// newFitTable makes a table of rows() rows whose cells are text(row,
// col). Call measure with the cells' texts before it is shown, and again
// when they change.
func newFitTable(columns []string, rows func() int, text func(row, col int) string) *fitTable {
	t := &fitTable{columns: columns, text: text}
	t.Length = func() (int, int) { return rows(), len(columns) }
	// The template is small: it is the narrowest a person can drag a
	// column to, and its height is a row's.
	t.CreateCell = func() fyne.CanvasObject { return t.newCell(widget.NewLabel("0")) }
	t.UpdateCell = func(id widget.TableCellID, o fyne.CanvasObject) {
		l := t.cellLabel(o)
		if id.Row >= rows() || id.Col >= len(columns) {
			l.SetText("")
			return
		}
		l.SetText(fitText(t.text(id.Row, id.Col), l.Size().Width, l.TextStyle))
	}
	t.ShowHeaderRow = true
	// The header template is one line, since the table makes every row
	// as tall as the taller of its templates; the heading row alone is
	// set as tall as the tallest heading.
	t.CreateHeader = func() fyne.CanvasObject {
		return t.newCell(widget.NewLabelWithStyle("0", fyne.TextAlignLeading, headingStyle))
	}
	lines := 1
	for _, c := range columns {
		lines = max(lines, strings.Count(c, "\n")+1)
	}
	t.headHeight = widget.NewLabelWithStyle(strings.TrimSuffix(strings.Repeat("0\n", lines), "\n"), fyne.TextAlignLeading, headingStyle).MinSize().Height
	t.SetRowHeight(-1, t.headHeight)
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Row < 0 && id.Col >= 0 && id.Col < len(columns) {
			t.cellLabel(o).SetText(columns[id.Col])
		}
	}
	t.ExtendBaseWidget(t)
	return t
}

// textTable is a fitTable of fixed rows, the shape every result view
// shows.
func textTable(rows [][]string, columns []string) *fitTable {
	t := newFitTable(columns, func() int { return len(rows) }, func(r, c int) string {
		if c < len(rows[r]) {
			return rows[r][c]
		}
		return ""
	})
	t.measure(rows)
	return t
}

// measure sizes the columns for these cells (rows of texts, one per
// column) and fits them to the table's width again.
func (t *fitTable) measure(rows [][]string) {
	t.full = make([]float32, len(t.columns))
	t.natural = make([]float32, len(t.columns))
	t.floor = make([]float32, len(t.columns))
	t.head = make([]float32, len(t.columns))
	for i, c := range t.columns {
		head := textWidth(c, headingStyle)
		t.head[i] = head
		w := head
		for _, text := range longest(rows, i, measured) {
			w = max(w, textWidth(oneLine(text), fyne.TextStyle{}))
		}
		t.full[i] = w
		t.natural[i] = min(w, max(maxColumnWidth, head))
		t.floor[i] = min(t.natural[i], max(head, keepWidth))
	}
	if !t.personSized {
		t.fit(t.fittedTo)
	}
}

// measured is how many of a column's longest texts measure sizes it by:
// measuring every cell of History's 10,000 runs took half of opening it,
// and a text of fewer characters than the longest few is not wider but
// for a font's narrowest and widest letters.
const measured = 64

// longest returns the texts of column col with the most characters, at
// most n of them, each once.
func longest(rows [][]string, col, n int) []string {
	seen := make(map[string]bool)
	var texts []string
	for _, r := range rows {
		if col < len(r) && !seen[r[col]] {
			seen[r[col]] = true
			texts = append(texts, r[col])
		}
	}
	if len(texts) <= n {
		return texts
	}
	slices.SortFunc(texts, func(a, b string) int {
		return utf8.RuneCountInString(b) - utf8.RuneCountInString(a)
	})
	return texts[:n]
}

// Resize fits the columns to a new width, unless a person has sized them.
func (t *fitTable) Resize(s fyne.Size) {
	if !t.personSized && s.Width > 0 && s.Width != t.fittedTo {
		t.fittedTo = s.Width
		t.fit(s.Width)
	}
	t.Table.Resize(s)
}

// MouseDown notes whether the press is on a heading's divider (where
// Fyne's table shows the resize cursor), then lets the table handle it.
func (t *fitTable) MouseDown(e *desktop.MouseEvent) {
	t.onDivider = t.Cursor() == desktop.HResizeCursor
	t.Table.MouseDown(e)
}

// Dragged resizes a column as the table does, and remembers that a
// person chose the widths.
func (t *fitTable) Dragged(e *fyne.DragEvent) {
	if t.onDivider {
		t.personSized = true
	}
	t.Table.Dragged(e)
}

// DragEnd ends a column resize.
func (t *fitTable) DragEnd() {
	t.onDivider = false
	t.Table.DragEnd()
}

// DoubleTapped opens the row under the double tap (onOpen). Fyne then
// holds a single tap back for its double-tap delay before Tapped.
func (t *fitTable) DoubleTapped(e *fyne.PointEvent) {
	if t.onOpen == nil {
		return
	}
	if id, ok := t.cellOf(func() { t.Table.Tapped(e) }); ok {
		t.onOpen(id)
	}
}

// TypedKey opens the highlighted row on Enter (onOpen); every other key
// is the table's (arrows move the highlight, Space selects).
func (t *fitTable) TypedKey(e *fyne.KeyEvent) {
	if t.onOpen == nil || (e.Name != fyne.KeyReturn && e.Name != fyne.KeyEnter) {
		t.Table.TypedKey(e)
		return
	}
	if id, ok := t.cellOf(func() { t.Table.TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace}) }); ok {
		t.onOpen(id)
	}
}

// cellOf is the cell that act (a tap or a key the table handles) would
// select, without selecting it: only the table knows which cell lies
// under a point or holds its keyboard highlight.
func (t *fitTable) cellOf(act func()) (widget.TableCellID, bool) {
	selected, unselected := t.OnSelected, t.OnUnselected
	var id widget.TableCellID
	hit := false
	t.OnSelected = func(c widget.TableCellID) { id, hit = c, true }
	t.OnUnselected = nil
	t.UnselectAll()
	act()
	t.UnselectAll()
	t.OnSelected, t.OnUnselected = selected, unselected
	return id, hit
}

// MinSize is the table's, and tall enough for every row when allRows
// is set.
func (t *fitTable) MinSize() fyne.Size {
	s := t.Table.MinSize()
	if t.allRows {
		s.Height = max(s.Height, t.height())
	}
	return s
}

// height is the height of the heading row and every row, with the
// separators between them.
func (t *fitTable) height() float32 {
	rows, _ := t.Length()
	return t.headHeight + float32(rows)*(theme.Padding()+t.CreateCell().MinSize().Height)
}

// width is the columns' total width with the separators between them.
func (t *fitTable) width() float32 {
	total := theme.Padding() * float32(max(len(t.widths)-1, 0))
	for _, w := range t.widths {
		total += w
	}
	return total
}

// fit sets the columns' widths for a table this wide (0: as wide as
// their content). Where even the floors do not fit, the cells' padding
// gives way first (compact: no text is lost), then the widest columns
// down to lastWidth or their heading; only then does the table scroll
// sideways. A result with the GPU's power had its Power, Peak and
// Tokens per J columns past a 1024-wide window, History its Label.
func (t *fitTable) fit(width float32) {
	widths, inset := t.natural, float32(0)
	if width > 0 && len(widths) > 0 {
		avail := width - theme.Padding()*float32(len(t.natural)-1)
		natural, floor := t.natural, t.floor
		widths = shrinkToFit(natural, floor, avail)
		if over := sum(widths) - avail; over > 0 {
			// As little as it takes, half pixels at a time.
			inset = min(float32(math.Ceil(float64(over/float32(2*len(widths)))*2))/2, max(theme.InnerPadding()-compactPadding, 0))
			natural, floor = less(t.natural, 2*inset), less(t.floor, 2*inset)
			widths = shrinkToFit(natural, floor, avail)
		}
		if sum(widths) > avail {
			last := make([]float32, len(floor))
			for i, f := range floor {
				last[i] = min(f, max(t.head[i]-2*inset, lastWidth))
			}
			floor = last
			widths = shrinkToFit(natural, floor, avail)
		}
		// The last column may use the room left, up to its whole
		// content: Fyne's table has no divider after it to drag.
		lastCol := len(widths) - 1
		widths[lastCol] = max(widths[lastCol], min(t.full[lastCol]-2*inset, widths[lastCol]+avail-sum(widths)))
	}
	if inset != t.inset {
		t.inset = inset
		t.Refresh() // every cell laid out again with its padding
	}
	for i, w := range widths {
		t.SetColumnWidth(i, w) // a no-op where the width is already set
	}
	t.widths = widths
}

// sum is the widths' total.
func sum(ws []float32) float32 {
	var total float32
	for _, w := range ws {
		total += w
	}
	return total
}

// less is each width less d.
func less(ws []float32, d float32) []float32 {
	out := make([]float32, len(ws))
	for i, w := range ws {
		out[i] = w - d
	}
	return out
}

// newCell is a cell of the table holding l: l is laid out inset wider
// than the cell on each side, so its text keeps compactPadding from the
// cell's edges where the table is compact.
func (t *fitTable) newCell(l *widget.Label) fyne.CanvasObject {
	return container.New(&cellLayout{inset: &t.inset, laid: new(float32)}, l)
}

// cellLabel is the label of a cell newCell made.
func (t *fitTable) cellLabel(o fyne.CanvasObject) *widget.Label {
	c := o.(*fyne.Container)
	if l := c.Layout.(*cellLayout); *l.laid != *l.inset {
		c.Refresh() // the inset changed since it was laid out
	}
	return c.Objects[0].(*widget.Label)
}

// cellLayout lays a cell's label out wider than the cell by inset on
// each side; laid is the inset it last laid out with.
type cellLayout struct {
	inset *float32
	laid  *float32
}

func (c *cellLayout) Layout(objects []fyne.CanvasObject, size fyne.Size) {
	in := *c.inset
	*c.laid = in
	for _, o := range objects {
		o.Move(fyne.NewPos(-in, 0))
		o.Resize(fyne.NewSize(size.Width+2*in, size.Height))
	}
}

func (c *cellLayout) MinSize(objects []fyne.CanvasObject) fyne.Size {
	var m fyne.Size
	for _, o := range objects {
		m = m.Max(o.MinSize())
	}
	return fyne.NewSize(max(m.Width-2**c.inset, 0), m.Height)
}

// shrinkToFit narrows the widest columns until all fit in avail: each
// column is the smaller of its natural width and one threshold, but never
// below its floor, with the threshold as high as avail allows. When even
// the floors do not fit, the floors (the table then scrolls sideways).
func shrinkToFit(natural, floor []float32, avail float32) []float32 {
	at := func(limit float32) ([]float32, float32) {
		out := make([]float32, len(natural))
		var total float32
		for i, n := range natural {
			out[i] = max(floor[i], min(n, limit))
			total += out[i]
		}
		return out, total
	}
	widths, total := at(float32(math.Inf(1)))
	if total <= avail {
		return widths
	}
	var lo, hi float32 = 0, 0
	for _, n := range natural {
		hi = max(hi, n)
	}
	if _, total := at(lo); total > avail {
		widths, _ = at(lo)
		return widths
	}
	for hi-lo > 0.5 {
		mid := (lo + hi) / 2
		if _, total := at(mid); total <= avail {
			lo = mid
		} else {
			hi = mid
		}
	}
	// The threshold lies in [lo, hi], hi-lo ≤ 0.5: a whole pixel.
	if widths, total := at(float32(math.Floor(float64(hi)))); total <= avail {
		return widths
	}
	widths, _ = at(float32(math.Floor(float64(lo))))
	return widths
}

// textWidth is the width a label needs for text: its widest line in the
// theme's text size, plus the label's padding on both sides.
func textWidth(text string, style fyne.TextStyle) float32 {
	var w float32
	for _, line := range strings.Split(text, "\n") {
		w = max(w, fyne.MeasureText(line, theme.TextSize(), style).Width)
	}
	return w + 2*theme.InnerPadding()
}

// oneLine is a cell's text on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r\t") {
		return s
	}
	return clip.Line(s, utf8.RuneCountInString(s))
}

// fitText is s on one line, shortened with "…" (clip.Text) to the most
// characters a label of this width shows; s whole when width is 0 (not
// laid out yet) or it fits.
func fitText(s string, width float32, style fyne.TextStyle) string {
	s = oneLine(s)
	if width <= 0 || textWidth(s, style) <= width {
		return s
	}
	lo, hi := 1, utf8.RuneCountInString(s)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if textWidth(clip.Text(s, mid), style) <= width {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return clip.Text(s, lo)
}
