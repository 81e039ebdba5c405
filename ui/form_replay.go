package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	fstorage "fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/storage/repository"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/plans"
)

// replayFields are "Replay a trace" (issue #51), in the rate form and in
// Compare settings: a trace recorded by Record my traffic (or
// kovara-bench record), or Mooncake's or BurstGPT's, sent at its
// recorded times in place of the rates or of the Kovara plan's levels
// (setup.Replay).
type replayFields struct {
	screen *BenchmarkScreen
	// onChange is the form's: the fields a trace sets itself are greyed
	// while one is given.
	onChange     func()
	traceEntry   *formEntry
	browseButton *widget.Button
	speedEntry   *formEntry
	fromEntry    *formEntry
	toEntry      *formEntry
	fields       *widget.Form
	section      *widget.Accordion
}

// newReplayFields makes r's section, folded like "Your own load"; none
// says what runs without a trace ("the rates above").
func (s *BenchmarkScreen) newReplayFields(r *replayFields, none string, onChange func()) *widget.Accordion {
	r.screen, r.onChange = s, onChange
	r.traceEntry = s.entry("", nil)
	r.traceEntry.SetPlaceHolder("none: " + none)
	r.traceEntry.OnChanged = func(string) { r.onChange(); s.revalidate() }
	r.browseButton = widget.NewButton("Browse…", r.openTraceDialog)
	r.speedEntry = s.entry("1", optionalPositive("speed"))
	r.speedEntry.SetPlaceHolder("1: as recorded; 2: twice as fast")
	r.fromEntry = s.entry("", optionalClock("from"))
	r.fromEntry.SetPlaceHolder("09:00; empty: from its start")
	r.toEntry = s.entry("", optionalClock("to"))
	r.toEntry.SetPlaceHolder("12:30; empty: to its end")
	r.fields = widget.NewForm(
		widget.NewFormItem("Trace file", container.NewBorder(nil, nil, nil, r.browseButton, r.traceEntry)),
		widget.NewFormItem("Speed (× recorded)", r.speedEntry),
		widget.NewFormItem("From (time of day)", r.fromEntry),
		widget.NewFormItem("To (time of day)", r.toEntry),
	)
	r.section = widget.NewAccordion(widget.NewAccordionItem("Replay a trace", s.aligned(r.fields)))
	return r.section
}

// optionalClock accepts an empty field or a time of day.
func optionalClock(field string) func(string) error {
	return func(v string) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		if _, err := setup.ParseClock(v); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		return nil
	}
}

// replaying says whether a trace is given.
func (r *replayFields) replaying() bool {
	return r.traceEntry != nil && strings.TrimSpace(r.traceEntry.Text) != ""
}

// enableOwn greys the replay's own fields (speed, from, to) while no
// trace is given.
func (r *replayFields) enableOwn() {
	for _, w := range []fyne.Disableable{r.speedEntry, r.fromEntry, r.toEntry} {
		if r.replaying() {
			w.Enable()
		} else {
			w.Disable()
		}
	}
	r.fields.Refresh()
}

// enableUnless greys ws while a trace is given: what the trace sets
// itself.
func (r *replayFields) enableUnless(ws ...fyne.Disableable) {
	for _, w := range ws {
		if r.replaying() {
			w.Disable()
		} else {
			w.Enable()
		}
	}
	r.enableOwn()
}

// onTraceFile greys the fields a trace sets itself (its requests, their
// times and lengths) while one is given, and the replay's own while none
// is.
func (f *rateForm) onTraceFile() {
	f.enableUnless(f.ratesEntry, f.arrivalSelect, f.requestsEntry, f.inputEntry, f.outputEntry, f.sweepMaxEntry)
	f.onArrival() // burstiness: gamma arrivals only, and no trace
}

// openTraceDialog chooses the trace, starting in the folder of the one
// typed, else in the library's traces folder.
func (f *replayFields) openTraceDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return // cancelled
		}
		path := r.URI().Path()
		r.Close()
		f.traceEntry.SetText(path)
	}, f.screen.u.win)
	dir := filepath.Join(f.screen.u.opts.Dirs.Data, "traces")
	if cur := strings.TrimSpace(f.traceEntry.Text); cur != "" {
		dir = filepath.Dir(cur)
	}
	if uri, err := repository.ParseURI("file://" + filepath.ToSlash(dir)); err == nil {
		if l, err := fstorage.ListerForURI(uri); err == nil {
			d.SetLocation(l)
		}
	}
	d.Show()
}

// fillTrace puts path in the trace's field and unfolds the section
// (History's Replay…).
func (f *replayFields) fillTrace(path string) {
	f.traceEntry.SetText(path)
	f.section.Open(0)
}

// replay reads "Replay a trace": nil when no trace is given. The trace
// is read now (once for each version of the file), so one that is not
// there or not a trace is said under the plan, not when the run starts.
func (f *replayFields) replay(errs []error) (*setup.Replay, []error) {
	if !f.replaying() {
		return nil, errs
	}
	r := &setup.Replay{File: strings.TrimSpace(f.traceEntry.Text), From: strings.TrimSpace(f.fromEntry.Text), To: strings.TrimSpace(f.toEntry.Text)}
	if v := strings.TrimSpace(f.speedEntry.Text); v != "" {
		var err error
		if r.Speed, err = engine.ParsePositive("speed", v); err != nil {
			errs = append(errs, err)
		}
	}
	info := readTraceInfo(r.File)
	if info.err != nil {
		errs = append(errs, info.err)
	} else if (r.From != "" || r.To != "") && info.format != trace.FormatKovara {
		errs = append(errs, fmt.Errorf("from and to pick a part of the day by each request's clock time, which only a trace this app recorded has: a %s trace's times start at 0", formatName(info.format)))
	}
	return r, errs
}

