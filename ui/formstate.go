package ui

import (
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// formSaveDelay is how long the form's state waits after a change before
// it is written: a word typed is one write, not one per letter.
const formSaveDelay = 500 * time.Millisecond

// formSaver keeps the Benchmark form's state on this machine
// (storage.FormStore): a moment after each change, off the UI goroutine,
// and at once when the window closes.
type formSaver struct {
	store  *storage.FormStore
	failed func(error) // told, on the UI goroutine, when a write fails

	mu      sync.Mutex
	last    storage.FormState  // the state last queued (or restored)
	pending *storage.FormState // queued and not written yet
	timer   *time.Timer
	closed  bool
	writing sync.Mutex // one write at a time, in the order queued
}

// queue writes st a moment from now, unless it is the state already kept.
func (f *formSaver) queue(st storage.FormState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || reflect.DeepEqual(st, f.last) {
		return
	}
	f.last, f.pending = st, &st
	if f.timer == nil {
		f.timer = time.AfterFunc(formSaveDelay, f.flush)
	}
}

// flush writes the state queued, if any, now.
func (f *formSaver) flush() {
	f.writing.Lock()
	defer f.writing.Unlock()
	f.mu.Lock()
	st := f.pending
	f.pending = nil
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	f.mu.Unlock()
	if st == nil {
		return
	}
	if err := f.store.Save(*st); err != nil && f.failed != nil {
		f.failed(err)
	}
}

// close writes what is queued and keeps nothing more: the window is gone.
// A nil saver (the demo's form, not kept) has nothing to write.
func (f *formSaver) close() {
	if f == nil {
		return
	}
	f.flush()
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

// restoreForm fills the form as it was when the app last ran (the
// endpoint, model and plan, the settings comparison's rows and rounds,
// the rate plan's own load), then keeps it as it changes.
func (s *BenchmarkScreen) restoreForm() {
	defer s.revalidate()
	if s.u.opts.Demo {
		return // the demo runs the default plan on the simulator, and leaves the person's form as it was
	}
	store := storage.OpenFormState(s.u.opts.Dirs.Config)
	st, err := store.Load()
	if err != nil {
		s.failNote = "The form's last state could not be read, so it starts afresh: " + err.Error() + "."
	} else {
		if k := plans.ByID(st.Plan); k != nil {
			s.planSelect.SetSelected(k.Title)
		}
		if st.Tune != nil {
			s.tune.restore(*st.Tune)
		}
		if st.Rate != nil {
			s.rateFormOf().restore(*st.Rate)
		}
		if st.Endpoint != "" && slices.Contains(s.endpointSelect.Options, st.Endpoint) {
			s.endpointSelect.SetSelected(st.Endpoint)
			s.restoreModel(st.Model)
		}
	}
	s.saver = &formSaver{store: store, last: st, failed: func(err error) {
		s.u.do(func() {
			s.failNote = "The form could not be kept for the next start: " + err.Error() + "."
			s.sayPlan(s.failNote, true)
		})
	}}
}

// restoreModel chooses model once the endpoint's listing has it: now,
// when it is listed already, or when the listing in flight arrives
// (pickModel prefers models.keep).
func (s *BenchmarkScreen) restoreModel(model string) {
	if model == "" {
		return
	}
	s.models.keep = model
	if s.models.listed && slices.Contains(s.modelSelect.Options, model) {
		s.modelSelect.SetSelected(model)
	}
}

// formState is the form as it stands. While the endpoint's models are not
// listed (a server down at the start), the model kept for it stays.
func (s *BenchmarkScreen) formState() storage.FormState {
	st := storage.FormState{Endpoint: s.endpointSelect.Selected, Model: s.chosenModel(), Plan: s.kind().ID, Tune: s.tune.state(), Rate: s.rateFormOf().state()}
	if st.Model == "" && (!s.models.listed || s.models.err != nil) {
		s.saver.mu.Lock()
		if last := s.saver.last; last.Endpoint == st.Endpoint {
			st.Model = last.Model
		}
		s.saver.mu.Unlock()
	}
	return st
}

// keepForm queues the form's state to be written (revalidate calls it on
// every change); nothing before the form is restored.
func (s *BenchmarkScreen) keepForm() {
	if s.saver != nil {
		s.saver.queue(s.formState())
	}
}
