package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/internal/serverproc"
	"github.com/kovara/desktop/internal/shellwords"
)

// The settings comparison (docs/plans.md, "Compare settings"): the same
// Kovara plan run on each of two to eight settings of one server, in
// interleaved rounds, with the server started and stopped by the app for
// each turn of a setting that has a command; the verdict is each
// setting's paired change against the first (engine/compare/tune.go), and
// each setting's answers to fixed prompts are compared too.

// TuneAnswerTokens caps each answer of the outputs check.
const TuneAnswerTokens = 128

const tuneBeforeTimeout = 2 * time.Minute

// TuneStatus is what a settings comparison is doing, for the live view.
type TuneStatus struct {
	Round, Rounds int
	Setting       string
	// Doing is what happens now, in words: "starting the server",
	// "measuring", "checking the answers", "waiting for you".
	Doing string
	Since time.Time
	// Instruction is what to change by hand, while waiting for you.
	Instruction string
	// Server is the server the comparison started, while it runs (its
	// log for the live view); nil otherwise.
	Server *serverproc.Server
}

// TuneObserver hears a settings comparison.
type TuneObserver struct {
	// Observer is handed to every run: its Live shows the run measuring.
	Observer
	// Status is called as the comparison moves on (a few times a turn).
	Status func(TuneStatus)
	// Saved gets every run as it ends, and returns its id in the library
	// ("" when it was not saved); SavedReplay every replay of a trace,
	// where the comparison replays one (TunePlan.Replay).
	Saved       func(*results.File) string
	SavedReplay func(*results.RateResult) string
	// Pause asks the person to put the server into a setting by hand and
	// returns once they say it is done (or ctx ends). Nil refuses
	// settings changed by hand.
	Pause func(ctx context.Context, s setup.TuneSetting) error
}

func (o TuneObserver) status(st TuneStatus) {
	if o.Status != nil {
		st.Since = time.Now()
		o.Status(st)
	}
}

// tuneRun is one comparison as it runs.
type tuneRun struct {
	plan    setup.TunePlan
	ep      setup.Endpoint
	obs     TuneObserver
	res     *results.TuneResult
	ref     string
	answers [][][]string // the outputs check's, per setting, prompt and piece
	// hw is, for each of compare.HardwareStates, each setting's runs'
	// state in words ("… (round 2)"), where its telemetry said.
	hw []map[int][]string
	// The answers' distributions (docs/method.md §14): the first
	// setting's reference, made in its turn, and each other setting's
	// figures against it, read in that setting's turn; driftWhy says why
	// they are not measured ("" while they may be).
	driftRef *AnswersReference
	drifts   []*results.TuneDrift
	driftWhy string
	// started is the model each command setting's server is asked for,
	// by setting name (startedModel).
	started map[string]string
	t0      time.Time
	// listens is where each setting's server listens (ListenOf): its
	// start is waited for and its runs go there.
	listens []TuneListen
}

// RunTune runs a settings comparison. A setting that cannot be reached
// (its server does not start) is failed with the reason and the others
// go on; request failures are data in each run. It returns the result
// with an error only for an unusable plan, or with what was measured for
// a stop (wrapping ErrInterrupted).
func RunTune(ctx context.Context, plan setup.TunePlan, ep setup.Endpoint, obs TuneObserver) (*results.TuneResult, error) {
	if err := plan.Validate(); err != nil {
		return nil, &PlanError{Err: err}
	}
	if plan.Rounds == 0 {
		plan.Rounds = setup.TuneDefaultRounds
	}
	for _, s := range plan.Settings {
		if s.How == setup.ByHand && obs.Pause == nil {
			return nil, &PlanError{Err: fmt.Errorf("setting %q is changed by hand, and nothing here can ask you to", s.Name)}
		}
	}
	t := &tuneRun{plan: plan, ep: ep, obs: obs, ref: newRef(), t0: time.Now(), answers: make([][][]string, len(plan.Settings)), drifts: make([]*results.TuneDrift, len(plan.Settings)), started: map[string]string{}, hw: make([]map[int][]string, len(compare.HardwareStates)), listens: TuneListens(plan.Settings, ep.URL)}
	t.res = t.newResult()
	for r := range plan.Rounds {
		for pos, s := range compare.TuneOrder(len(plan.Settings), r) {
			if t.res.Settings[s].Failed != "" {
				continue
			}
			t.turn(ctx, r+1, pos+1, s)
			if ctx.Err() != nil {
				return t.finish(false), fmt.Errorf("round %d of %d, %s: %w", r+1, plan.Rounds, plan.Settings[s].Name, ErrInterrupted)
			}
		}
	}
	return t.finish(true), nil
}

