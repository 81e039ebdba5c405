package ui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/storage"
)

// tracesColumns are the traces table's headings; column 0 is the
// selection box. The token columns say their unit in the heading.
var tracesColumns = []string{"", "Trace", "Last request", "Requests", "Span", "Tokens in", "Tokens out", "Models", "Failed", "Note"}

// tracesPane is History's list of the traces recorded (Record my
// traffic, kovara-bench record) in the library's traces folder: each
// one's figures, or why it cannot be read; one selected can be exported
// (a copy where the person chooses: it holds no text) or replayed (the
// rate form, the trace filled in).
type tracesPane struct {
	h       *HistoryScreen
	content fyne.CanvasObject

	list     []storage.TraceSummary
	selected string // the selected trace's path; "" for none
	loaded   bool   // the folder has been read once
	gen      int    // bumped per read, so an older read's answer is dropped

	table        *fitTable
	status       *widget.Label
	backButton   *widget.Button
	replayButton *widget.Button
	exportButton *widget.Button
	folderButton *widget.Button
}

func newTracesPane(h *HistoryScreen) *tracesPane {
	p := &tracesPane{h: h}
	p.table = newFitTable(tracesColumns, func() int { return len(p.list) }, func(row, col int) string {
		return traceCell(p.list[row], col, p.selected)
	})
	p.table.OnSelected = func(id widget.TableCellID) {
		p.table.UnselectAll()
		if id.Row >= 0 && id.Row < len(p.list) {
			p.toggle(p.list[id.Row].Path)
		}
	}
	p.table.onOpen = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(p.list) {
			p.selected = p.list[id.Row].Path
			p.onReplay()
		}
	}
	p.status = widget.NewLabel("")
	p.status.Wrapping = fyne.TextWrapWord
	p.backButton = widget.NewButton("Back to runs", h.closeTraces)
	p.replayButton = widget.NewButton("Replay…", p.onReplay)
	p.exportButton = widget.NewButton("Export…", p.onExport)
	p.folderButton = widget.NewButton("Show folder", func() { showFile(h.u, storage.TracesDir(h.u.opts.Dirs.Data)+"/.") })
	title := widget.NewLabelWithStyle("Recorded traces", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	buttons := container.NewHBox(p.backButton, widget.NewSeparator(), p.replayButton, p.exportButton, widget.NewSeparator(), p.folderButton)
	p.content = container.NewBorder(container.NewVBox(title, buttons, p.status), nil, nil, nil, p.table)
	p.updateButtons()
	return p
}

// traceCell is the text of one traces table cell.
func traceCell(s storage.TraceSummary, col int, selected string) string {
	switch col {
	case 0:
		if s.Path == selected {
			return "☑"
		}
		return "☐"
	case 1:
		return s.Name
	case 2:
		if s.Last.IsZero() {
			return ""
		}
		return s.Last.Local().Format("2006-01-02 15:04")
	case 9:
		return traceNote(s)
	}
	if s.Err != nil {
		return ""
	}
	switch col {
	case 3:
		return results.Thousands(s.Requests)
	case 4:
		if s.Requests < 2 {
			return "—"
		}
		return spanWords(s.SpanS)
	case 5:
		return results.Thousands(int(s.InputTokens))
	case 6:
		return results.Thousands(int(s.OutputTokens))
	case 7:
		return strings.Join(modelNames(s.Models), ", ")
	case 8:
		return results.Thousands(s.Failed)
	}
	return ""
}

// modelNames are the models by their names (a llama-server model named
// by its -m path, by its file).
func modelNames(models []string) []string {
	var out []string
	for _, m := range models {
		out = append(out, results.ModelName(m))
	}
	return out
}

// traceNote is what is wrong with a trace, if anything: why it cannot
// be read, or its last line cut.
func traceNote(s storage.TraceSummary) string {
	switch {
	case s.Err != nil:
		return "cannot be read: " + s.Err.Error()
	case s.Cut > 0:
		return "its last line was cut (the recorder stopped mid-write) and is passed over"
	case s.Requests == 0:
		return "no requests yet"
	}
	return ""
}

