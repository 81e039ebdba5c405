package ui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// runState is one benchmark in flight.
type runState struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// planRun runs one plan against an endpoint and returns what to do on the
// UI goroutine afterwards (show the result, or say why there is none).
type planRun func(ctx context.Context, ep setup.Endpoint, obs engine.Observer) func()

// onRun starts the chosen plan on the chosen endpoint.
func (s *BenchmarkScreen) onRun() {
	name := s.endpointSelect.Selected
	var ep setup.Endpoint
	var saved storage.SavedEndpoint
	simulated := name == SimulatorName
	if !simulated {
		var ok bool
		var err error
		saved, ok, err = s.u.endpoints.Get(name)
		if err != nil || !ok {
			s.refuse(fmt.Sprintf("The endpoint %q cannot be found: %v", name, err))
			return
		}
		ep = saved.WithKey("") // the key is read from the keyring off the UI goroutine
		ep.KeyHint = appKeyHint
		ep.ModelHint = appModelHint
	}
	run, err := s.form().run(s.chosenModel(), simulated)
	if err != nil {
		s.refuse(err.Error())
		return
	}
	s.u.fyne.Preferences().SetString(prefLastEndpoint, name)
	s.rememberModel(name)
	// The built-in simulator is each plan's demo one, as in the CLI's
	// demo: a capacity to find, drafts to accept.
	cfg := s.kind().Demo()
	var weights []float64
	if f, ok := s.form().(interface{ stageWeights(slots int) []float64 }); ok {
		weights = f.stageWeights(s.u.slotsOf(name, s.chosenModel(), cfg))
	}
	s.start(saved, simulated, cfg, ep, s.chosenModel(), run, weights)
	if note := s.kind().Streamless; note != "" {
		s.live.streamlessRun(note)
	}
}

// slotsOf is how many requests the endpoint called name serves at once,
// 0 when that is not known: the simulator's batch, else what the
// endpoint's last check found (engine.EstimateSlots).
func (u *App) slotsOf(name, model string, cfg sim.Config) int {
	if name == SimulatorName {
		return cfg.BatchCapacity
	}
	return engine.EstimateSlots(u.checkedDetection(name, model))
}

// runDemo is the demo (kovara-desktop --demo, make run): the Kovara
// method's default plan on the built-in simulator, run beside the form
// rather than from it, so the form stays the person's, restored and kept
// as at any start. (When the demo set the form to the simulator and the
// default plan, it could keep nothing of it: what a person typed in a
// demo's session was lost however the app closed, #47.)
func (s *BenchmarkScreen) runDemo() {
	p := setup.DefaultPlan()
	p.Model, p.Simulated = sim.Demo().Models[0], true
	cfg := plans.KovaraMethod.Demo()
	s.start(storage.SavedEndpoint{}, true, cfg, setup.Endpoint{}, p.Model, s.kovara.runs(p, 1, nil, ""), engine.LevelWaves(p, cfg.BatchCapacity))
}

// shows keeps a plan's result in the history (off the UI goroutine, as a
// planRun runs) and returns what shows it.
func (s *BenchmarkScreen) shows(d plans.Doc) func() {
	id, saveErr := s.u.lib.SaveDoc("", d)
	return func() { s.showView(s.u.resultView(d, id, saveErr, s.backToSetup).content) }
}

// showView shows a plan's result view and tells whoever waits for one.
func (s *BenchmarkScreen) showView(o fyne.CanvasObject) {
	s.show(o)
	s.shownResult = true
	if s.u.opts.OnResult != nil {
		s.u.opts.OnResult()
	}
}

