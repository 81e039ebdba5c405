package ui

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// HistoryScreen lists every run in the library: search, filter, sort,
// select 2–4 to compare, label, delete, import; a tap opens a run.
type HistoryScreen struct {
	u       *App
	content *fyne.Container
	list    fyne.CanvasObject

	all      []storage.Summary
	shown    []storage.Summary
	selected map[string]bool

	search        *formEntry
	kindSelect    *widget.Select
	sortSelect    *widget.Select
	table         *fitTable
	status        *widget.Label
	importBar     *widget.ProgressBar // shown while an import runs
	importing     bool
	compareButton *widget.Button
	labelButton   *widget.Button
	deleteButton  *widget.Button
	importButton  *widget.Button
	folderButton  *widget.Button // import a folder
	openButton    *widget.Button
	likeButton    *widget.Button
	opened        *ResultView
	openedOther   bool // a three-stage or speculative-decoding view is open
	// traces is the list of recorded traces (historytraces.go), shown in
	// place of the runs while tracesShown.
	traces       *tracesPane
	tracesButton *widget.Button
	tracesShown  bool
}

// historyColumns are the table's headings; column 0 is the selection box.
var historyColumns = []string{"", "Date", "Endpoint", "Model", "Engine", "Kind", "Levels", "Best tok/s", "Status", "Label"}

// deleteNamed is how many runs the delete confirmation names before it
// counts the rest.
const deleteNamed = 4

const (
	kindAll      = "All kinds"
	sortNewest   = "Newest first"
	sortFastest  = "Best tok/s first"
	maxCompare   = 4
	noSelection  = "Double-click a run to open it. Select runs with the boxes: one to open, label or delete; 2–4 to compare."
	unreadableID = "unreadable"
)

func newHistoryScreen(u *App) *HistoryScreen {
	h := &HistoryScreen{u: u, selected: map[string]bool{}}
	h.search = newFormEntry(h.u)
	h.search.SetPlaceHolder("Search model, endpoint, engine, label…")
	h.search.OnChanged = func(string) { h.apply() }
	kinds := []string{kindAll}
	for _, k := range storage.RunKinds {
		kinds = append(kinds, k.Name)
	}
	h.kindSelect = widget.NewSelect(kinds, func(string) { h.apply() })
	h.kindSelect.SetSelected(kindAll)
	h.sortSelect = widget.NewSelect([]string{sortNewest, sortFastest}, func(string) { h.apply() })
	h.sortSelect.SetSelected(sortNewest)
	h.status = widget.NewLabel("")
	h.status.Wrapping = fyne.TextWrapWord
	h.importBar = widget.NewProgressBar()
	h.importBar.TextFormatter = func() string {
		return fmt.Sprintf("%s of %s files", results.Thousands(int(h.importBar.Value)), results.Thousands(int(h.importBar.Max)))
	}
	h.importBar.Hide()

	h.table = newFitTable(historyColumns, func() int { return len(h.shown) }, func(row, col int) string {
		return historyCell(h.shown[row], col, h.selected)
	})
	h.table.OnSelected = func(id widget.TableCellID) {
		h.table.UnselectAll()
		if id.Row < 0 || id.Row >= len(h.shown) {
			return
		}
		h.toggle(h.shown[id.Row])
	}
	// A double click on a row, or Enter on the highlighted one, opens it
	// as Open does, whatever is selected.
	h.table.onOpen = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(h.shown) {
			h.openRow(h.shown[id.Row])
		}
	}

	h.compareButton = widget.NewButton("Compare", h.onCompare)
	h.openButton = widget.NewButton("Open", h.onOpen)
	h.likeButton = widget.NewButton("Run again like this", h.onLike)
	h.labelButton = widget.NewButton("Label…", h.onLabel)
	h.deleteButton = widget.NewButton("Delete…", h.onDelete)
	h.importButton = widget.NewButton("Import…", h.onImport)
	h.folderButton = widget.NewButton("Import folder…", h.onImportFolder)
	h.traces = newTracesPane(h)
	h.tracesButton = widget.NewButton("Recorded traces", h.openTraces)
	filters := container.NewBorder(nil, nil, nil, container.NewHBox(h.kindSelect, h.sortSelect, h.tracesButton), h.search)
	buttons := container.NewHBox(h.openButton, h.compareButton, h.likeButton, h.labelButton, h.deleteButton, widget.NewSeparator(), h.importButton, h.folderButton)
	h.list = container.NewBorder(container.NewVBox(filters, buttons, h.status, h.importBar), nil, nil, nil, h.table)
	h.content = container.NewStack(h.list)
	h.reload()
	return h
}