func (t *tuneRun) newResult() *results.TuneResult {
	p := t.plan
	r := &results.TuneResult{
		PlanHeader: results.TuneDoc.Header(t.t0, ""),
		Plan: results.TunePlan{
			Rounds: p.Rounds, Concurrency: slices.Clone(p.Inner.Concurrency), Requests: p.Inner.Requests,
			InputTokens: p.Inner.InputTokens, OutputTokens: p.Inner.OutputTokens,
			Confidence: compare.Confidence, Metrics: compare.TuneMetricList(), LeastChange: compare.TuneLeastChange,
		},
		Runs: []results.TuneRun{}, Verdicts: []results.TuneVerdict{}, Answers: []results.TuneAnswers{}, Warnings: []string{},
	}
	if !p.NoAnswers {
		r.Plan.AnswerPrompts, r.Plan.AnswerTokens = SpecDecPromptSet, TuneAnswerTokens
	}
	if p.Replay != nil && p.Replay.Replay != nil {
		// The trace's own load is the one level; how many requests it
		// held is known once it is read (the first turn's replay).
		rp := p.Replay.Replay
		r.Plan.Concurrency, r.Plan.Requests, r.Plan.InputTokens, r.Plan.OutputTokens = []int{results.TuneReplayLevel}, 0, 0, 0
		r.Plan.Replay = &results.TuneReplay{Speed: rp.SpeedOr1(), From: rp.From, To: rp.To}
		r.Local.TraceFile = rp.File
	}
	if base, err := setup.ParseBase(t.ep.URL); err == nil {
		r.Local.Endpoint, r.Local.EndpointHost = base.Root, base.Host
	}
	r.Local.EndpointName = t.ep.Name
	r.Local.Simulated = p.Inner.Simulated
	r.Local.StartedAt = r.CreatedAt
	for _, s := range p.Settings {
		r.Settings = append(r.Settings, results.TuneSetting{Name: s.Name, How: s.How, Model: t.modelOf(s)})
		r.Local.Commands = append(r.Local.Commands, results.TuneCommand{Command: s.Command, Env: s.Env, SSH: s.SSH, Before: s.Before, Instruction: s.Instruction})
	}
	r.Model = r.Settings[0].Model
	return r
}

// epOf is the endpoint setting si's runs go to: the endpoint, at the
// address its command listens on (ListenOf).
func (t *tuneRun) epOf(si int) setup.Endpoint {
	ep := t.ep
	ep.URL = t.listens[si].URL
	return ep
}

func (t *tuneRun) modelOf(s setup.TuneSetting) string {
	if s.Model != "" {
		return s.Model
	}
	if m := t.started[s.Name]; m != "" {
		return m
	}
	return t.plan.Inner.Model
}

// startedModel is the model a setting's started server is asked for:
// the plan's where it serves it, else the only one it serves. Two
// llama-servers of two model files, without --alias, each name their
// model by its own -m path, so the plan's model (chosen from the
// endpoint's server, or the first setting's) is never the other's: the
// app's Compare settings of Q4_0 against F32 failed both settings with
// "the server does not serve …".
func (t *tuneRun) startedModel(ctx context.Context, si int) string {
	want := t.plan.Inner.Model
	ep := t.epOf(si)
	b, err := setup.ParseBase(ep.URL)
	if err != nil {
		return want
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout(ep))
	defer cancel()
	models, _, err := listModels(cctx, checkClient(ep, b), ep, b)
	if err != nil {
		return want
	}
	for _, m := range models {
		if m.ID == want {
			return want
		}
	}
	if len(models) == 1 {
		return models[0].ID
	}
	return want
}

