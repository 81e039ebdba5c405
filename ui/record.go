package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/record"
	"github.com/kovara/desktop/storage"
)

// prefRecordListen keeps where Record my traffic last listened, for the
// next start (the app's preferences: a choice of this machine's, like
// the window's size).
const prefRecordListen = "record.listen"

// defaultRecordListen is where the recording proxy listens unless the
// person says otherwise: this machine only (kovara-bench record's too).
const defaultRecordListen = "127.0.0.1:8099"

// recordCountEvery is how often, at most, the count of requests recorded
// is shown again: a busy agent's requests come faster than a person
// reads them.
var recordCountEvery = 250 * time.Millisecond

// recordGrace is how long Stop lets an answer in progress finish before
// its connection is closed (its line is then written with the client's
// stream ended).
var recordGrace = 3 * time.Second

// recorder is the Endpoints page's "Record my traffic" (issue #51): the
// recording proxy (package record) put in front of the selected saved
// endpoint, listening where the person says, writing a trace into the
// library's traces folder until Stop or the app closes. One recording at
// a time, whichever endpoint is selected meanwhile.
type recorder struct {
	s       *EndpointsScreen
	content fyne.CanvasObject

	listenEntry  *formEntry
	reachNote    *widget.Label // who else can reach the server, for an address beyond loopback
	recordButton *widget.Button
	stopButton   *widget.Button
	folderButton *widget.Button // Show folder of the trace
	status       *widget.Label
	pathLabel    *widget.Label // the trace's path, selectable to copy
	form         *widget.Form

	active *recording // the recording in progress; nil when none
	// last is the recording last stopped, whose trace the page still
	// names; nil before any.
	last *recording
	// problem is why the last Record could not start, shown until the
	// page changes.
	problem string
}

// recording is one run of the proxy.
type recording struct {
	endpoint string // the saved endpoint's name
	upstream string // where the requests go on to, as the page says it
	// listen is where it listens as the person gave it, with the port
	// a ":0" was given; addr is where their clients reach it (this
	// machine's address on the network for 0.0.0.0, which no client
	// can connect to).
	listen, addr string
	path         string // the trace
	started      time.Time
	cancel       context.CancelFunc
	// done is closed once the proxy has stopped and the trace is closed
	// (before the page is told, so closing the window may wait on it).
	done chan struct{}
	// n and failed count the requests written, pending a count shown
	// soon (recordCountEvery); shown is the count the page shows.
	n, failed          atomic.Int64
	pending            atomic.Bool
	shown, shownFailed int64
	stopping           bool
	// err is why it ended on its own, or the trace's close failed; ended
	// when (both set before done is closed).
	err   error
	ended time.Time
	empty bool // nothing came through: its empty trace was removed
}

func newRecorder(s *EndpointsScreen) *recorder {
	r := &recorder{s: s}
	r.listenEntry = newFormEntry(s.u)
	r.listenEntry.SetPlaceHolder(defaultRecordListen)
	r.listenEntry.SetText(s.u.fyne.Preferences().StringWithFallback(prefRecordListen, defaultRecordListen))
	r.listenEntry.OnChanged = func(string) { r.problem = ""; r.refresh() }
	r.reachNote = widget.NewLabel("")
	r.reachNote.Wrapping = fyne.TextWrapWord
	r.reachNote.Importance = widget.WarningImportance
	r.recordButton = widget.NewButton("Record", r.onRecord)
	r.recordButton.Importance = widget.HighImportance
	r.stopButton = widget.NewButton("Stop", r.onStop)
	r.folderButton = widget.NewButton("Show folder", func() {
		if rec := r.shownRecording(); rec != nil {
			showFile(s.u, rec.path)
		}
	})
	r.status = widget.NewLabel("")
	r.status.Wrapping = fyne.TextWrapWord
	r.pathLabel = widget.NewLabel("")
	r.pathLabel.Wrapping = fyne.TextWrapBreak // a path has no spaces to wrap at
	r.pathLabel.Selectable = true
	about := widget.NewLabel("Put the app between your own clients and this server — a day of chat, a coding agent's session — " +
		"and keep the traffic as a trace to replay against any setting (Benchmark, rate plan, Replay a trace). " +
		"The trace holds when each request came, its lengths, timing and prefix structure as hashes: never the words.")
	about.Wrapping = fyne.TextWrapWord
	r.form = widget.NewForm(widget.NewFormItem("Listen on", container.NewBorder(nil, nil, nil,
		container.NewHBox(r.recordButton, r.stopButton), r.listenEntry)))
	r.content = container.NewVBox(
		widget.NewLabelWithStyle("Record my traffic", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		about,
		// Its field starts where the endpoint's fields do.
		alignedWith(&s.labels, r.form),
		r.reachNote,
		r.status,
		container.NewBorder(nil, nil, nil, r.folderButton, r.pathLabel),
	)
	r.refresh()
	return r
}

// listenAddr reads the Listen on field: host and port ("" is the
// default).
func listenAddr(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return defaultRecordListen, nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("listen on %q: give an address and a port, like %s (this machine only) or 0.0.0.0:8099 (every network)", v, defaultRecordListen)
	}
	if n, err := net.LookupPort("tcp", port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("listen on %q: %q is not a port number", v, port)
	}
	return net.JoinHostPort(host, port), nil
}