// reload reads the traces folder again, off the UI goroutine (a week's
// trace is read whole to sum it up).
func (p *tracesPane) reload() {
	p.gen++
	gen := p.gen
	dir := p.h.u.opts.Dirs.Data
	if !p.loaded {
		p.status.SetText("Reading the traces…")
	}
	p.h.u.bg.Add(1)
	go func() {
		defer p.h.u.bg.Done()
		list, err := storage.ListTraces(dir)
		p.h.u.do(func() {
			if gen != p.gen {
				return // a newer read is on its way
			}
			p.loaded = true
			p.show(list, err)
		})
	}()
}

// show lists the traces read.
func (p *tracesPane) show(list []storage.TraceSummary, err error) {
	if err != nil {
		p.list = nil
		p.table.Refresh()
		setLabel(p.status, "The traces cannot be read: "+err.Error()+".", true)
		p.updateButtons()
		return
	}
	p.list = list
	if p.summary() == nil {
		p.selected = ""
	}
	rows := make([][]string, len(list))
	for i, s := range list {
		for col := range tracesColumns {
			rows[i] = append(rows[i], traceCell(s, col, s.Path))
		}
	}
	p.table.measure(rows)
	p.table.Refresh()
	p.updateButtons()
}

// summary is the selected trace's, or nil.
func (p *tracesPane) summary() *storage.TraceSummary {
	for i := range p.list {
		if p.list[i].Path == p.selected && p.selected != "" {
			return &p.list[i]
		}
	}
	return nil
}

func (p *tracesPane) toggle(path string) {
	if p.selected == path {
		p.selected = ""
	} else {
		p.selected = path
	}
	p.table.Refresh()
	p.updateButtons()
}

// updateButtons offers Replay and Export for a trace selected that
// reads, and says what the list and the selection are.
func (p *tracesPane) updateButtons() {
	s := p.summary()
	readable := s != nil && s.Err == nil && s.Requests > 0
	for _, b := range []*widget.Button{p.replayButton, p.exportButton} {
		if readable {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	switch {
	case !p.loaded:
	case len(p.list) == 0:
		setLabel(p.status, "No traces yet. Record your own traffic under Endpoints: select a saved endpoint, then Record, and point your clients at the address it gives.", false)
	case s == nil:
		setLabel(p.status, fmt.Sprintf("%s in %s. Select one to replay or export it; double-click to replay. A trace holds when each request came, its lengths, timing and prefix structure as hashes: never the words.",
			results.Thousands(len(p.list))+" "+results.Plural(len(p.list), "trace", "traces"), storage.TracesDir(p.h.u.opts.Dirs.Data)), false)
	case s.Err != nil:
		setLabel(p.status, s.Name+" cannot be read: "+s.Err.Error()+".", true)
	default:
		setLabel(p.status, traceSentence(*s), s.Cut > 0)
	}
}

// traceSentence says one trace in a sentence.
func traceSentence(s storage.TraceSummary) string {
	text := fmt.Sprintf("%s: %s", s.Name, requestsWords(int64(s.Requests), int64(s.Failed)))
	if s.Requests > 1 {
		text += " over " + spanWords(s.SpanS)
	}
	text += fmt.Sprintf(", %s tokens in and %s out", results.Thousands(int(s.InputTokens)), results.Thousands(int(s.OutputTokens)))
	if len(s.Models) > 0 {
		text += ", " + clip.Line(results.JoinAnd(modelNames(s.Models)), 120)
	}
	text += "."
	if note := traceNote(s); note != "" {
		text += " " + capitalize(note) + "."
	}
	return text
}

// onReplay fills the chosen plan's form with the selected trace when it
// replays traces (Compare settings), else the rate form, and goes there.
func (p *tracesPane) onReplay() {
	s := p.summary()
	if s == nil {
		return
	}
	if err := p.h.u.bench.replayTrace(s.Path); err != nil {
		setLabel(p.status, "This trace cannot be replayed now: "+err.Error()+".", true)
		return
	}
	p.h.u.tabs.SelectIndex(0)
}

// onExport saves a copy of the selected trace where the person chooses:
// it holds no text, only lengths, timing and salted hashes, so it can be
// shared as it is.
func (p *tracesPane) onExport() {
	s := p.summary()
	if s == nil {
		return
	}
	path := s.Path
	p.h.u.askSave(s.Name, "a copy of the trace", func(w fyne.URIWriteCloser) error {
		return writeClose(w, func(out io.Writer) error { return copyFile(out, path) })
	})
}

// copyFile writes the file at path to w.
func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the trace %s is gone from the traces folder", path)
		}
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