// turn is one setting's run in one round: the server brought into the
// setting, the run measured (and, the first time, the answers taken),
// the server stopped again.
func (t *tuneRun) turn(ctx context.Context, round, pos, si int) {
	s := t.plan.Settings[si]
	st := TuneStatus{Round: round, Rounds: t.plan.Rounds, Setting: s.Name}
	set := &t.res.Settings[si]
	fail := func(why string, log []string) {
		set.Failed = why
		if len(log) > 0 {
			if t.res.Local.Logs == nil {
				t.res.Local.Logs = map[string][]string{}
			}
			t.res.Local.Logs[s.Name] = log
		}
		t.obs.logf("%s could not be measured: %s", s.Name, why)
	}
	if s.Before != "" {
		st.Doing = "running its command before the turn"
		t.obs.status(st)
		if err := serverproc.RunOnce(ctx, serverproc.Spec{Command: s.Before, Env: s.Env, SSH: s.SSH}, tuneBeforeTimeout); err != nil {
			if ctx.Err() == nil {
				fail("its command before the turn: "+err.Error(), nil)
			}
			return
		}
	}
	var srv *serverproc.Server
	var placed *results.Placement // where a started server put the model, from its log
	switch s.How {
	case setup.ByCommand:
		st.Doing = "starting the server"
		t.obs.status(st)
		var err error
		srv, err = serverproc.Start(ctx, serverproc.Spec{Command: s.Command, Env: s.Env, SSH: s.SSH}, serverproc.Options{URL: t.listens[si].URL, StartTimeout: t.plan.StartTimeout})
		var se *serverproc.StartError
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return
		case errors.As(err, &se):
			// Why, with the server's last line; its last lines are kept
			// for the result's notes.
			why := se.Why
			if last := se.Last(); last != "" {
				why += ": " + last
			}
			fail(why, se.Lines)
			return
		default:
			fail(err.Error(), nil)
			return
		}
		if s.Model == "" {
			t.started[s.Name] = t.startedModel(ctx, si)
		}
		// Where the server put the model, from its own start-up log
		// (llama.cpp's "offloaded N/M layers to GPU"): it answers only
		// once the model is loaded, so the lines are there now.
		if p, ok := results.PlacementFromLog(srv.Log()); ok {
			placed = &p
		}
		defer func() {
			st.Doing, st.Server = "stopping the server", nil
			t.obs.status(st)
			srv.Stop()
		}()
		st.Server = srv
	case setup.ByHand:
		st.Doing, st.Instruction = "waiting for you", s.Instruction
		t.obs.status(st)
		if err := t.obs.Pause(ctx, s); err != nil || ctx.Err() != nil {
			if ctx.Err() == nil {
				fail("it is changed by hand, and "+err.Error(), nil)
			}
			return
		}
		st.Doing, st.Instruction = "waiting for the server to answer", ""
		t.obs.status(st)
		if err := serverproc.AwaitServer(ctx, t.ep.URL, t.plan.StartTimeout); err != nil {
			if ctx.Err() == nil {
				fail("after the change by hand: "+err.Error(), nil)
			}
			return
		}
	}

	st.Doing = "measuring"
	t.obs.status(st)
	var (
		f   *results.File
		rr  *results.RateResult
		err error
	)
	if t.plan.Replay != nil {
		// The same trace at the same times for every setting: only the
		// prompts' seed is fresh, so no setting finds another's answers
		// in its cache.
		rp := *t.plan.Replay
		rp.Model, rp.FixedSeed, rp.Timeout, rp.Simulated = t.modelOf(s), false, t.plan.Inner.Timeout, t.plan.Inner.Simulated
		rr, err = RunRate(ctx, rp, t.epOf(si), t.obs.Observer)
	} else {
		plan := t.plan.Inner
		plan.Model, plan.FixedSeed = t.modelOf(s), false
		f, err = Run(ctx, plan, t.epOf(si), t.obs.Observer)
	}
	measured := f != nil || rr != nil
	run := results.TuneRun{Setting: si, Round: round, Position: pos}
	if err != nil {
		run.Error = err.Error()
	}
	if srv != nil {
		select {
		case <-srv.Exited():
			// The server died under the run: its requests failed as data;
			// say why with its own last lines.
			run.Error = strings.TrimSpace(run.Error + " the server exited during the run: " + fmt.Sprint(srv.Err()))
			fail("the server exited during the run ("+fmt.Sprint(srv.Err())+")", srv.Log())
		default:
		}
	}
	if f != nil {
		if d := f.Local.Detection; d != nil && d.Placement == nil && placed != nil {
			// The run's own result says it too (History, Compare).
			d.Placement = placed
		}
		f.Local.Tune = &results.TuneRef{ID: t.ref, Setting: s.Name, Round: round, Rounds: t.plan.Rounds}
		f.Local.Group = &results.RunGroup{ID: t.ref + "-" + fmt.Sprint(si+1), Index: round, Of: t.plan.Rounds}
		if len(f.Runs) > 0 {
			run.Seed = f.Runs[0].Seed
		}
		run.Complete = f.Complete
		t.noteServedModel(si, f.Local.RequestedModel)
		run.Levels = compare.TuneFigures(f)
		t.noteHardware(si, round, f)
		if t.obs.Saved != nil {
			run.RunID = t.obs.Saved(f)
		}
		t.noteServer(si, f.Local.Telemetry, f.Local.Detection)
	}
	if rr != nil {
		if d := &rr.Engine; d.Placement == nil && placed != nil {
			d.Placement = placed
		}
		rr.Local.Tune = &results.TuneRef{ID: t.ref, Setting: s.Name, Round: round, Rounds: t.plan.Rounds}
		run.Seed, run.Complete = rr.Settings.Seed, rr.Complete
		t.noteServedModel(si, rr.ServerModel)
		run.Levels = compare.TuneReplayFigures(rr)
		t.noteHardware(si, round, rr)
		if t.res.Plan.Replay != nil && len(rr.Levels) > 0 {
			t.res.Plan.Replay.Requests = rr.Levels[0].Requests
		}
		if t.obs.SavedReplay != nil {
			run.RunID = t.obs.SavedReplay(rr)
		}
		t.noteServer(si, rr.Local.Telemetry, &rr.Engine)
	}
	if !measured && err != nil && set.Failed == "" && ctx.Err() == nil && set.Rounds == 0 {
		// No run at all on its first turn (the endpoint check or the
		// probe refused): later rounds would only say it again.
		fail(err.Error(), logOf(srv))
	}
	if len(run.Levels) > 0 {
		set.Rounds++
	}
	t.res.Runs = append(t.res.Runs, run)
	if ctx.Err() == nil && !t.plan.NoAnswers && t.answers[si] == nil && set.Failed == "" && measured {
		st.Doing = "checking the answers"
		t.obs.status(st)
		ans, err := t.answersOf(ctx, t.epOf(si), t.modelOf(s))
		if err != nil && ctx.Err() == nil {
			t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("%s: the answers could not be checked: %v", s.Name, err))
		}
		t.answers[si] = ans
	}
	if ctx.Err() == nil && !t.plan.NoAnswers && set.Failed == "" && measured {
		t.measureDrift(ctx, si, s, st)
	}
}

