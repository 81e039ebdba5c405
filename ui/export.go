package ui

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"os"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/chart"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/report"
	"github.com/kovara/desktop/storage"
)

// ExportView shows whether a run can be published and the exact document
// that would be sent, and saves that document — never the local section.
// A private copy of the whole file is a separate, plainly named button.
type ExportView struct {
	u    *App
	id   string
	data []byte // the results file, exactly as stored (the private copy)

	Publishable bool
	Payload     string
	Reasons     []string
	// Problems and Notes are the run's warnings (results.Warnings), shown
	// above the payload; with a problem, saving for publishing waits for
	// accept to be ticked.
	Problems []string
	Notes    []string

	content     fyne.CanvasObject
	verdict     *widget.Label
	payload     *widget.Label
	saveButton  *widget.Button // saves the published document; nil when there is none
	privateSave *widget.Button // saves the whole file, local included
	note        *widget.Label
	warnings    *widget.Label // the problems, then the notes; nil when none
	accept      *widget.Check // "publish it as it is"; nil without problems
	dialog      dialog.Dialog
}

// newExportView checks run id for publishing.
func newExportView(u *App, id string) (*ExportView, error) {
	data, err := os.ReadFile(u.lib.Path(id))
	if err != nil {
		return nil, fmt.Errorf("the results file cannot be read: %w", err)
	}
	v := &ExportView{u: u, id: id, data: data}
	payload, reasons := results.PublishCheck(data)
	v.Publishable, v.Payload, v.Reasons = len(reasons) == 0, string(payload), reasons
	var f *results.File
	if f, err = results.Decode(data); err == nil {
		v.Problems, v.Notes = results.Split(results.Warnings(f))
	}

	v.note = widget.NewLabel("")
	v.note.Wrapping = fyne.TextWrapWord
	var body fyne.CanvasObject
	if v.Publishable {
		v.verdict = widget.NewLabelWithStyle("Ready to publish. This is exactly what would be sent, and what Save for publishing writes: the run records, the date and the manifest revision — nothing of your endpoint (its address, name, served models or errors).", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		v.verdict.Importance = widget.SuccessImportance
		// Read-only but selectable: what you see is what is sent.
		v.payload = widget.NewLabelWithStyle(v.Payload, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		v.payload.Selectable = true
		body = container.NewScroll(v.payload)
		v.saveButton = widget.NewButton("Save for publishing…", v.onSave)
		v.saveButton.Importance = widget.HighImportance
		if len(v.Problems) > 0 {
			v.verdict.SetText(fmt.Sprintf("%s This is exactly what would be sent, unchanged; publish it only if the figures still say what you want to show.",
				results.Headline(f, results.Warnings(f))))
			v.verdict.Importance = widget.WarningImportance
			v.saveButton.Disable()
			v.accept = widget.NewCheck("I have read the "+results.Plural(len(v.Problems), "problem", "problems")+" above: save it for publishing as it is", func(on bool) {
				if on {
					v.saveButton.Enable()
				} else {
					v.saveButton.Disable()
				}
			})
		}
	} else {
		v.verdict = widget.NewLabelWithStyle("This run cannot be published:", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		v.verdict.Importance = widget.WarningImportance
		reasons := widget.NewLabel("• " + strings.Join(v.Reasons, "\n• "))
		reasons.Wrapping = fyne.TextWrapWord
		body = container.NewVScroll(reasons)
		v.note.SetText(privateNote)
	}
	v.privateSave = widget.NewButton("Save a private copy (with endpoint details)…", v.onSavePrivate)
	v.verdict.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(v.verdict)
	if len(v.Problems)+len(v.Notes) > 0 {
		var lines []string
		for _, p := range v.Problems {
			lines = append(lines, "Problem: "+p)
		}
		for _, n := range v.Notes {
			// A note may carry the reason the run cannot be published,
			// which the list above already gives.
			for _, r := range v.Reasons {
				n = strings.TrimSpace(strings.ReplaceAll(n, r, ""))
			}
			if n != "" {
				lines = append(lines, "Note: "+n)
			}
		}
		v.warnings = widget.NewLabel(bullets(lines))
		v.warnings.Wrapping = fyne.TextWrapWord
		if len(v.Problems) > 0 {
			v.warnings.Importance = widget.WarningImportance
		}
		top.Add(v.warnings)
	}
	if v.accept != nil {
		top.Add(v.accept)
	}
	buttons := container.NewHBox(v.privateSave)
	if v.saveButton != nil {
		buttons = container.NewHBox(v.saveButton, v.privateSave)
	}
	v.content = container.NewBorder(top, container.NewVBox(v.note, buttons), nil, nil, body)
	return v, nil
}

// privateNote is said wherever the whole file can be saved.
const privateNote = "A private copy is the whole results file, with the endpoint's address, name and served models and the server's error messages: keep it to yourself, never publish it."

// showExport opens the export dialog for run id.
func (u *App) showExport(id string) *ExportView {
	v, err := newExportView(u, id)
	if err != nil {
		u.showProblem("Export", err.Error())
		return nil
	}
	d := dialog.NewCustom("Export", "Close", v.content, u.win)
	d.Resize(fyne.NewSize(860, 620))
	v.dialog = d
	d.Show()
	return v
}

func (v *ExportView) onSave() {
	v.askPath(v.id+".json", v.saveTo)
}

func (v *ExportView) onSavePrivate() {
	v.askPath(v.id+".private.json", v.savePrivateTo)
}

// askPath asks where to save, then calls save with the path.
func (v *ExportView) askPath(name string, save func(string) error) {
	// The export's own note says where (write).
	v.u.askSave(name, "", func(w fyne.URIWriteCloser) error {
		path := w.URI().Path()
		w.Close()
		save(path) // a failure is said in the export's own note
		return nil
	})
}

// saveTo writes the published document — exactly the bytes shown —
// atomically.
func (v *ExportView) saveTo(path string) error {
	if !v.Publishable {
		return errors.New("this run cannot be published")
	}
	return v.write(path, []byte(v.Payload), 0o644, "Saved for publishing to "+path+": the run records only, nothing of the endpoint.")
}

// savePrivateTo writes the whole results file, local section included.
func (v *ExportView) savePrivateTo(path string) error {
	return v.write(path, v.data, 0o600, "Saved a private copy to "+path+". "+privateNote)
}

func (v *ExportView) write(path string, data []byte, perm os.FileMode, done string) error {
	if err := storage.WriteFileAtomic(path, data, perm); err != nil {
		v.note.SetText("Not saved: " + err.Error())
		v.note.Importance = widget.WarningImportance
		v.note.Refresh()
		return err
	}
	v.note.SetText(done)
	v.note.Importance = widget.MediumImportance
	v.note.Refresh()
	return nil
}

// shareBar is the buttons that share a result or a comparison in the
// shapes people post (package report): Copy as Markdown, which puts the
// table on the clipboard and says "Copied" on the button for a moment,
// Save CSV… and Save report… (one HTML file with the charts). Every one
// of them holds what Export's rule lets leave the machine: nothing of the
// endpoint (report.Shareable).
type shareBar struct {
	u *App
	// docs are what is shared: one result, or the runs compared with the
	// baseline first; labels their names in History ("" for none).
	docs       []plans.Doc
	labels     []string
	name       string // the files' name, without extension
	copyMD     *widget.Button
	saveCSV    *widget.Button
	saveReport *widget.Button
	content    *fyne.Container
}

// The Copy button's words, and how long it says it copied.
const (
	copyMarkdownText = "Copy as Markdown"
	copiedMarkdown   = "Copied ✓"
)

var copiedFor = 2 * time.Second

// newShareBar shares docs; name is the files' name offered (as
// chart.FileName makes it, with the format's extension).
func newShareBar(u *App, name string, docs []plans.Doc, labels []string) *shareBar {
	s := &shareBar{u: u, docs: docs, labels: labels, name: strings.TrimSuffix(chart.FileName(name), ".png")}
	s.copyMD = widget.NewButton(copyMarkdownText, s.onCopy)
	s.saveCSV = widget.NewButton("Save CSV…", s.onSaveCSV)
	s.saveReport = widget.NewButton("Save report…", s.onSaveReport)
	// "Copied ✓" is shorter than what it replaces: the button keeps its
	// width, so the row (and a title wrapped beside it) does not jump.
	width := canvas.NewRectangle(color.Transparent)
	width.SetMinSize(s.copyMD.MinSize())
	s.content = container.NewHBox(container.NewStack(width, s.copyMD), s.saveCSV, s.saveReport)
	return s
}

// resultShare shares run id's document d.
func resultShare(u *App, d plans.Doc, id string) *shareBar {
	label := ""
	if id != "" && u.lib != nil {
		label = u.lib.Annotation(id).Label
	}
	return newShareBar(u, d.Kind().ID+" "+results.ModelName(d.Model()), []plans.Doc{d}, []string{label})
}

// report is the shared documents' report: of the one result, or of the
// comparison.
func (s *shareBar) report() (report.Report, error) {
	if len(s.docs) == 1 {
		return report.Of(s.docs[0], report.WithPrice(s.u.price()))
	}
	return report.Compared(s.docs, s.labels)
}

func (s *shareBar) onCopy() {
	r, err := s.report()
	if err != nil {
		s.u.showProblem("Not copied", "The table could not be made: "+err.Error()+".")
		return
	}
	s.u.fyne.Clipboard().SetContent(report.Markdown(r))
	s.copyMD.SetText(copiedMarkdown)
	b := s.copyMD
	time.AfterFunc(copiedFor, func() {
		fyne.Do(func() {
			if b.Text == copiedMarkdown {
				b.SetText(copyMarkdownText)
			}
		})
	})
}

func (s *shareBar) onSaveCSV() {
	r, err := s.report()
	if err != nil {
		s.u.showProblem("Not saved", "The table could not be made: "+err.Error()+".")
		return
	}
	s.u.askSave(s.name+".csv", "the table as CSV", func(w fyne.URIWriteCloser) error {
		return writeClose(w, func(w io.Writer) error { return report.CSV(w, r) })
	})
}

func (s *shareBar) onSaveReport() {
	s.u.askSave(s.name+".html", "the report", func(w fyne.URIWriteCloser) error {
		return writeClose(w, func(w io.Writer) error { return report.HTML(w, s.docs, s.labels, report.WithPrice(s.u.price())) })
	})
}

// writeClose writes through write into w and closes it, saying the first
// failure of either.
func writeClose(w fyne.URIWriteCloser, write func(io.Writer) error) error {
	err := write(w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
