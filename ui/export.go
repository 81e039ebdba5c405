package ui

import (
	"fmt"
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/storage"
)

// ExportView shows whether a run can be published, the exact payload that
// would be sent, and saves the results file.
type ExportView struct {
	u    *App
	id   string
	data []byte // the results file, exactly as stored

	Publishable bool
	Payload     string
	Reasons     []string
	// Problems and Notes are the run's warnings (results.Warnings), shown
	// above the payload; with a problem, saving for publishing waits for
	// accept to be ticked.
	Problems []string
	Notes    []string

	content    fyne.CanvasObject
	verdict    *widget.Label
	payload    *widget.Label
	saveButton *widget.Button
	note       *widget.Label
	warnings   *widget.Label // the problems, then the notes; nil when none
	accept     *widget.Check // "publish it as it is"; nil without problems
	dialog     dialog.Dialog
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
		v.verdict = widget.NewLabelWithStyle("Ready to publish. This is exactly what would be sent: the run records and the manifest revision, nothing else.", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		v.verdict.Importance = widget.SuccessImportance
		// Read-only but selectable: what you see is what is sent.
		v.payload = widget.NewLabelWithStyle(v.Payload, fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		v.payload.Selectable = true
		body = container.NewScroll(v.payload)
		v.saveButton = widget.NewButton("Save results file…", v.onSave)
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
		v.saveButton = widget.NewButton("Save a private copy…", v.onSave)
		v.note.SetText("A private copy is the whole results file, local section included; keep it to yourself.")
	}
	v.verdict.Wrapping = fyne.TextWrapWord
	top := container.NewVBox(v.verdict)
	if len(v.Problems)+len(v.Notes) > 0 {
		var lines []string
		for _, p := range v.Problems {
			lines = append(lines, "Problem: "+p)
		}
		for _, n := range v.Notes {
			lines = append(lines, "Note: "+n)
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
	v.content = container.NewBorder(top, container.NewVBox(v.note, container.NewHBox(v.saveButton)), nil, nil, body)
	return v, nil
}

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
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		path := w.URI().Path()
		w.Close()
		v.saveTo(path)
	}, v.u.win)
	name := v.id + ".json"
	if !v.Publishable {
		name = v.id + ".private.json"
	}
	d.SetFileName(name)
	d.Show()
}

// saveTo writes the results file, byte for byte as stored, atomically.
func (v *ExportView) saveTo(path string) error {
	if err := storage.WriteFileAtomic(path, v.data, 0o644); err != nil {
		v.note.SetText("Not saved: " + err.Error())
		return err
	}
	v.note.SetText("Saved to " + path)
	return nil
}
