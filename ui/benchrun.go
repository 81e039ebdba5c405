package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
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
type planRun func(ctx context.Context, ep engine.Endpoint, obs engine.Observer) func()

// onRun starts the chosen plan on the chosen endpoint.
func (s *BenchmarkScreen) onRun() {
	name := s.endpointSelect.Selected
	var ep engine.Endpoint
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
	var run planRun
	switch s.planSelect.Selected {
	case planStages:
		plan, err := s.stagesFromForm()
		if err != nil {
			s.refuse(err.Error())
			return
		}
		plan.Model = s.chosenModel()
		plan.Simulated = simulated
		run = s.runStages(plan)
	case planSpecDec:
		plan, err := s.specDecFromForm()
		if err != nil {
			s.refuse(err.Error())
			return
		}
		plan.Model = s.chosenModel()
		plan.Simulated = simulated
		run = s.runSpecDec(plan)
	case planContext:
		plan, err := s.contextFromForm()
		if err != nil {
			s.refuse(err.Error())
			return
		}
		plan.Model = s.chosenModel()
		plan.Simulated = simulated
		run = s.runContext(plan)
	case planCapacity:
		plan, err := s.capacityFromForm()
		if err != nil {
			s.refuse(err.Error())
			return
		}
		plan.Model = s.chosenModel()
		plan.Simulated = simulated
		run = s.runCapacity(plan)
	default:
		plan, err := s.planFromForm()
		if err != nil {
			s.refuse(err.Error())
			return
		}
		plan.Model = s.chosenModel()
		plan.Simulated = simulated
		repeat, _ := parseRepeat(s.repeatEntry.Text) // revalidate let Run on only when it reads
		run = s.runKovara(plan, max(repeat, 1), s.likeFollowed())
	}
	s.u.fyne.Preferences().SetString(prefLastEndpoint, name)
	s.rememberModel(name)
	// The built-in simulator is each plan's demo one, as in the CLI's
	// demo: a capacity to find, drafts to accept.
	s.start(saved, simulated, plans.ByTitle(s.planSelect.Selected).Demo(), ep, run)
}

// runKovara is the Kovara method, saved after every level: repeat times
// in a row (one group, fresh prompts each), each run recording the run
// it follows when like is given. One run shows its result; several, or
// a run again like another, open Compare on them.
func (s *BenchmarkScreen) runKovara(plan engine.Plan, repeat int, like *results.LikeRef) planRun {
	return func(ctx context.Context, ep engine.Endpoint, obs engine.Observer) func() {
		var (
			f            *results.File
			err, saveErr error
			id           string
			ids          []string
		)
		for _, g := range engine.RepeatGroup(repeat, time.Now()) {
			if g != nil {
				s.u.do(func() {
					base, _, _ := strings.Cut(s.live.title.Text, " — ")
					s.live.title.SetText(fmt.Sprintf("%s — run %d of %d", base, g.Index, g.Of))
				})
			}
			mark := func(f *results.File) { f.Local.Group, f.Local.Like = g, like }
			cp := s.u.lib.Checkpoint()
			saveErr = nil
			obs.Checkpoint = func(f *results.File) { mark(f); saveErr = cp.Save(f) }
			if s.u.opts.Observe != nil {
				s.u.opts.Observe(&obs)
			}
			f, err = engine.Run(ctx, plan, ep, obs)
			id = ""
			if f != nil {
				mark(f)
				if saveErr = cp.Save(f); saveErr == nil {
					id = cp.ID() // else the result shown is not the one in the history
					ids = append(ids, id)
				}
			}
			if f == nil || err != nil || ctx.Err() != nil {
				break
			}
		}
		return func() {
			s.u.rememberCheck(ep, requestedModel(f, plan.Model), detectionOf(f), err)
			if f == nil {
				s.runFailed(err)
				return
			}
			s.showResult(f, id, err, saveErr)
			if like != nil && like.ID != "" && len(ids) > 0 {
				ids = append([]string{like.ID}, ids...)
			}
			if len(ids) >= 2 {
				s.u.compareRuns(ids[:min(len(ids), maxCompare)])
			}
		}
	}
}