// replaySummary says what Run does with a trace.
func (f *rateForm) replaySummary(p setup.RatePlan) string {
	what, when := replayWords(p.Replay)
	slo := "no service level, so no goodput"
	if p.SLO.Set() {
		slo = "goodput: requests with " + (&results.RateSLO{TTFTMs: p.SLO.TTFTMs, TPOTMs: p.SLO.TPOTMs}).Words()
	}
	return fmt.Sprintf("Replay: %s, %s, each with a prompt of its recorded length and prefix sharing and an answer as long as it was, at most %d in flight; %s. Kept in the history; never published.",
		what, when, p.MaxInFlight, slo)
}

// replayWords say which of a trace's requests a replay sends and when:
// "the 1,204 requests of day.jsonl", "at their recorded times, 9 h as
// recorded".
func replayWords(r *setup.Replay) (what, when string) {
	info := readTraceInfo(r.File)
	what = fmt.Sprintf("the %s of %s", requestsWords(int64(info.requests), 0), filepath.Base(r.File))
	if info.format != "" && info.format != trace.FormatKovara {
		what += fmt.Sprintf(" (%s)", formatName(info.format))
	}
	if r.From != "" || r.To != "" {
		from, to := r.From, r.To
		if from == "" {
			from = "its start"
		}
		if to == "" {
			to = "its end"
		}
		what = fmt.Sprintf("the requests of %s recorded from %s to %s", filepath.Base(r.File), from, to)
	}
	when = fmt.Sprintf("at their recorded times, %s as recorded", spanWords(info.spanS))
	if sp := r.SpeedOr1(); sp != 1 {
		when = fmt.Sprintf("%s times as fast as recorded (%s where they took %s)", trimFloat(sp), spanWords(info.spanS/sp), spanWords(info.spanS))
		if r.From != "" || r.To != "" {
			when = fmt.Sprintf("%s times as fast as recorded", trimFloat(sp))
		}
	} else if r.From != "" || r.To != "" {
		when = "at their recorded times"
	}
	return what, when
}

// formatName is a trace format as the form says it.
func formatName(f trace.Format) string {
	switch f {
	case trace.FormatMooncake:
		return "Mooncake"
	case trace.FormatBurstGPT:
		return "BurstGPT"
	}
	return "this app's"
}

// traceInfo is what the form knows of a trace file: its format, its
// requests and their span, or why it cannot be replayed.
type traceInfo struct {
	format   trace.Format
	requests int
	spanS    float64
	err      error
}

// traceInfos caches each trace read by the form, by its path, size and
// time: a trace of a busy week is read once, not at every key typed.
var traceInfos = struct {
	sync.Mutex
	m map[string]traceInfo
}{m: map[string]traceInfo{}}

// readTraceInfo reads the trace at path (trace.Import: this app's,
// Mooncake's or BurstGPT's), or says why it cannot be replayed.
func readTraceInfo(path string) traceInfo {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return traceInfo{err: fmt.Errorf("the trace %s does not exist", path)}
	case err != nil:
		return traceInfo{err: fmt.Errorf("the trace: %w", err)}
	case st.IsDir():
		return traceInfo{err: fmt.Errorf("the trace %s is a folder: choose a trace file (.jsonl, or BurstGPT's .csv)", path)}
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", path, st.Size(), st.ModTime().UnixNano())
	traceInfos.Lock()
	info, ok := traceInfos.m[key]
	traceInfos.Unlock()
	if ok {
		return info
	}
	info = importTraceInfo(path)
	traceInfos.Lock()
	if len(traceInfos.m) > 64 {
		clear(traceInfos.m)
	}
	traceInfos.m[key] = info
	traceInfos.Unlock()
	return info
}

func importTraceInfo(path string) traceInfo {
	f, err := os.Open(path)
	if err != nil {
		return traceInfo{err: fmt.Errorf("the trace: %w", err)}
	}
	defer f.Close()
	im, err := trace.Import(f, 0)
	if err != nil {
		return traceInfo{err: fmt.Errorf("the trace %s cannot be replayed: %w", filepath.Base(path), err)}
	}
	info := traceInfo{format: im.Format, requests: len(im.Requests)}
	if n := len(im.Requests); n > 1 {
		info.spanS = float64(im.Requests[n-1].Timestamp-im.Requests[0].Timestamp) / float64(time.Second/time.Millisecond)
	}
	return info
}

// keptReplay is the section's fields as kept for the next start: put
// back, it unfolds, so a trace is seen before Run.
func (f *replayFields) keptReplay() []keptField {
	fields := []keptField{keptEntry("trace_file", f.traceEntry), keptEntry("trace_speed", f.speedEntry),
		keptEntry("trace_from", f.fromEntry), keptEntry("trace_to", f.toEntry)}
	for i, k := range fields {
		set := k.set
		fields[i].set = func(v string) {
			set(v)
			f.section.Open(0)
		}
	}
	return fields
}

// replayTrace fills the rate plan's form with the trace at path (History's
// Replay…) and shows it; Run then replays it.
func (s *BenchmarkScreen) replayTrace(path string) error {
	if s.running != nil {
		return errors.New("a benchmark is running; replay the trace once it ends")
	}
	s.backToSetup()
	// The chosen plan replays it when it can (Compare settings: every
	// setting replays it); any other goes to the rate plan.
	f, ok := s.form().(traceFiller)
	if !ok {
		s.planSelect.SetSelected(plans.ByID(results.PlanRate).Title)
		f = s.rateFormOf()
	}
	f.fillTrace(path)
	s.revalidate()
	return nil
}

// traceFiller is a form with "Replay a trace" (replayFields).
type traceFiller interface{ fillTrace(path string) }