// tuneDriftPlan is the answers measurement of a settings comparison.
var tuneDriftPlan = setup.AnswersPlan{}

// measureDrift makes the first setting's reference in its turn, and
// reads each other setting against it in that setting's first turn
// after the reference exists (docs/method.md §14). A server it cannot
// read (no log-probabilities, a chat route that does not continue the
// answer) is said once, beside the answers' sentence; a setting whose
// reading fails is said as a note.
func (t *tuneRun) measureDrift(ctx context.Context, si int, s setup.TuneSetting, st TuneStatus) {
	if t.driftWhy != "" || (si == 0) == (t.driftRef != nil) || si > 0 && t.drifts[si] != nil {
		return
	}
	total := tuneDriftPlan.ReadRequests()
	if si == 0 {
		total = tuneDriftPlan.ReferenceRequests()
	}
	// Its progress, a few times a second: 198 short requests are
	// seconds on a GPU and may be a minute on a CPU.
	done, said := 0, time.Time{}
	step := func() {
		done++
		if time.Since(said) >= 500*time.Millisecond || done == total {
			said = time.Now()
			st.Doing = fmt.Sprintf("comparing the answers token by token: %d of %d", done, total)
			t.obs.status(st)
		}
	}
	st.Doing = fmt.Sprintf("comparing the answers token by token: 0 of %d", total)
	t.obs.status(st)
	side := AnswersSide{Endpoint: t.epOf(si), Model: t.modelOf(s)}
	if si == 0 {
		ref, err := ReferenceAnswers(ctx, side, tuneDriftPlan, step)
		if err != nil && ctx.Err() == nil {
			t.driftWhy = err.Error()
		}
		t.driftRef = ref
		return
	}
	res, err := t.driftRef.ReadAnswers(ctx, side, step)
	if err != nil {
		if ctx.Err() == nil {
			t.res.Warnings = append(t.res.Warnings, fmt.Sprintf("%s: the answers' distributions could not be compared: %v", s.Name, err))
		}
		return
	}
	t.drifts[si] = res.Drift()
}