// shownRecording is the recording the page speaks of: the one in
// progress, else the last one stopped.
func (r *recorder) shownRecording() *recording {
	if r.active != nil {
		return r.active
	}
	return r.last
}

// target is the saved endpoint a recording would go on to, or why there
// is none to record.
func (r *recorder) target() (storage.SavedEndpoint, string) {
	switch name := r.s.selected; name {
	case SimulatorName:
		return storage.SavedEndpoint{}, "The built-in simulator lives inside the app and has no address of its own: to try recording, run kovara-bench simulate and save its address as an endpoint."
	case "":
		return storage.SavedEndpoint{}, "Save the endpoint first: the recording sends the requests on to its saved address."
	default:
		e, ok, err := r.s.u.endpoints.Get(name)
		if err != nil || !ok {
			return storage.SavedEndpoint{}, fmt.Sprintf("%q could not be read: %v", name, err)
		}
		return e, ""
	}
}

// refresh shows the page as the recording stands: Record for the
// selected endpoint, or the recording in progress (of whichever
// endpoint) with its count, its file and Stop.
func (r *recorder) refresh() {
	rec := r.active
	addr, addrErr := listenAddr(r.listenEntry.Text)
	reach := ""
	if addrErr == nil && rec == nil {
		reach = record.ReachWords(addr)
	}
	if rec != nil {
		reach = record.ReachWords(rec.listen)
	}
	r.reachNote.SetText(reach)
	if reach == "" {
		r.reachNote.Hide()
	} else {
		r.reachNote.Show()
	}
	_, why := r.target()
	switch {
	case rec != nil:
		r.recordButton.Disable()
		r.listenEntry.Disable()
		if rec.stopping {
			r.stopButton.Disable()
		} else {
			r.stopButton.Enable()
		}
		r.stopButton.Show()
		setLabel(r.status, r.recordingWords(rec), false)
	default:
		r.listenEntry.Enable()
		r.stopButton.Hide()
		if why != "" || addrErr != nil {
			r.recordButton.Disable()
		} else {
			r.recordButton.Enable()
		}
		switch {
		case r.problem != "":
			setLabel(r.status, r.problem, true)
		case addrErr != nil:
			setLabel(r.status, capitalize(addrErr.Error())+".", true)
		case r.last != nil && why != "":
			setLabel(r.status, r.stoppedWords(r.last)+"\n"+why, r.last.err != nil)
		case r.last != nil:
			setLabel(r.status, r.stoppedWords(r.last), r.last.err != nil)
		case why != "":
			setLabel(r.status, why, false)
		default:
			setLabel(r.status, "Not recording.", false)
		}
	}
	if shown := r.shownRecording(); shown != nil && (shown == r.active || !shown.empty) { // empty is the goroutine's until it ends
		r.pathLabel.SetText("Trace: " + shown.path)
		r.pathLabel.Show()
		r.folderButton.Show()
	} else {
		r.pathLabel.Hide()
		r.folderButton.Hide()
	}
	r.form.Refresh() // Fyne greys a form's label only as it refreshes
}

// recordingWords is the status line while rec runs.
func (r *recorder) recordingWords(rec *recording) string {
	if rec.stopping {
		return fmt.Sprintf("Stopping: the answers in progress have up to %s to finish… %s so far.", results.Seconds(float64(recordGrace.Milliseconds())), requestsWords(rec.shown, rec.shownFailed))
	}
	return fmt.Sprintf("Recording %s: point your clients at http://%s (OpenAI clients: http://%s/v1) — %s so far. The requests go on to %s.",
		rec.endpoint, rec.addr, rec.addr, requestsWords(rec.shown, rec.shownFailed), rec.upstream)
}

