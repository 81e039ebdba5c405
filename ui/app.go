// Package ui is Kovara Desktop's Fyne interface: one window with four
// places (Benchmark, History, Compare, Endpoints). Screens are thin: every
// decision lives in engine/ or storage/ and is tested there. Work happens
// off the UI goroutine; every widget change from another goroutine goes
// through fyne.Do.
package ui

import (
	"errors"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/storage"
)

// Preference keys.
const (
	prefRecentManifests = "benchmark.recent_manifests"
	prefLastEndpoint    = "benchmark.last_endpoint"
)

// Options are the command-line choices of kovara-desktop.
type Options struct {
	Demo bool         // open on the simulator and start the default run
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
	u.win.Resize(fyne.NewSize(1180, 820))
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
		if t == historyTab && u.historyScreen.opened == nil && !u.historyScreen.openedOther {
			u.historyScreen.reload()
		}
	}
	u.win.SetContent(u.tabs)
	u.win.SetOnDropped(u.historyScreen.onDropped)
	if opts.Demo {
		u.bench.selectEndpoint(SimulatorName)
		u.bench.onRun()
	}
	return u, nil
}

// Window is the main window.
func (u *App) Window() fyne.Window { return u.win }

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
	if u.historyScreen.opened != nil || u.historyScreen.openedOther {
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