func logOf(srv *serverproc.Server) []string {
	if srv == nil {
		return nil
	}
	return srv.Log()
}

// noteServer keeps what the server said of itself in a setting (its
// first run's detection), and warns when its build changed since.
func (t *tuneRun) noteServer(si int, tel *results.Telemetry, d *results.Detection) {
	set := &t.res.Settings[si]
	if limit := powerLimitOf(tel); limit != nil {
		// Read back at every turn: the command before it may not have
		// applied what it asked (no sudo, a cap out of range).
		if set.Server == nil {
			set.Server = &results.TuneServer{}
		}
		if was := set.Server.PowerLimitW; was != nil && *was != *limit {
			t.warnOnce(fmt.Sprintf("%s: the GPUs' power limit changed between rounds (%.0f W, then %.0f W): the rounds measured different settings", set.Name, *was, *limit))
		}
		set.Server.PowerLimitW = limit
	}
	if d == nil || d.Family == "" && d.Version == "" {
		return
	}
	now := &results.TuneServer{Family: d.Family, Build: d.Version, Slots: d.ParallelSlots, Context: d.ContextLength, Placement: d.Placement}
	if set.Server == nil || set.Server.Family == "" && set.Server.Build == "" {
		// The first detection (beside a power limit already read).
		if set.Server != nil {
			now.PowerLimitW = set.Server.PowerLimitW
		}
		set.Server = now
		return
	}
	if now.Build != set.Server.Build {
		t.warnOnce(fmt.Sprintf("%s: the server's build changed between rounds (%s, then %s): the rounds measured different servers", set.Name, set.Server.Build, now.Build))
	}
}

// powerLimitOf is the GPUs' power limits summed, as the inventory read
// them; nil when some card did not say its limit, or without telemetry.
func powerLimitOf(tel *results.Telemetry) *float64 {
	if tel == nil || len(tel.Inventory) == 0 {
		return nil
	}
	var sum float64
	for _, g := range tel.Inventory {
		if g.PowerLimitW == nil {
			return nil
		}
		sum += *g.PowerLimitW
	}
	return &sum
}

