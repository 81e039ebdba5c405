package ui

import (
	"reflect"
	"slices"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// formSaveDelay is how long the form's state waits after a change before
// it is written: a word typed is one write, not one per letter.
const formSaveDelay = 500 * time.Millisecond

// formSaver keeps the Benchmark form's state on this machine
// (storage.FormStore): a moment after each change, off the UI goroutine,
// and the form as it stands at once when the window closes.
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

// close writes st, the form as the window leaves it, and keeps nothing
// more: the window is gone.
func (f *formSaver) close(st storage.FormState) {
	f.queue(st)
	f.flush()
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}

// keptField is one field of a plan's form as kept for the next start
// (storage.PlanFormState): its key there, its widget (w: the test that
// every field of every form is kept finds the widgets), how it reads as
// typed and how it is put back. set is given only what get gave: an empty
// or absent field keeps the form's default.
type keptField struct {
	key string
	w   fyne.CanvasObject
	get func() string
	set func(string)
}

// The words a box kept says ticked or not.
const (
	keptYes = "yes"
	keptNo  = "no"
)

// keptEntry is a text field, kept as typed.
func keptEntry(key string, e *formEntry) keptField {
	return keptField{key: key, w: e, get: func() string { return e.Text }, set: e.SetText}
}

// keptCheck is a box, kept as ticked ("yes") or not ("no").
func keptCheck(key string, c *widget.Check) keptField {
	return keptField{key: key, w: c,
		get: func() string {
			if c.Checked {
				return keptYes
			}
			return keptNo
		},
		set: func(v string) { c.SetChecked(v == keptYes) },
	}
}

// keptSelect is a list, kept as the words chosen; a choice the list no
// longer offers keeps the list's own.
func keptSelect(key string, sel *widget.Select) keptField {
	return keptField{key: key, w: sel, get: func() string { return sel.Selected }, set: func(v string) {
		if slices.Contains(sel.Options, v) {
			sel.SetSelected(v)
		}
	}}
}

// fieldsState is a form's fields as typed, leaving out each one that
// reads as in defaults (nil: none) and each empty one: both are the
// form's default.
func fieldsState(fields []keptField, defaults storage.PlanFormState) storage.PlanFormState {
	st := storage.PlanFormState{}
	for _, k := range fields {
		if v := k.get(); v != "" && v != defaults[k.key] {
			st[k.key] = v
		}
	}
	return st
}

// restoreFields puts a form's fields back, in the form's order (a choice
// that fills others first); a field not kept keeps its default.
func restoreFields(fields []keptField, st storage.PlanFormState) {
	for _, k := range fields {
		if v := st[k.key]; v != "" {
			k.set(v)
		}
	}
}

// restoreForm fills the form as it was when the app last ran — every
// plan's form, the settings comparison's rows, then the plan, endpoint
// and model (each plan's fields first: choosing the settings comparison
// on an endpoint of the person's own turns its demo rows into empty
// command rows, ownRows) — and keeps it as it changes from then on. The
// demo too: its run is the default plan on the simulator beside the form
// (runDemo), and what the person types in a demo's session is kept as in
// any other.
func (s *BenchmarkScreen) restoreForm() {
	defer s.revalidate()
	s.defaults = map[string]storage.PlanFormState{}
	for _, k := range plans.All {
		s.defaults[k.ID] = fieldsState(s.forms[k.ID].kept(), nil)
	}
	store := storage.OpenFormState(s.u.opts.Dirs.Config)
	st, err := store.Load()
	if err != nil {
		s.failNote = "The form's last state could not be read, so it starts afresh: " + err.Error() + "."
	} else {
		if st.Tune != nil {
			s.tune.restoreRows(*st.Tune)
		}
		for _, k := range plans.All {
			restoreFields(s.forms[k.ID].kept(), st.Forms[k.ID])
		}
		if k := plans.ByID(st.Plan); k != nil {
			s.planSelect.SetSelected(k.Title)
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

// formState is the form as it stands: every plan's form, not only the
// one chosen, each field the person changed from the form's default (a
// default they never touched stays the app's, should a later one change
// it). While the endpoint's models are not listed (a server down at the
// start), the model kept for it stays.
func (s *BenchmarkScreen) formState() storage.FormState {
	st := storage.FormState{Endpoint: s.endpointSelect.Selected, Model: s.chosenModel(), Plan: s.kind().ID,
		Forms: map[string]storage.PlanFormState{}, Tune: s.tune.rowsState()}
	for _, k := range plans.All {
		if f := fieldsState(s.forms[k.ID].kept(), s.defaults[k.ID]); len(f) > 0 {
			st.Forms[k.ID] = f
		}
	}
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

// closeForm writes the form as it stands now, as the window closes: what
// the last change queued may not be all of it.
func (s *BenchmarkScreen) closeForm() {
	if s.saver != nil {
		s.saver.close(s.formState())
	}
}
