package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
)

// askSave opens the save dialog offering name, then hands write the file
// the person chose; once it is written, the window says where ("Saved
// what to PATH", noticeBar), which the dialog, gone, no longer shows
// ("" for a caller that says it itself). Fyne joins what is typed in the name box to the folder
// shown, so a whole path typed there names a file in a folder that does
// not exist, and the dialog closed without a word and wrote nothing: a
// failure is said, with what to do.
func (u *App) askSave(name, what string, write func(fyne.URIWriteCloser) error) {
	d := dialog.NewFileSave(u.saveChosen(what, write), u.win)
	d.SetFileName(name)
	d.Show()
}

// saveChosen is the save dialog's answer: nothing on Cancel, the write
// otherwise, a problem said when either the place or the write fails, and
// where what was saved when it was (Save report… said nothing of it).
func (u *App) saveChosen(what string, write func(fyne.URIWriteCloser) error) func(fyne.URIWriteCloser, error) {
	return func(w fyne.URIWriteCloser, err error) {
		if err != nil {
			u.showProblem("Not saved", "Nothing was written: "+err.Error()+
				".\n\nType only the file's name in the name box, and choose its folder in the list above it.")
			return
		}
		if w == nil {
			return // Cancel
		}
		path := w.URI().Path()
		if err := write(w); err != nil {
			u.showProblem("Not saved", "Nothing was written: "+err.Error()+".")
			return
		}
		if what != "" {
			u.notify("Saved "+what+" to "+path, path)
		}
	}
}