// noteServedModel keeps m, the model setting si's server served when
// none was named, as the setting's (and the comparison's, for the first
// setting).
func (t *tuneRun) noteServedModel(si int, m string) {
	set := &t.res.Settings[si]
	if m == "" || set.Model != "" {
		return
	}
	set.Model = m
	if si == 0 || t.res.Model == "" {
		t.res.Model = m
	}
}

// noteHardware keeps what setting si's run of this round did on its
// hardware (compare.HardwareStates), for hardwareApart.
func (t *tuneRun) noteHardware(si, round int, p results.Powered) {
	for i, st := range compare.HardwareStates {
		if s, ok := st.Of(p); ok {
			if t.hw[i] == nil {
				t.hw[i] = map[int][]string{}
			}
			t.hw[i][si] = append(t.hw[i][si], fmt.Sprintf("%s (round %d)", s, round))
		}
	}
}

// hardwareApart warns when some settings' hardware did something (a GPU
// slowed itself, the machine swapped, other programs held the cards)
// and others' did not (issue #50): their speeds then differ for the
// hardware's sake as much as the setting's.
func (t *tuneRun) hardwareApart() {
	for i, st := range compare.HardwareStates {
		var apart, calm []string
		for si, states := range t.hw[i] {
			name := t.res.Settings[si].Name
			var did []string
			for _, s := range states {
				if !strings.HasPrefix(s, st.Calm+" (") {
					did = append(did, s)
				}
			}
			if len(did) > 0 {
				apart = append(apart, name+" "+strings.Join(did, ", "))
			} else {
				calm = append(calm, name)
			}
		}
		if len(apart) > 0 && len(calm) > 0 {
			slices.Sort(apart)
			slices.Sort(calm)
			t.warnOnce(fmt.Sprintf(st.Why, strings.Join(apart, "; ")+"; "+results.JoinAnd(calm)+" "+st.Calm))
		}
	}
}

func (t *tuneRun) warnOnce(w string) {
	if !slices.Contains(t.res.Warnings, w) {
		t.res.Warnings = append(t.res.Warnings, w)
		t.obs.logf("warning: %s", w)
	}
}

// finish judges what was measured.
func (t *tuneRun) finish(complete bool) *results.TuneResult {
	r := t.res
	r.Complete = complete
	r.Local.FinishedAt = time.Now().UTC().Format(time.RFC3339)
	for i, s := range t.plan.Settings {
		r.Settings[i].Model = t.modelOf(s) // a started server's own
	}
	r.Verdicts = compare.TuneVerdicts(r.Runs, len(r.Settings))
	if !t.plan.NoAnswers && t.answers[0] != nil {
		kinds := answerKinds()
		r.Answers = r.Answers[:0]
		for s := 1; s < len(r.Settings); s++ {
			if t.answers[s] != nil {
				a := compare.AnswersAgainst(s, kinds, t.answers[0], t.answers[s])
				a.Drift = t.drifts[s]
				r.Answers = append(r.Answers, a)
			}
		}
		r.DriftNote = t.driftWhy
		r.Local.Answers = make([][]string, len(t.answers))
		for i, a := range t.answers {
			for _, ps := range a {
				r.Local.Answers[i] = append(r.Local.Answers[i], strings.Join(ps, ""))
			}
		}
	}
	t.sameServers()
	t.hardwareApart()
	return r
}

// sameServers warns when two settings that start the server differently
// found it reporting the same configuration: the change may not have
// reached the server (a flag it ignores, an environment it never read).
func (t *tuneRun) sameServers() {
	sets := t.res.Settings
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			a, b := sets[i].Server, sets[j].Server
			if a == nil || b == nil || sets[i].How == setup.ByModel || sets[j].How == setup.ByModel {
				continue
			}
			// Only a server that says how many requests it serves at once
			// (llama.cpp's slots) says enough to doubt a setting by: Ollama
			// reports neither OLLAMA_NUM_PARALLEL nor most of its knobs.
			if *a == *b && a.Slots > 0 && knobsDiffer(t.plan.Settings[i], t.plan.Settings[j]) {
				t.warnOnce(fmt.Sprintf("%s and %s: the server reported the same configuration in both (%s): check that the setting reached it", sets[i].Name, sets[j].Name, a.Describe()))
			}
		}
	}
}

