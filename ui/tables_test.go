package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

func TestShrinkToFit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		natural, floor []float32
		avail          float32
		want           []float32
	}{
		{"room for all", []float32{50, 200, 80}, []float32{50, 130, 80}, 400, []float32{50, 200, 80}},
		{"the widest gives way first", []float32{50, 300, 200}, []float32{50, 130, 130}, 450, []float32{50, 200, 200}},
		{"both wide ones give way to one threshold", []float32{50, 300, 200}, []float32{50, 130, 130}, 390, []float32{50, 170, 170}},
		{"never below a floor", []float32{50, 300, 200}, []float32{50, 130, 130}, 200, []float32{50, 130, 130}},
		{"a narrow column is never touched", []float32{120, 300}, []float32{120, 130}, 260, []float32{120, 140}},
	} {
		got := shrinkToFit(c.natural, c.floor, c.avail)
		if len(got) != len(c.want) {
			t.Fatalf("%s: got %v, want %v", c.name, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

func TestFitText(t *testing.T) {
	test.NewTempApp(t)
	long := "llama.cpp b9749-d32676d77"
	full := textWidth(long, fyne.TextStyle{})
	if got := fitText(long, full, fyne.TextStyle{}); got != long {
		t.Errorf("at its own width: got %q, want it whole", got)
	}
	if got := fitText(long, 0, fyne.TextStyle{}); got != long {
		t.Errorf("not laid out: got %q, want it whole", got)
	}
	got := fitText(long, full-20, fyne.TextStyle{})
	if !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Fatalf("20 px short: got %q, want a prefix and …", got)
	}
	if w := textWidth(got, fyne.TextStyle{}); w > full-20 {
		t.Errorf("%q is %.1f px, wider than %.1f", got, w, full-20)
	}
	// One character more would not fit: the most that fits is kept.
	longer := []rune(strings.TrimSuffix(got, "…"))
	if next := string(longer) + string([]rune(long)[len(longer)]) + "…"; textWidth(next, fyne.TextStyle{}) <= full-20 {
		t.Errorf("%q fits too, yet %q was kept", next, got)
	}
	if got := fitText("two\nlines", 1000, fyne.TextStyle{}); got != "two lines" {
		t.Errorf("a cell is one line: got %q", got)
	}
}

// tableLabels are the labels a table shows (headings and cells), as laid
// out on its canvas.
func tableLabels(t *testing.T, o fyne.CanvasObject) []*widget.Label {
	var out []*widget.Label
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			if x.Visible() && x.Text != "" {
				out = append(out, x)
			}
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.TempWidgetRenderer(t, x).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return out
}

// assertNothingOverflows fails for a label (a heading or cell) whose
// text is wider than its place: it would run into the next column.
func assertNothingOverflows(t *testing.T, what string, table fyne.CanvasObject) {
	t.Helper()
	labels := tableLabels(t, table)
	if len(labels) == 0 {
		t.Fatalf("%s: no cells rendered", what)
	}
	for _, l := range labels {
		if l.MinSize().Width > l.Size().Width+0.5 {
			t.Errorf("%s: %q needs %.1f px and has %.1f", what, l.Text, l.MinSize().Width, l.Size().Width)
		}
	}
}

// assertColumnsHoldContent fails where a column is narrower than its
// widest heading line or cell, up to the cap.
func assertColumnsHoldContent(t *testing.T, what string, tb *fitTable, rows [][]string) {
	t.Helper()
	for i, c := range tb.columns {
		// A compact table gives up inset of each side's padding.
		want := textWidth(c, headingStyle) - 2*tb.inset
		for _, r := range rows {
			want = max(want, min(widget.NewLabel(oneLine(r[i])).MinSize().Width, maxColumnWidth)-2*tb.inset)
		}
		if tb.widths[i]+0.5 < want {
			t.Errorf("%s: column %q is %.1f px, its content needs %.1f", what, c, tb.widths[i], want)
		}
	}
}

// TestTextTableSizesColumnsToContent: each column is as wide as its
// widest heading line or cell; the last one takes the room left for a
// long note, and where there is none the note is cut with "…", never
// running into the next column.
func TestTextTableSizesColumnsToContent(t *testing.T) {
	a := test.NewTempApp(t)
	note := "QUEUED: the server ran 4 of 8 users at once and queued the rest for 2.1 s, so their first tokens waited"
	rows := [][]string{
		{"decode, code prompt", "256 tokens", "41", "88.2", ""},
		{"cold prefill", "30719 prompt tokens", "1480", "20755", ""},
		{"8 users at once", "256 tokens", "312 (max)", "402.1", note},
	}
	columns := []string{"Stage", "Tokens", "TTFT\nms", "tok/s", "Note"}
	tb := textTable(rows, columns)
	w := a.NewWindow("table")
	w.SetContent(container.NewStack(tb))
	w.Resize(fyne.NewSize(1180, 400))

	assertColumnsHoldContent(t, "stages", tb, rows)
	if got, want := tb.natural[4], maxColumnWidth; got != want {
		t.Errorf("the note column's own width is %.1f px, want the cap %.1f", got, want)
	}
	if got := cellText(t, tb, note); got != note {
		t.Errorf("with room to spare the note shows as %q", got)
	}
	if got, room := tb.width(), tb.Size().Width; got > room {
		t.Errorf("the columns take %.1f px of %.1f", got, room)
	}
	if head, cell := tb.headHeight, tb.CreateCell().MinSize().Height; head < 1.5*cell {
		t.Errorf("a heading of two lines gets a row %.1f px high, a cell %.1f", head, cell)
	}
	if got, want := tb.MinSize().Height, tb.height(); tb.allRows || got >= want {
		t.Errorf("a table that scrolls asks for %.1f px of height, all rows need %.1f", got, want)
	}
	assertNothingOverflows(t, "stages table", tb)

	w.Resize(fyne.NewSize(760, 400))
	cut := cellText(t, tb, note)
	if !strings.HasSuffix(cut, "…") || !strings.HasPrefix(note, strings.TrimSuffix(cut, "…")) {
		t.Errorf("in a narrow window the note shows as %q", cut)
	}
	assertNothingOverflows(t, "stages table, narrow", tb)
}

// TestPersonWidensAColumn: a cell cut at the cap is read whole after a
// person drags its column's divider, and the window's next size keeps the
// person's width.
func TestPersonWidensAColumn(t *testing.T) {
	a := test.NewTempApp(t)
	note := "QUEUED: the server ran 4 of 8 users at once and queued the rest for 2.1 s, so their first tokens waited"
	tb := textTable([][]string{{note, "402.1"}}, []string{"Note", "tok/s"})
	w := a.NewWindow("table")
	w.SetContent(container.NewStack(tb))
	w.Resize(fyne.NewSize(1180, 300))
	if got := tb.widths[0]; got != maxColumnWidth {
		t.Fatalf("the note column is %.1f px, want the cap %.1f", got, maxColumnWidth)
	}
	if got := cellText(t, tb, note); !strings.HasSuffix(got, "…") {
		t.Fatalf("the note at the cap shows as %q", got)
	}

	at := fyne.NewPos(tb.widths[0]+theme.Padding()/2, 5) // the divider after the note
	tb.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: at}})
	if tb.Cursor() != desktop.HResizeCursor {
		t.Fatalf("no resize cursor over the divider at %v", at)
	}
	tb.MouseDown(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: at}})
	tb.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: at.AddXY(500, 0)}, Dragged: fyne.Delta{DX: 500}})
	tb.DragEnd()
	if got := cellText(t, tb, note); got != note {
		t.Errorf("after widening, the note shows as %q", got)
	}
	w.Resize(fyne.NewSize(1024, 300))
	if got := cellText(t, tb, note); got != note {
		t.Errorf("the window's new size undid the person's width: %q", got)
	}
}

