package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/storage"
)

// prefModelPrefix keys the model last benchmarked on each endpoint: a
// server that serves several (Ollama keeps every pulled model listed)
// offers it first next time.
const prefModelPrefix = "benchmark.model."

// appModelHint is where the app takes the model when a server serves
// several (setup.Endpoint.ModelHint).
const appModelHint = "in the Benchmark form's Model field"

// Placeholders of the Model field while it has nothing chosen.
const (
	modelsListing  = "listing the server's models…"
	modelsUnlisted = "the server's models could not be listed"
)

// modelState is what the Model field knows about the endpoint chosen.
type modelState struct {
	endpoint string // the endpoint the listing below is of
	keep     string // the model chosen before a listing of the same endpoint again
	listed   bool   // the listing finished, well or not
	err      error  // why it failed
	gen      int    // bumped by each new listing; an older one's answer is dropped
	cancel   context.CancelFunc
	wg       sync.WaitGroup // the listings in flight
}

// onEndpoint lists the models of the endpoint now chosen.
func (s *BenchmarkScreen) onEndpoint(name string) {
	s.listModels(name)
	s.revalidate()
}

// listModels fills the Model field with the models the endpoint called
// name serves: the built-in simulator's at once, a saved endpoint's from
// its /v1/models in the background (the key is read off the UI goroutine
// too). A listing still in flight for another endpoint is cancelled.
func (s *BenchmarkScreen) listModels(name string) {
	st := &s.models
	s.stopListing()
	st.keep = ""
	if st.endpoint == name {
		st.keep = s.modelSelect.Selected // the endpoint was saved again: keep the choice
	}
	st.endpoint, st.listed, st.err = name, false, nil
	s.modelSelect.Options = nil
	s.modelSelect.ClearSelected()
	if name == "" {
		s.modelSelect.PlaceHolder = ""
		s.modelSelect.Refresh()
		return
	}
	if name == SimulatorName {
		// The built-in simulator is the chosen plan's demo one (the
		// run starts that: benchrun.go), so its models are that demo's:
		// the answers plan's two quantisations, not the Kovara demo's
		// one model, which the run would be refused.
		s.setModels(s.kind().Demo().Models, nil)
		return
	}
	saved, ok, err := s.u.endpoints.Get(name)
	if err != nil || !ok {
		s.setModels(nil, fmt.Errorf("the endpoint %q cannot be found: %v", name, err))
		return
	}
	s.modelSelect.PlaceHolder = modelsListing
	s.modelSelect.Refresh()
	ctx, cancel := context.WithCancel(context.Background())
	st.cancel = cancel
	gen := st.gen
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		defer cancel()
		ep := saved.WithKey("")
		key, kerr := saved.Key(s.u.keys)
		if kerr != nil && !errors.Is(kerr, storage.ErrNoKey) {
			// Listed without a key: the run says what the keyring did.
			key = ""
		}
		ep.APIKey = key
		ids, err := engine.ServedModels(ctx, ep)
		s.u.do(func() { s.modelsListed(gen, ids, err) })
	}()
}

// modelsListed takes in the listing of generation gen, unless another
// endpoint was chosen since. It is the app's own update, not the
// person's: a run's failure note stays under the plan.
func (s *BenchmarkScreen) modelsListed(gen int, ids []string, err error) {
	if s.models.gen != gen {
		return
	}
	s.models.cancel = nil
	s.listing = true
	defer func() { s.listing = false }()
	s.setModels(ids, err)
	s.revalidate()
}

// stopListing cancels the listing in flight, if any; its answer, should
// one still come, is dropped.
func (s *BenchmarkScreen) stopListing() {
	st := &s.models
	if st.cancel != nil {
		st.cancel()
		st.cancel = nil
	}
	st.gen++
}

// setModels shows a finished listing and chooses a model: the one chosen
// before the endpoint was listed again, else the manifest's, else the one
// last benchmarked on this endpoint, else the only one served; with
// several and none of those, the user chooses.
func (s *BenchmarkScreen) setModels(ids []string, err error) {
	st := &s.models
	st.listed, st.err = true, err
	s.modelSelect.Options = ids
	switch {
	case err != nil:
		s.modelSelect.PlaceHolder = modelsUnlisted
	case len(ids) > 1:
		s.modelSelect.PlaceHolder = fmt.Sprintf("choose one of the %d models served", len(ids))
	default:
		s.modelSelect.PlaceHolder = ""
	}
	s.modelSelect.Refresh()
	s.pickModel()
}

// pickModel chooses the model the form starts from (setModels says which).
func (s *BenchmarkScreen) pickModel() {
	ids := s.modelSelect.Options
	want := []string{s.models.keep, "", s.u.fyne.Preferences().String(prefModelPrefix + s.models.endpoint)}
	switch {
	case s.kovara.manifest != nil:
		want[1] = s.kovara.manifest.Model.ID
	case s.kovara.like != nil:
		want[1] = s.kovara.likePlan.Model // run again like a run: its model, where served
	}
	for _, w := range want {
		if w != "" && slices.Contains(ids, w) {
			s.modelSelect.SetSelected(w)
			return
		}
	}
	if len(ids) == 1 {
		s.modelSelect.SetSelected(ids[0])
	}
}

// chosenModel is the model a run asks for: the one chosen, or "" (the
// engine then takes the only one served, or says the list).
func (s *BenchmarkScreen) chosenModel() string { return s.modelSelect.Selected }

// modelProblem says why the form cannot run for want of a model, or nil.
func (s *BenchmarkScreen) modelProblem() error {
	st := &s.models
	if !st.listed || st.err != nil || s.modelSelect.Selected != "" || len(s.modelSelect.Options) < 2 {
		return nil
	}
	return fmt.Errorf("choose the model to benchmark: %s serves %d models", st.endpoint, len(s.modelSelect.Options))
}

// modelNote is a line under the plan's summary when the listing failed:
// the run may still work (and says why if not).
func (s *BenchmarkScreen) modelNote() string {
	if st := &s.models; st.listed && st.err != nil {
		why := st.err.Error()
		if !strings.HasSuffix(why, "?") && !strings.HasSuffix(why, ".") {
			why += "." // a reason that asks a question ends with its question mark
		}
		return "\nThe models could not be listed: " + why
	}
	return ""
}

// rememberModel keeps the model a run on the endpoint asked for.
func (s *BenchmarkScreen) rememberModel(endpoint string) {
	if m := s.chosenModel(); m != "" {
		s.u.fyne.Preferences().SetString(prefModelPrefix+endpoint, m)
	}
}