// reportedKnobs are llama-server's flags for what it reports of itself
// (/props: slots, the context): a change of one of them must show there.
var reportedKnobs = []string{"-np", "--parallel", "-c", "--ctx-size"}

// knobsDiffer says two settings' commands give one of reportedKnobs
// different values.
func knobsDiffer(a, b setup.TuneSetting) bool {
	wa, _ := shellwords.Split(a.Command)
	wb, _ := shellwords.Split(b.Command)
	for _, k := range reportedKnobs {
		if flagValue(wa, k) != flagValue(wb, k) {
			return true
		}
	}
	return false
}

// flagValue is the value a command's words give flag ("-np 8",
// "-np=8"), "" when they give none.
func flagValue(words []string, flag string) string {
	for i, w := range words {
		if w == flag && i+1 < len(words) {
			return words[i+1]
		}
		if v, ok := strings.CutPrefix(w, flag+"="); ok {
			return v
		}
	}
	return ""
}

func answerKinds() []string {
	out := make([]string, len(SpecDecPrompts))
	for i, p := range SpecDecPrompts {
		out[i] = p.Kind
	}
	return out
}

// answersOf asks the server the outputs check's fixed prompts, one at a
// time at temperature 0 with a natural stop, and keeps each answer as its
// stream's pieces of text. An answer that failed is nil.
func (t *tuneRun) answersOf(ctx context.Context, ep setup.Endpoint, model string) ([][]string, error) {
	n := len(SpecDecPrompts)
	obs := t.obs.Observer
	obs.Checkpoint, obs.Requests, obs.LevelStart = nil, nil, nil
	s, err := startPlanRun(ctx, ep, obs, model, TuneAnswerTokens, 1, n, -1)
	if err != nil {
		return nil, err
	}
	defer s.release()
	timeout := t.plan.Inner.Timeout
	if timeout <= 0 {
		timeout = setup.PlanTimeout
	}
	cn := s.newConn()
	opts, _, _, err := s.negotiate(ctx, cn, true, 8, timeout)
	cn.close()
	if err != nil {
		return nil, err
	}
	opts.maxTokens, opts.ignoreEOS = TuneAnswerTokens, false
	set := s.openSlots(ctx, s.obs.Live.beginStage(Stage{
		Measured: true, Index: 1, Users: 1, Requests: n, TokensEach: TuneAnswerTokens, Name: "the answers check",
		Line: func(done, total int) string {
			return fmt.Sprintf("Checking the answers — %d of %d fixed prompts at temperature 0", done, total)
		},
	}), false)
	defer set.close()
	set.conns[0].details = true
	out := make([][]string, n)
	failed := 0
	for i, p := range SpecDecPrompts {
		o := opts
		o.text = p.Text
		lr := set.run(ctx, loadSpec{oneEach: true, timeout: timeout, request: func(int) (requestOpts, int64) { return o, int64(i) }})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if outs := lr.slots[0].outs; len(outs) == 1 && outs[0].ok() {
			out[i] = piecesOf(set.conns[0])
		} else {
			failed++
		}
	}
	if failed == n {
		return nil, fmt.Errorf("none of the %d prompts was answered", n)
	}
	return out, nil
}

// piecesOf are a conn's kept answer, cut where its chunks ended, each
// piece unescaped.
func piecesOf(c *conn) []string {
	out := make([]string, 0, len(c.pieces))
	from := 0
	for _, to := range c.pieces {
		var s string
		if err := json.Unmarshal(append(append([]byte{'"'}, c.answer[from:to]...), '"'), &s); err != nil {
			s = string(c.answer[from:to])
		}
		out = append(out, s)
		from = to
	}
	return out
}