// reload reads the library again (fast: the index answers).
func (h *HistoryScreen) reload() {
	list, err := h.u.lib.List()
	if err != nil {
		h.status.SetText("The history cannot be read: " + err.Error())
		return
	}
	h.all = list
	rows := make([][]string, len(list))
	for i, s := range list {
		for col := range historyColumns {
			rows[i] = append(rows[i], historyCell(s, col, map[string]bool{s.ID: true}))
		}
	}
	h.table.measure(rows)
	for id := range h.selected {
		found := false
		for _, s := range list {
			found = found || s.ID == id
		}
		if !found {
			delete(h.selected, id)
		}
	}
	h.apply()
}

// apply filters and sorts the list as the controls say.
func (h *HistoryScreen) apply() {
	if h.table == nil {
		return
	}
	q := storage.Query{Text: strings.TrimSpace(h.search.Text)}
	for _, k := range storage.RunKinds {
		if h.kindSelect.Selected == k.Name {
			q.Kind = k.Kind
		}
	}
	if h.sortSelect.Selected == sortFastest {
		q.SortBy = "tps"
	}
	h.shown = storage.Filter(h.all, q)
	h.table.Refresh()
	h.updateButtons()
}

// historyCell is the text of one history table cell.
func historyCell(s storage.Summary, col int, selected map[string]bool) string {
	if col == 0 {
		if selected[s.ID] {
			return "☑"
		}
		return "☐"
	}
	if s.Unreadable != "" {
		switch col {
		case 1:
			return s.ID
		case 8:
			return "unreadable"
		case 9:
			return s.Unreadable
		}
		return ""
	}
	switch col {
	case 1:
		if t, err := time.Parse(time.RFC3339, s.CreatedAt); err == nil {
			return t.Local().Format("2006-01-02 15:04")
		}
		return s.CreatedAt
	case 2:
		return s.EndpointName
	case 3:
		// The model's name: llama-server without --alias names it by
		// its -m path, whose folder filled the column and cut the name
		// off ("/work/servers/mode…"). Search still finds the whole id.
		return results.ModelName(s.Model)
	case 4:
		return s.Engine
	case 5:
		return s.KindLine()
	case 6:
		return s.LevelList()
	case 7:
		return s.Best()
	case 8:
		state := s.State()
		if s.CachedShare > 0 {
			state += fmt.Sprintf(" · %.0f%% cached", 100*s.CachedShare) // prompt tokens from the server's cache
		}
		// The answer first, in its short form: where the column gives
		// way, "…" then cuts the state, which the result repeats; the
		// whole answer is the status line's when the run is selected.
		if s.Capacity != "" {
			state = s.Capacity + " · " + state
		}
		return state
	case 9:
		return s.Label
	}
	return ""
}

func (h *HistoryScreen) toggle(s storage.Summary) {
	if h.selected[s.ID] {
		delete(h.selected, s.ID)
	} else {
		h.selected[s.ID] = true
	}
	h.table.Refresh()
	h.updateButtons()
}

