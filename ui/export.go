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

	content    fyne.CanvasObject
	verdict    *widget.Label
	payload    *widget.Label
	saveButton *widget.Button
	note       *widget.Label
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
	v.content = container.NewBorder(v.verdict, container.NewVBox(v.note, container.NewHBox(v.saveButton)), nil, nil, body)
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
