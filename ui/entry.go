package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// formEntry is the app's text field: a widget.Entry that hands the app's
// own shortcuts (Ctrl+Q, Ctrl+1…4) to the app. Fyne's desktop driver
// gives a focused widget every shortcut before the window's, and Entry
// drops those it does not know, so with the keyboard in a field they did
// nothing. Every other shortcut (copy, paste, select all, word deletion)
// stays the entry's.
type formEntry struct {
	widget.Entry
	u          *App
	textScroll *container.Scroll // the entry's own scroll of its text (wheel.go)
}

// newFormEntry is widget.NewEntry's field (text clipped to its width,
// never widening the form) handing the app's shortcuts on.
func newFormEntry(u *App) *formEntry {
	e := &formEntry{u: u}
	e.Wrapping = fyne.TextWrap(fyne.TextTruncateClip)
	e.ExtendBaseWidget(e)
	return e
}

// newPasswordFormEntry is widget.NewPasswordEntry's: Fyne gives an entry
// with Password set its show/hide button.
func newPasswordFormEntry(u *App) *formEntry {
	e := newFormEntry(u)
	e.Password = true
	return e
}

// newMultiLineFormEntry is widget.NewMultiLineEntry's.
func newMultiLineFormEntry(u *App) *formEntry {
	e := newFormEntry(u)
	e.MultiLine = true
	return e
}

// TypedShortcut runs an app shortcut, or gives the shortcut to the entry.
func (e *formEntry) TypedShortcut(s fyne.Shortcut) {
	if cs, ok := s.(*desktop.CustomShortcut); ok && e.u != nil && e.u.runShortcut(cs) {
		return
	}
	e.Entry.TypedShortcut(s)
}