// cellText is what the table shows for the cell whose full text is full
// (the one label that starts as it does).
func cellText(t *testing.T, tb *fitTable, full string) string {
	t.Helper()
	for _, l := range tableLabels(t, tb) {
		if prefix := strings.TrimSuffix(l.Text, "…"); len(prefix) >= 6 && strings.HasPrefix(full, prefix) {
			return l.Text
		}
	}
	t.Fatalf("no cell shows %q", full)
	return ""
}

// TestTextTableFitsANarrowWindow: where the natural widths do not fit,
// the widest columns give way (their cells cut with "…") and the table
// fits its width; the numbers and headings keep theirs.
func TestTextTableFitsANarrowWindow(t *testing.T) {
	a := test.NewTempApp(t)
	model := "Qwen3-30B-A3B-Instruct-2507-Q4_K_M"
	rows := [][]string{{"2026-05-01 14:03", model, "llama.cpp b9749-d32676d77", "1,2,4,8,16,32,64", "1234.5", "finished, 2 problems · 45% cached · capacity 4–6 users?"}}
	columns := []string{"Date", "Model", "Engine", "Levels", "Best tok/s", "Status"}
	tb := textTable(rows, columns)
	w := a.NewWindow("table")
	w.SetContent(container.NewStack(tb))
	w.Resize(fyne.NewSize(900, 300))
	if got, room := tb.width(), tb.Size().Width; got > room {
		t.Errorf("the columns take %.1f px of %.1f", got, room)
	}
	for i, want := range []string{"2026-05-01 14:03", "", "", "1,2,4,8,16,32,64", "1234.5", ""} {
		if want != "" && tb.widths[i] < widget.NewLabel(want).MinSize().Width {
			t.Errorf("%s was cut to %.1f px", columns[i], tb.widths[i])
		}
	}
	assertNothingOverflows(t, "narrow table", tb)
	if got := cellText(t, tb, model); got == model {
		t.Errorf("the model is whole in a table too narrow for it")
	}
}