// runStages is the three-stage plan.
func (s *BenchmarkScreen) runStages(plan engine.StagesPlan) planRun {
	return func(ctx context.Context, ep engine.Endpoint, obs engine.Observer) func() {
		r, err := engine.RunStages(ctx, plan, ep, obs)
		if r == nil {
			return func() { s.runFailed(err) }
		}
		id, saveErr := s.u.lib.SaveDoc("", plans.Stages{Result: r})
		return func() { s.showView(newStagesView(s.u, r, id, saveErr, s.backToSetup).content) }
	}
}

// runSpecDec is the speculative-decoding mode.
func (s *BenchmarkScreen) runSpecDec(plan engine.SpecDecPlan) planRun {
	return func(ctx context.Context, ep engine.Endpoint, obs engine.Observer) func() {
		r, err := engine.RunSpecDec(ctx, plan, ep, obs)
		if r == nil {
			return func() { s.runFailed(err) }
		}
		id, saveErr := s.u.lib.SaveDoc("", plans.SpecDec{Result: r})
		return func() { s.showView(newSpecDecView(s.u, r, id, saveErr, s.backToSetup).content) }
	}
}

// runCapacity is the capacity plan.
func (s *BenchmarkScreen) runCapacity(plan engine.CapacityPlan) planRun {
	return func(ctx context.Context, ep engine.Endpoint, obs engine.Observer) func() {
		r, err := engine.RunCapacity(ctx, plan, ep, obs)
		if r == nil {
			return func() { s.u.rememberCheck(ep, plan.Model, nil, err); s.runFailed(err) }
		}
		id, saveErr := s.u.lib.SaveDoc("", plans.Capacity{Result: r})
		return func() {
			s.u.rememberCheck(ep, r.Model, r.Local.Detection, err)
			s.showView(newCapacityView(s.u, r, id, saveErr, s.backToSetup).content)
		}
	}
}

// runContext is the context plan.
func (s *BenchmarkScreen) runContext(plan engine.ContextPlan) planRun {
	return func(ctx context.Context, ep engine.Endpoint, obs engine.Observer) func() {
		r, err := engine.RunContext(ctx, plan, ep, obs)
		if r == nil {
			return func() { s.u.rememberCheck(ep, plan.Model, nil, err); s.runFailed(err) }
		}
		id, saveErr := s.u.lib.SaveDoc("", plans.Context{Result: r})
		return func() {
			s.u.rememberCheck(ep, r.Model, &r.Engine, err)
			s.showView(newContextView(s.u, r, id, saveErr, s.backToSetup).content)
		}
	}
}

// showView shows a plan's result view and tells whoever waits for one.
func (s *BenchmarkScreen) showView(o fyne.CanvasObject) {
	s.show(o)
	s.shownResult = true
	if s.u.opts.OnResult != nil {
		s.u.opts.OnResult()
	}
}

// start runs a plan in the background, with the live view showing it.
func (s *BenchmarkScreen) start(saved storage.SavedEndpoint, simulated bool, simCfg sim.Config, ep engine.Endpoint, run planRun) {
	name := saved.Name
	if simulated {
		name = SimulatorName
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &runState{cancel: cancel, done: make(chan struct{})}
	s.running = st
	s.shownResult = false
	s.live = newLiveView("Benchmarking "+name, func() { s.confirmStop(st) })
	s.show(s.live.content)
	live := engine.NewLive()
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
			ep = engine.Endpoint{Name: SimulatorName, URL: url}
		} else {
			key, kerr := saved.Key(s.u.keys)
			if kerr != nil && !errors.Is(kerr, storage.ErrNoKey) {
				problem := storage.KeyringReadProblem(kerr) + " " + appTypeKey
				s.u.do(func() { s.live.lastError.SetText(problem) })
			}
			ep.APIKey = key
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
	d := dialog.NewConfirm("Stop the benchmark?",
		"Finished levels are kept in the history; the level in progress is kept as a partial measurement.",
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
	s.planNote.SetText(why)
}
