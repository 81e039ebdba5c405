// Package ui is Kovara Desktop's Fyne interface: one window with four
// places (Benchmark, History, Compare, Endpoints). Screens are thin: every
// decision lives in engine/ or storage/ and is tested there. Work happens
// off the UI goroutine; every widget change from another goroutine goes
// through fyne.Do.
package ui

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/storage"
)

// Preference keys.
const (
	prefRecentManifests = "benchmark.recent_manifests"
	prefLastEndpoint    = "benchmark.last_endpoint"
	prefWindowWidth     = "window.width"
	prefWindowHeight    = "window.height"
)

// The window's size the first time, and the smallest size every place is
// laid out for (a 1024×640 screen less the tab bar; a test holds each
// place's content to it).
var (
	defaultWindowSize = fyne.NewSize(1180, 820)
	minWindowSize     = fyne.NewSize(1024, 640)
)

// Options are the command-line choices of kovara-desktop.
type Options struct {
	Demo bool         // start the default run on the simulator, the form left as it was
	Dirs storage.Dirs // where the library and settings live
	Keys storage.Keys // the OS keyring (tests pass a memory one)
	// OnResult, when set, is called (on the UI goroutine) each time a
	// result is shown; the smoke test uses it to know when to look.
	OnResult func()
	// Observe, when set, may add hooks to each run's observer (tests hold
	// the measurements against the simulator's record with it).
	Observe func(*engine.Observer)
	// Do runs a UI change from another goroutine; fyne.Do when nil.
	// Tests pass one that serialises with their own reads of the widgets.
	Do func(func())
}

// App is the main window and the state its screens share.
type App struct {
	fyne fyne.App
	win  fyne.Window
	opts Options

	do        func(func()) // fyne.Do, or the tests' serialised runner
	lib       *storage.Library
	endpoints *storage.EndpointStore
	keys      storage.Keys

	tabs          *container.AppTabs
	bench         *BenchmarkScreen
	historyScreen *HistoryScreen
	compareScreen *CompareScreen
	compareTab    *container.TabItem
	endpointS     *EndpointsScreen
	notice        *noticeBar // what an action just did, along the window's foot

	closeConfirm dialog.Dialog // the close-during-a-run question, while it is shown
	closed       bool          // the window was closed (tests look)
	// contextView is the context result view last made (where it shows,
	// the Benchmark or the History place), for the tests to read.
	contextView *ContextView
	// tuneView is the settings comparison's result view last made.
	tuneView *TuneView
	// bg counts the goroutines of History's traces and Record my traffic
	// still to hand the screen what they found (the tests wait for them).
	bg sync.WaitGroup
}

// New builds the main window on a (real or test) Fyne app.
func New(a fyne.App, opts Options) (*App, error) {
	if opts.Dirs == (storage.Dirs{}) {
		d, err := storage.DefaultDirs()
		if err != nil {
			return nil, err
		}
		opts.Dirs = d
	}
	lib, err := storage.OpenLibrary(opts.Dirs.Data)
	if err != nil {
		return nil, err
	}
	keys := opts.Keys
	if keys == nil {
		keys = storage.NewSessionKeys(storage.NewKeyring(5*time.Second), nil)
	}
	do := opts.Do
	if do == nil {
		do = fyne.Do
	}
	u := &App{
		do:        do,
		fyne:      a,
		opts:      opts,
		lib:       lib,
		endpoints: storage.OpenEndpoints(opts.Dirs.Config),
		keys:      keys,
	}
	u.win = a.NewWindow("Kovara Desktop")
	u.win.Resize(u.savedSize())
	u.endpointS = newEndpointsScreen(u)
	u.bench = newBenchmarkScreen(u)
	u.historyScreen = newHistoryScreen(u)
	u.compareScreen = newCompareScreen(u)
	u.compareTab = container.NewTabItem("Compare", u.compareScreen.content)
	historyTab := container.NewTabItem("History", u.historyScreen.content)
	u.tabs = container.NewAppTabs(
		container.NewTabItem("Benchmark", u.bench.content),
		historyTab,
		u.compareTab,
		container.NewTabItem("Endpoints", u.endpointS.content),
	)
	u.tabs.OnSelected = func(t *container.TabItem) {
		if t == historyTab {
			u.historyScreen.onShown()
		}
	}
	u.notice = newNoticeBar(u)
	u.win.SetContent(container.NewBorder(nil, u.notice.content, nil, nil, u.tabs))
	u.win.SetOnDropped(u.historyScreen.onDropped)
	u.win.SetCloseIntercept(u.requestClose)
	// However the app ends (the window closed, or the desktop ending
	// the session), a recording in progress stops with its trace closed.
	a.Lifecycle().SetOnStopped(u.endpointS.rec.close)
	u.addShortcuts()
	if opts.Demo {
		u.bench.runDemo()
	}
	return u, nil
}

// Window is the main window.
func (u *App) Window() fyne.Window { return u.win }

// savedSize is the window's size when the app was last closed, or the
// default; never smaller than the smallest layout.
func (u *App) savedSize() fyne.Size {
	p := u.fyne.Preferences()
	w := p.FloatWithFallback(prefWindowWidth, float64(defaultWindowSize.Width))
	h := p.FloatWithFallback(prefWindowHeight, float64(defaultWindowSize.Height))
	return fyne.NewSize(max(float32(w), minWindowSize.Width), max(float32(h), minWindowSize.Height))
}

