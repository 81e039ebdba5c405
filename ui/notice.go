package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// noticeBar is a line along the window's foot saying what an action just
// did where its button gives no room to say it: where a file was saved
// ("Saved the report to /home/me/kovara-….html"), with Show folder and
// a close button. It goes after noticeFor, or when another replaces it.
type noticeBar struct {
	u       *App
	content *fyne.Container // hidden while there is nothing to say
	text    *widget.Label
	show    *widget.Button // Show folder
	close   *widget.Button
	path    string
	gen     int // bumped per notice, so an older one's timer leaves a newer one
}

// noticeFor is how long a notice stays.
var noticeFor = 30 * time.Second

func newNoticeBar(u *App) *noticeBar {
	n := &noticeBar{u: u, text: widget.NewLabel("")}
	n.text.Wrapping = fyne.TextWrapBreak // a path has no spaces to wrap at
	n.text.Selectable = true             // the path, to copy
	n.show = widget.NewButton("Show folder", func() {
		if n.path != "" {
			showFile(u, n.path)
		}
	})
	n.close = widget.NewButtonWithIcon("", theme.CancelIcon(), n.hide)
	n.close.Importance = widget.LowImportance
	n.content = container.NewBorder(widget.NewSeparator(), nil, nil, container.NewHBox(n.show, n.close), n.text)
	n.content.Hide()
	return n
}

// notify says text along the window's foot; path, when given, is the file
// it is about, which Show folder opens.
func (u *App) notify(text, path string) {
	n := u.notice
	n.gen++
	gen := n.gen
	n.path = path
	n.text.SetText(text)
	if path == "" {
		n.show.Hide()
	} else {
		n.show.Show()
	}
	n.content.Show()
	time.AfterFunc(noticeFor, func() {
		u.do(func() {
			if n.gen == gen {
				n.hide()
			}
		})
	})
}

// hide takes the notice away.
func (n *noticeBar) hide() {
	n.gen++
	n.content.Hide()
}