// selectedIDs lists the selected runs in the table's order.
func (h *HistoryScreen) selectedIDs() []string {
	var ids []string
	for _, s := range h.all {
		if h.selected[s.ID] {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func (h *HistoryScreen) selectedReadable() []string {
	var ids []string
	for _, s := range h.all {
		if h.selected[s.ID] && s.Unreadable == "" {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

func (h *HistoryScreen) updateButtons() {
	n := len(h.selectedIDs())
	readable := len(h.selectedReadable())
	enable := func(b *widget.Button, on bool) {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	enable(h.compareButton, readable >= 2 && readable <= maxCompare && readable == n)
	enable(h.openButton, readable == 1 && n == 1)
	enable(h.likeButton, readable == 1 && n == 1 && h.kindOf(h.selectedReadable()[0]).Repeatable)
	enable(h.labelButton, n == 1 && readable == 1)
	enable(h.deleteButton, n >= 1)
	switch {
	case len(h.all) == 0:
		h.status.SetText("No runs yet. Run a benchmark, or import results files: Import…, Import folder…, or drop files or a folder on the window.")
	case n == 0:
		h.status.SetText(fmt.Sprintf("%s %s, %s shown. %s", results.Thousands(len(h.all)), results.Plural(len(h.all), "run", "runs"), results.Thousands(len(h.shown)), noSelection))
	case n > maxCompare:
		h.status.SetText(fmt.Sprintf("%d selected: compare takes 2 to 4 runs.", n))
	case readable < n:
		h.status.SetText("An unreadable file is selected: it can only be deleted. Its reason is in the Label column.")
	case n == 1 && h.selectedSummary().Answer != "":
		h.status.SetText("1 selected. " + capitalize(h.selectedSummary().Answer) + ".")
	default:
		h.status.SetText(fmt.Sprintf("%d selected.", n))
	}
}

// selectedSummary is the first selected run's line.
func (h *HistoryScreen) selectedSummary() storage.Summary {
	for _, s := range h.all {
		if h.selected[s.ID] {
			return s
		}
	}
	return storage.Summary{}
}

// preselect marks one run (Compare with… from a result).
func (h *HistoryScreen) preselect(id string) {
	h.selected = map[string]bool{id: true}
	h.reload()
	h.status.SetText("Select 1 to 3 more runs to compare with this one, then press Compare.")
}

func (h *HistoryScreen) onCompare() {
	ids := h.selectedReadable()
	if len(ids) < 2 || len(ids) > maxCompare {
		return
	}
	var names []string
	for _, id := range ids {
		names = append(names, h.kindOf(id).ID)
	}
	kind, err := plans.ComparableKind(names)
	if err != nil {
		h.status.SetText(capitalize(err.Error()) + ".")
		return
	}
	h.u.compareKind(ids, kind)
}

// onLike fills the Benchmark form with the selected run's plan (Run
// again like this) and goes there; Run then runs it, and Compare opens on
// both.
func (h *HistoryScreen) onLike() {
	ids := h.selectedReadable()
	if len(ids) != 1 {
		return
	}
	f, err := h.u.lib.Load(ids[0])
	if err != nil {
		h.status.SetText("This run cannot be read: " + err.Error())
		return
	}
	name := ids[0]
	for _, s := range h.all {
		if s.ID == ids[0] && s.Label != "" {
			name = s.Label
		}
	}
	if err := h.u.bench.fillLike(ids[0], storage.ShortName(name), f); err != nil {
		h.status.SetText("This run cannot be run again: " + err.Error() + ".")
		return
	}
	h.u.tabs.SelectIndex(0)
}

func (h *HistoryScreen) onOpen() {
	ids := h.selectedReadable()
	if len(ids) != 1 {
		return
	}
	h.open(ids[0])
}

// openRow opens one row of the table, or says why an unreadable file
// cannot be opened.
func (h *HistoryScreen) openRow(s storage.Summary) {
	if s.Unreadable != "" {
		h.status.SetText("This file cannot be opened: " + s.Unreadable + ". It can only be deleted.")
		return
	}
	h.open(s.ID)
}

// kindOf is the plan of run id (the Kovara method for an index entry
// from before plans were named).
func (h *HistoryScreen) kindOf(id string) *plans.Kind {
	for _, x := range h.all {
		if x.ID == id {
			if k := plans.ByID(x.Plan); k != nil {
				return k
			}
		}
	}
	return plans.KovaraMethod
}

// showOpened puts a run's view in the History place.
func (h *HistoryScreen) showOpened(o fyne.CanvasObject) {
	h.content.Objects = []fyne.CanvasObject{o}
	h.content.Refresh()
}

// open shows a run's result view inside the History place, its back
// button leading back here.
func (h *HistoryScreen) open(id string) {
	d, err := h.u.lib.LoadDocument(id)
	if err != nil {
		h.status.SetText(err.Error())
		return
	}
	v := h.u.resultView(d, id, nil, h.closeRun)
	v.back.SetText("Back to history")
	h.opened, h.openedOther, h.tracesShown = nil, true, false
	if r, ok := v.view.(*ResultView); ok {
		h.opened, h.openedOther = r, false
	}
	h.showOpened(v.content)
}

// onShown is the History place chosen: the runs read again (unless one is
// open), or the traces, which a recording may have added to.
func (h *HistoryScreen) onShown() {
	switch {
	case h.tracesShown:
		h.traces.reload()
	case h.opened == nil && !h.openedOther:
		h.reload()
	}
}

// openTraces shows the recorded traces in place of the runs.
func (h *HistoryScreen) openTraces() {
	h.opened, h.openedOther, h.tracesShown = nil, false, true
	h.showOpened(h.traces.content)
	h.traces.reload()
}

// closeTraces goes back to the runs.
func (h *HistoryScreen) closeTraces() { h.closeRun() }

func (h *HistoryScreen) closeRun() {
	h.opened, h.openedOther, h.tracesShown = nil, false, false
	h.content.Objects = []fyne.CanvasObject{h.list}
	h.content.Refresh()
	h.reload()
}

func (h *HistoryScreen) onLabel() {
	ids := h.selectedReadable()
	if len(ids) != 1 {
		return
	}
	var cur storage.Summary
	for _, s := range h.all {
		if s.ID == ids[0] {
			cur = s
		}
	}
	label := newFormEntry(h.u)
	label.SetText(cur.Label)
	notes := newMultiLineFormEntry(h.u)
	notes.SetText(cur.Notes)
	notes.SetMinRowsVisible(4)
	items := []*widget.FormItem{widget.NewFormItem("Label", label), widget.NewFormItem("Notes", notes)}
	d := dialog.NewForm("Label and notes", "Save", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		if err := h.u.lib.SetAnnotation(cur.ID, storage.Annotation{Label: strings.TrimSpace(label.Text), Notes: notes.Text}); err != nil {
			h.status.SetText("Not saved: " + err.Error())
			return
		}
		h.reload()
	}, h.u.win)
	d.Resize(fyne.NewSize(560, 320))
	d.Show()
}

func (h *HistoryScreen) onDelete() {
	ids := h.selectedIDs()
	if len(ids) == 0 {
		return
	}
	var runs []storage.Summary
	for _, s := range h.all {
		if h.selected[s.ID] {
			runs = append(runs, s)
		}
	}
	question, names := deleteMessage(runs)
	list := widget.NewLabel(names)
	d := dialog.NewCustomConfirm("Delete", "Delete", "Keep", container.NewVBox(widget.NewLabel(question), list), func(ok bool) {
		if !ok {
			return
		}
		gone, err := h.u.lib.DeleteRuns(ids)
		for _, id := range gone {
			delete(h.selected, id)
		}
		// A deleted run leaves Compare too.
		h.u.compareScreen.forget(gone)
		h.reload()
		if err != nil {
			h.status.SetText("Not deleted: " + err.Error())
		}
	}, h.u.win)
	d.Show()
}

// deleteMessage asks before runs are deleted and names them, one line
// each (date, model, endpoint, kind), the first deleteNamed of them and
// how many more.
func deleteMessage(runs []storage.Summary) (question, names string) {
	question = fmt.Sprintf("Delete these %d runs from the history? Their results files are removed from disk.", len(runs))
	if len(runs) == 1 {
		question = "Delete this run from the history? Its results file is removed from disk."
	}
	var lines []string
	for i, s := range runs {
		if i == deleteNamed {
			lines = append(lines, fmt.Sprintf("and %d more", len(runs)-deleteNamed))
			break
		}
		parts := []string{historyCell(s, 1, nil)}
		if s.Unreadable != "" {
			parts = append(parts, "unreadable file")
		}
		for _, p := range []string{s.Model, s.EndpointName, storage.KindName(s.RunKind)} {
			if p != "" {
				parts = append(parts, clip.Line(p, 60))
			}
		}
		lines = append(lines, "• "+strings.Join(parts, " · "))
	}
	return question, strings.Join(lines, "\n")
}

func (h *HistoryScreen) onImport() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		h.importFiles([]string{path})
	}, h.u.win)
	d.SetFilter(fstorage.NewExtensionFileFilter([]string{".json"}))
	d.Show()
}

// onImportFolder imports every results file in a folder (and the folders
// in it): a history moved from another machine or from the Python CLI.
func (h *HistoryScreen) onImportFolder() {
	d := dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil || dir == nil {
			return
		}
		h.importFiles([]string{dir.Path()})
	}, h.u.win)
	d.Show()
}

// importEvery is how often the import's bar moves.
const importEvery = 100 * time.Millisecond

// importFiles copies results files, and the .json files in any folder
// given, into the library in the background: a bar counts the files, and
// the status says at the end how it went ("2,998 imported, 2 unreadable:
// …").
func (h *HistoryScreen) importFiles(paths []string) {
	if h.importing {
		h.status.SetText("An import is running: drop the files again when it has ended.")
		return
	}
	paths = storage.ImportPaths(paths)
	if len(paths) == 0 {
		h.status.SetText("There are no results files (.json) in what was given.")
		return
	}
	h.importing = true
	h.importBar.Max = float64(len(paths))
	h.importBar.SetValue(0)
	h.importBar.Show()
	h.status.SetText(fmt.Sprintf("Importing %s %s…", results.Thousands(len(paths)), results.Plural(len(paths), "file", "files")))
	var done atomic.Int64
	go func() {
		tick := time.NewTicker(importEvery)
		defer tick.Stop()
		finished := make(chan struct{})
		var report storage.ImportReport
		var err error
		go func() {
			defer close(finished)
			report, err = h.u.lib.ImportFiles(context.Background(), paths, func(d, _ int) { done.Store(int64(d)) })
		}()
		for {
			select {
			case <-tick.C:
				n := float64(done.Load())
				h.u.do(func() { h.importBar.SetValue(n) })
			case <-finished:
				h.u.do(func() {
					h.importing = false
					h.importBar.Hide()
					h.reload()
					h.status.SetText(importMessage(report, err))
				})
				return
			}
		}
	}()
}

// importMessage says how an import went: the run or the reason for one
// file, the count for several, and why it stopped when the library could
// not be written.
func importMessage(r storage.ImportReport, err error) string {
	msg := r.Sentence()
	if len(r.Files) == 1 {
		if f := r.Files[0]; f.Err != nil {
			msg = capitalize(f.Err.Error()) + "."
		} else {
			msg = fmt.Sprintf("Imported %s (%s).", f.Summary.Model, f.Summary.ID)
		}
	}
	if err != nil {
		return "The import stopped: " + err.Error() + ". " + msg
	}
	return msg
}

// onDropped imports the results files, and folders of them, dropped on
// the window.
func (h *HistoryScreen) onDropped(_ fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		p := u.Path()
		if info, err := os.Stat(p); (err == nil && info.IsDir()) || strings.HasSuffix(strings.ToLower(p), ".json") {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return
	}
	h.u.tabs.SelectIndex(1)
	h.importFiles(paths)
}

// capitalize starts a phrase with a capital letter, for a label or a
// status line.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