// requestClose is the window's close button and Ctrl+Q. With a benchmark
// running it asks, as Stop does; "Stop and close" stops the run the way
// Stop does — the level in progress kept as partial, the file saved — and
// closes the window once the run has ended.
func (u *App) requestClose() {
	st := u.bench.running
	if st == nil {
		u.closeRecording()
		return
	}
	if u.closeConfirm != nil {
		return // already asking
	}
	d := dialog.NewConfirm("Stop the benchmark and close?",
		"The benchmark is still running. Closing stops it as Stop does: "+u.bench.kind().Stopped()+"; and a server the app started is stopped.",
		func(ok bool) {
			u.closeConfirm = nil
			if !ok {
				return
			}
			u.bench.stopRun(st)
			go func() {
				<-st.done
				u.do(u.closeWindow)
			}()
		}, u.win)
	d.SetConfirmText("Stop and close")
	d.SetDismissText("Keep running")
	u.closeConfirm = d
	d.Show()
}

// closeRecording closes the window, asking first while Record my
// traffic runs: the person's clients go through it, and a day's
// recording should not end by a slip of the hand.
func (u *App) closeRecording() {
	rec := u.endpointS.rec.active
	if rec == nil {
		u.closeWindow()
		return
	}
	if u.closeConfirm != nil {
		return // already asking
	}
	msg := widget.NewLabel(fmt.Sprintf("Your clients reach %s through http://%s. Closing stops the recording: the trace keeps the %s so far, and the clients get no answer at that address until it records again.",
		rec.endpoint, rec.addr, requestsWords(rec.n.Load(), rec.failed.Load())))
	msg.Wrapping = fyne.TextWrapWord
	scroll := container.NewVScroll(msg)
	scroll.SetMinSize(fyne.NewSize(520, 80))
	d := dialog.NewCustomConfirm("Stop recording and close?", "Stop and close", "Keep recording", scroll, func(ok bool) {
		u.closeConfirm = nil
		if ok {
			u.closeWindow()
		}
	}, u.win)
	u.closeConfirm = d
	d.Show()
}

// closeWindow remembers the window's size and closes it.
func (u *App) closeWindow() {
	if s := u.win.Canvas().Size(); s.Width > 0 && s.Height > 0 {
		p := u.fyne.Preferences()
		p.SetFloat(prefWindowWidth, float64(s.Width))
		p.SetFloat(prefWindowHeight, float64(s.Height))
	}
	u.bench.closeForm()     // the form as it is, for the next start
	u.endpointS.rec.close() // a recording stops, its trace closed
	u.closed = true
	u.win.Close()
}

// appShortcuts are the app's own keys with Ctrl (Cmd on macOS): 1…4 go
// to the four places, Q closes (asking first during a run).
var appShortcuts = []fyne.KeyName{fyne.Key1, fyne.Key2, fyne.Key3, fyne.Key4, fyne.KeyQ}

// addShortcuts registers the app's shortcuts with the window; a focused
// text field passes them on itself (formEntry).
func (u *App) addShortcuts() {
	c := u.win.Canvas()
	for _, key := range appShortcuts {
		c.AddShortcut(&desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault}, func(s fyne.Shortcut) {
			u.runShortcut(s.(*desktop.CustomShortcut))
		})
	}
}

// runShortcut runs s when it is one of the app's shortcuts, and says
// whether it was.
func (u *App) runShortcut(s *desktop.CustomShortcut) bool {
	if s.Modifier != fyne.KeyModifierShortcutDefault {
		return false
	}
	switch i := slices.Index(appShortcuts, s.KeyName); {
	case i < 0:
		return false
	case s.KeyName == fyne.KeyQ:
		u.requestClose()
	default:
		// Fyne keeps the keyboard in a field on a tab it hides, and
		// would type what comes next into it.
		u.win.Canvas().Unfocus()
		u.tabs.SelectIndex(i)
	}
	return true
}

// showProblem explains a problem in a dialog wide enough to read: Fyne's
// error dialog wraps long messages into a narrow column.
func (u *App) showProblem(title, text string) {
	msg := widget.NewLabel(text)
	msg.Wrapping = fyne.TextWrapWord
	scroll := container.NewVScroll(msg)
	scroll.SetMinSize(fyne.NewSize(620, 160))
	dialog.ShowCustom(title, "Close", scroll, u.win)
}

// compareWith opens History with run id selected, to pick the others.
func (u *App) compareWith(id string) {
	u.tabs.SelectIndex(1)
	if u.historyScreen.opened != nil || u.historyScreen.openedOther || u.historyScreen.tracesShown {
		u.historyScreen.closeRun()
	}
	u.historyScreen.preselect(id)
}

// endpointsChanged refreshes every screen that lists endpoints.
func (u *App) endpointsChanged() {
	u.bench.refreshEndpoints()
	u.bench.revalidate() // an address changed: its last check may no longer apply
}

var errNoEndpoint = errors.New("choose an endpoint")