// stoppedWords says how the last recording ended.
func (r *recorder) stoppedWords(rec *recording) string {
	took := spanWords(rec.ended.Sub(rec.started).Seconds())
	if rec.empty {
		return fmt.Sprintf("No requests came through in %s, so no trace was kept: point your clients at http://%s while it records.", took, rec.addr)
	}
	if rec.err != nil {
		return fmt.Sprintf("The recording of %s stopped after %s: %v. %s are in the trace.", rec.endpoint, took, rec.err, capitalize(requestsWords(rec.shown, rec.shownFailed)))
	}
	return fmt.Sprintf("Recorded %s from %s in %s. History lists it under Recorded traces, and the rate plan's Replay a trace sends it again.", requestsWords(rec.shown, rec.shownFailed), rec.endpoint, took)
}

// requestsWords is "12 requests" with how many failed, if any.
func requestsWords(n, failed int64) string {
	s := results.Thousands(int(n)) + " " + results.Plural(int(n), "request", "requests")
	if failed > 0 {
		s += fmt.Sprintf(" (%s failed)", results.Thousands(int(failed)))
	}
	return s
}

// onRecord starts the recording for the selected endpoint; an address
// others can reach is asked about first.
func (r *recorder) onRecord() {
	if r.active != nil {
		return
	}
	addr, err := listenAddr(r.listenEntry.Text)
	if err != nil {
		r.problem = capitalize(err.Error()) + "."
		r.refresh()
		return
	}
	words := record.ReachWords(addr)
	if words == "" {
		r.start(addr)
		return
	}
	msg := widget.NewLabel(words + "\n\nListen on " + addr + " all the same? On 127.0.0.1 only this machine's clients reach it.")
	msg.Wrapping = fyne.TextWrapWord
	scroll := container.NewVScroll(msg)
	scroll.SetMinSize(fyne.NewSize(560, 150))
	d := dialog.NewCustomConfirm("Others can reach your server", "Listen on "+addr, "Cancel", scroll, func(ok bool) {
		if ok {
			r.start(addr)
		}
	}, r.s.u.win)
	d.Show()
}

// start listens on addr and runs the proxy in front of the selected
// endpoint. Nothing is left running, and no trace file made, when it
// cannot listen.
func (r *recorder) start(addr string) {
	if r.active != nil {
		return
	}
	r.problem = ""
	e, why := r.target()
	if why != "" {
		r.problem = why
		r.refresh()
		return
	}
	fail := func(text string) {
		r.problem = text
		r.refresh()
	}
	base, err := setup.ParseBase(e.URL)
	if err != nil {
		fail("Cannot record " + e.Name + ": " + err.Error())
		return
	}
	up, err := url.Parse(base.Root)
	if err != nil {
		fail("Cannot record " + e.Name + ": " + err.Error())
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fail(listenProblem(addr, err))
		return
	}
	now := time.Now()
	path, err := storage.NewTracePath(r.s.u.opts.Dirs.Data, now)
	var w *trace.Writer
	if err == nil {
		w, err = trace.Create(path)
	}
	if err != nil {
		ln.Close()
		fail("The trace could not be made: " + err.Error() + ".")
		return
	}
	host, _, _ := net.SplitHostPort(addr)
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	rec := &recording{endpoint: e.Name, upstream: up.Redacted(), listen: net.JoinHostPort(host, port), addr: clientAddr(host, port),
		path: path, started: now, done: make(chan struct{})}
	p, err := record.New(record.Options{Upstream: up, Trace: w, OnRequest: func(q trace.Request) { r.counted(rec, q) }})
	if err != nil {
		ln.Close()
		w.Close()
		fail("Cannot record " + e.Name + ": " + err.Error())
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	rec.cancel = cancel
	r.active = rec
	r.s.u.fyne.Preferences().SetString(prefRecordListen, strings.TrimSpace(r.listenEntry.Text))
	r.s.u.bg.Add(1)
	go func() {
		defer r.s.u.bg.Done()
		err := record.Serve(ctx, ln, p, recordGrace)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		// A recording nothing came through keeps no empty trace for
		// History to list.
		if st, serr := os.Stat(path); err == nil && w.Count() == 0 && serr == nil && st.Size() == 0 {
			rec.empty = os.Remove(path) == nil
		}
		rec.err, rec.ended = err, time.Now()
		close(rec.done)
		r.s.u.do(func() { r.ended(rec) })
	}()
	r.refresh()
}

// clientAddr is where clients reach a proxy listening on host and port:
// host itself, unless it is every address of the machine (0.0.0.0, ::,
// none), where it is the machine's first address on a network, or
// 127.0.0.1 on a machine with none.
func clientAddr(host, port string) string {
	ip := net.ParseIP(host)
	if host != "" && (ip == nil || !ip.IsUnspecified()) {
		return net.JoinHostPort(host, port)
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return net.JoinHostPort(n.IP.String(), port)
		}
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// listenProblem says why the proxy could not listen on addr, in words.
func listenProblem(addr string, err error) string {
	_, port, _ := net.SplitHostPort(addr)
	msg := strings.ToLower(err.Error())
	switch {
	case errors.Is(err, syscall.EADDRINUSE) || strings.Contains(msg, "address already in use") || strings.Contains(msg, "only one usage of each socket address"):
		return fmt.Sprintf("Nothing was started: another program already listens on %s (a server, or a recording still running elsewhere). Give another port under Listen on, like %s.", addr, nextPort(addr))
	case errors.Is(err, syscall.EACCES) || strings.Contains(msg, "permission denied"):
		return fmt.Sprintf("Nothing was started: port %s needs the administrator's rights on this machine. Give a port above 1023 under Listen on, like %s.", port, defaultRecordListen)
	case errors.Is(err, syscall.EADDRNOTAVAIL) || strings.Contains(msg, "assign requested address"):
		return fmt.Sprintf("Nothing was started: this machine has no address %s. Give one of its own under Listen on, like %s.", addr, defaultRecordListen)
	}
	return fmt.Sprintf("Nothing was started: the app could not listen on %s (%v).", addr, err)
}

// nextPort is addr on the port after its own, to suggest.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return defaultRecordListen
	}
	n, err := net.LookupPort("tcp", port)
	if err != nil || n <= 0 || n >= 65535 {
		return defaultRecordListen
	}
	return net.JoinHostPort(host, fmt.Sprint(n+1))
}