// start runs a plan in the background, with the live view showing it;
// weights, when given, are how long its stages take against each other
// (engine.Live.ExpectStages), for the whole plan's bar and time left.
func (s *BenchmarkScreen) start(saved storage.SavedEndpoint, simulated bool, simCfg sim.Config, ep setup.Endpoint, model string, run planRun, weights []float64) {
	name := saved.Name
	if simulated {
		name = SimulatorName
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &runState{cancel: cancel, done: make(chan struct{})}
	s.running = st
	s.shownResult = false
	s.live = newLiveView("Benchmarking "+name, func() { s.confirmStop(st) })
	s.live.saveChart, s.live.model, s.live.simulated = s.u.saveChart, model, simulated
	s.show(s.live.content)
	live := engine.NewLive()
	live.ExpectStages(weights)
	palette := PaletteFor(s.u.fyne.Settings().Theme(), s.u.fyne.Settings().ThemeVariant())

	var tickerWG sync.WaitGroup
	tickerStop := make(chan struct{})
	tickerWG.Add(1)
	go func() {
		// The redraw loop: read the engine's counters at a fixed pace and
		// hand one batch of changes to the UI goroutine.
		defer tickerWG.Done()
		t := time.NewTicker(liveRefresh)
		defer t.Stop()
		var d liveData
		for {
			select {
			case <-tickerStop:
				return
			case <-t.C:
				d.add(live.Snapshot())
				snap := d.clone()
				s.u.do(func() { s.live.update(&snap, palette) })
			}
		}
	}()

	go func() {
		defer close(st.done)
		var stopSim func()
		if simulated {
			srv, url, err := sim.Start(simCfg, "127.0.0.1:0")
			if err != nil {
				close(tickerStop)
				s.u.do(func() { s.runFailed(fmt.Errorf("the built-in simulator could not start: %w", err)) })
				return
			}
			stopSim = func() { srv.Close() }
			ep = setup.Endpoint{Name: SimulatorName, URL: url}
		} else {
			key, kerr := saved.Key(s.u.keys)
			if kerr != nil && !errors.Is(kerr, storage.ErrNoKey) {
				problem := storage.KeyringReadProblem(kerr) + " " + appTypeKey
				s.u.do(func() { s.live.lastError.SetText(problem) })
			}
			ep.APIKey = key
			if saved.NeedsWallToken() {
				// Without it the plug refuses, and the run says so.
				ep.WallToken, _ = saved.WallToken(s.u.keys)
			}
		}
		show := run(ctx, ep, engine.Observer{Live: live})
		if stopSim != nil {
			stopSim()
		}
		close(tickerStop)
		tickerWG.Wait()
		s.u.do(func() {
			s.running = nil
			if s.live.stopConfirm != nil {
				s.live.stopConfirm.Hide()
			}
			show()
			s.u.historyScreen.reload()
		})
	}()
}

// confirmStop asks before stopping: the level in progress is cut short.
func (s *BenchmarkScreen) confirmStop(st *runState) {
	d := dialog.NewConfirm("Stop the benchmark?", capitalize(s.kind().Stopped())+".",
		func(ok bool) {
			if ok {
				s.stopRun(st)
			}
		}, s.u.win)
	d.SetConfirmText("Stop")
	d.SetDismissText("Keep running")
	s.live.stopConfirm = d
	d.Show()
}

// stopRun stops the run in flight: the engine closes its requests, keeps
// the finished levels and the level in progress as partial, and the plan's
// own code saves what it has.
func (s *BenchmarkScreen) stopRun(st *runState) {
	s.live.stopButton.Disable()
	s.live.phase.SetText("Stopping…")
	st.cancel()
}

// runFailed returns to the form with the reason in words.
func (s *BenchmarkScreen) runFailed(err error) {
	s.backToSetup()
	var gone *engine.ServerGoneError
	if errors.As(err, &gone) {
		s.refuse("Nothing was saved: " + gone.Why + ".")
		return
	}
	if errors.Is(err, engine.ErrInterrupted) {
		s.refuse("Stopped before any level finished; nothing was saved.")
		return
	}
	s.refuse("The benchmark could not run: " + err.Error())
}

// refuse says under the plan why it did not run; the sentence stays until
// the person changes the form (revalidate).
func (s *BenchmarkScreen) refuse(why string) {
	s.failNote = why
	s.sayPlan(why, true)
}