// counted is the proxy's word that a request's line was written (from
// the request's goroutine): the count is shown at most every
// recordCountEvery.
func (r *recorder) counted(rec *recording, q trace.Request) {
	rec.n.Add(1)
	if q.Error != "" {
		rec.failed.Add(1)
	}
	if !rec.pending.CompareAndSwap(false, true) {
		return // a count is on its way to the page
	}
	r.s.u.bg.Add(1)
	time.AfterFunc(recordCountEvery, func() {
		defer r.s.u.bg.Done()
		rec.pending.Store(false)
		r.s.u.do(func() {
			rec.show()
			if r.active == rec {
				r.refresh()
			}
		})
	})
}

// onStop stops the recording; the page says so once the proxy has let
// the answers in progress finish and the trace is closed.
func (r *recorder) onStop() {
	rec := r.active
	if rec == nil || rec.stopping {
		return
	}
	rec.stopping = true
	rec.show()
	rec.cancel()
	r.refresh()
}

// ended is the proxy having stopped, by Stop, the app closing, or on its
// own.
func (r *recorder) ended(rec *recording) {
	if r.active != rec {
		return
	}
	r.active, r.last = nil, rec
	rec.show()
	r.refresh()
}

// show takes the counts to show now (on the UI goroutine).
func (rec *recording) show() {
	rec.shown, rec.shownFailed = rec.n.Load(), rec.failed.Load()
}

// close stops a recording in progress as the app closes, and waits (a
// moment at most) for its trace to be closed.
func (r *recorder) close() {
	rec := r.active
	if rec == nil {
		return
	}
	rec.stopping = true
	rec.cancel()
	select {
	case <-rec.done:
	case <-time.After(recordGrace + 2*time.Second):
	}
}

// spanWords says a length of time in seconds as a person reads it:
// "0.4 s", "45 s", "3 min 20 s", "2 h 5 min", "3 d 4 h".
func spanWords(secs float64) string {
	if secs < 9.95 { // a few requests a moment apart: "0 s" said nothing
		return trimFloat(math.Round(secs*10)/10) + " s"
	}
	d := time.Duration(secs * float64(time.Second)).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
		if s == 0 {
			return fmt.Sprintf("%d min", m)
		}
		return fmt.Sprintf("%d min %d s", m, s)
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%d d", days)
	}
	return fmt.Sprintf("%d d %d h", days, h)
}

// alignedWith puts f on the label column of the forms in column (the
// Endpoints page's form and Record my traffic's), as the Benchmark page
// does its forms (BenchmarkScreen.aligned).
func alignedWith(column *labelColumn, f *widget.Form) fyne.CanvasObject {
	a := &alignedForm{column: column, form: f}
	*column = append(*column, a)
	return container.New(a, f)
}
