package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// The plans beyond the Kovara method: --plan stages (the three-stage
// plan), specdec (the speculative-decoding mode), capacity, context,
// rate, tune and answers. Each plan's side of the CLI is its entry in
// planCLIs: the flags it takes and its builder (flags → plan, here and in
// each plan's file); runOtherPlan checks the flags against the plan,
// builds it, finds the endpoint (or starts the plan's demo simulator) and
// runs it. Their results are their own document kinds, kept in the
// library like Kovara runs and written to -o when given.

// planFlags are the flags of the plans beyond the Kovara method.
type planFlags struct {
	planName   string
	quick      bool
	users      int
	specDecode string
	note       string
	thinking   string
	slo        sloFlags
	workload   workloadFlags
	capacity   capacityFlags
	context    contextFlags
	rate       rateFlags
	tune       tuneFlags
	answers    answersFlags
	// demo: the plan runs against its demo simulator (demo --plan).
	demo bool
}

func (f *planFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.planName, "plan", results.PlanKovara, "what to run: kovara (the Kovara method), stages (the three-stage plan), specdec (speculative-decoding acceptance), capacity (how many users at once within a service level), context (prefill and decode speed against context depth, cold and cached), rate (latency and goodput at requests a second, open loop), tune (settings compared in interleaved rounds: kovara-bench tune) or answers (one setting's answer distribution against another's: kovara-bench answers)")
	fs.BoolVar(&f.quick, "quick", false, "stages: a short smoke test (the protocol's quick lengths); its numbers are not the plan's")
	fs.IntVar(&f.users, "users", setup.DefaultUsers, "stages: users in the many-user stage; context: users at once at each depth (default 1)")
	fs.StringVar(&f.specDecode, "spec-decode", "", "stages, specdec: how speculative decoding is set up on the server, e.g. \"MTP 3\" or \"none\" (for the wiki block)")
	fs.StringVar(&f.note, "note", "", "stages: free text added to the wiki block's bench_note")
	fs.StringVar(&f.thinking, "thinking", "off", "stages, specdec: off (ask the chat template for no thinking) or default (send nothing)")
	f.slo.register(fs)
	f.workload.register(fs)
	f.capacity.register(fs)
	f.context.register(fs)
	f.rate.register(fs)
	f.tune.register(fs)
	f.answers.register(fs)
}

// sloFlags are the service level's flags, registered once for every plan
// that takes them: the capacity plan's limits (its defaults when not
// given), and the limits goodput is judged by on Kovara and rate runs
// (only those given).
type sloFlags struct {
	userTPS float64
	ttftP95 float64
	tpot    float64
}

func (c *sloFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&c.userTPS, "slo-user-tps", setup.DefaultSLOUserTPS, "capacity: the output speed each user must still see, tokens/s (the slowest 5 % of requests); kovara, rate: goodput counts the requests that saw at least this, each on its own (not judged unless given)")
	fs.Float64Var(&c.ttftP95, "slo-ttft-p95", setup.DefaultSLOTTFTP95Ms, "capacity: the ceiling on time to first token at p95, ms; kovara, rate: goodput counts the requests whose own time to first token was at most this (not judged unless given)")
	fs.Float64Var(&c.tpot, "slo-tpot", 0, "kovara, rate: goodput counts the requests whose own time per output token after the first was at most this, ms (not judged unless given)")
}

// given is the service level goodput is judged by: each limit only when
// its flag was given.
func (c sloFlags) given(set map[string]bool) setup.RateSLO {
	var s setup.RateSLO
	setIfGiven(set, "slo-ttft-p95", &s.TTFTMs, c.ttftP95)
	setIfGiven(set, "slo-user-tps", &s.UserTPS, c.userTPS)
	setIfGiven(set, "slo-tpot", &s.TPOTMs, c.tpot)
	return s
}

// planCLI is one plan's side of the CLI, all of it in its planCLIs
// entry: which flags it takes and how it is built from them.
type planCLI struct {
	// flags name the flags the plan takes beyond those every plan takes
	// (everyPlanFlags; each flag defined once, in runFlags.define). A
	// flag some plan lists is refused with a plan that does not
	// (checkPlanFlags), and each command that runs plans takes the flags
	// of the plans it runs and lists them under each plan's heading in
	// its help (planCommand).
	flags []string
	// build makes the plan from the flags; nil for the Kovara method,
	// which run.go runs itself (repeated, sharded, like another run).
	build func(f *runFlags, set map[string]bool) (otherPlan, error)
}

// The flags several plans share, listed once here for their entries.
var (
	// The Kovara method's load: its levels, lengths and counts.
	levelFlags = []string{"concurrency", "input-tokens", "output-tokens", "requests", "warmup"}
	// A replayed trace in place of a plan's own load.
	traceFlags = []string{"trace", "speed", "from", "to"}
	// What the requests ask beyond the synthetic prompt, on the Kovara
	// method (a prompts file is the rate plan's alone).
	shapeFlags = []string{"shared-prefix", "prefix-groups", "turns"}
)

// planCLIs are every plan's side of the CLI, keyed by the plan's id
// (plans.Kind.ID): TestEveryPlanHasItsFlags and TestEveryPlanHasABuilder
// fail on a plan left out.
var planCLIs = map[string]planCLI{
	results.PlanKovara: {
		flags: slices.Concat([]string{"manifest", "profile", "png", "seed", "slo-user-tps", "slo-ttft-p95", "slo-tpot"}, levelFlags, shapeFlags),
	},
	results.PlanStages: {
		flags: []string{"quick", "users", "note", "spec-decode", "thinking"},
		build: func(f *runFlags, set map[string]bool) (otherPlan, error) {
			p, err := f.stagesPlan(set)
			return planRun(f, p, func(p *setup.StagesPlan, sim bool) { p.Simulated = sim }, engine.RunStages, finishStages), err
		},
	},
	results.PlanSpecDec: {
		flags: []string{"concurrency", "requests", "output-tokens", "spec-decode", "thinking"},
		build: func(f *runFlags, set map[string]bool) (otherPlan, error) {
			p, err := f.specDecPlan(set)
			return planRun(f, p, func(p *setup.SpecDecPlan, sim bool) { p.Simulated = sim }, engine.RunSpecDec, finishSpecDec), err
		},
	},
	results.PlanCapacity: {
		flags: []string{"input-tokens", "output-tokens", "warmup", "seed", "slo-user-tps", "slo-ttft-p95", "max-concurrency"},
		build: func(f *runFlags, _ map[string]bool) (otherPlan, error) {
			p, err := f.capacityPlan()
			return planRun(f, p, func(p *setup.CapacityPlan, sim bool) { p.Simulated = sim }, engine.RunCapacity, finishCapacity), err
		},
	},
	results.PlanContext: {
		flags: []string{"output-tokens", "seed", "users", "depths", "repeats"},
		build: func(f *runFlags, set map[string]bool) (otherPlan, error) {
			p, err := f.contextPlan(set)
			return planRun(f, p, func(p *setup.ContextPlan, sim bool) { p.Simulated = sim }, engine.RunContext, finishContext), err
		},
	},
	results.PlanRate: {
		flags: slices.Concat([]string{"input-tokens", "output-tokens", "requests", "warmup", "seed", "slo-user-tps", "slo-ttft-p95", "slo-tpot",
			"prompts", "prompts-skip-bad", "rate", "arrival", "burstiness", "max-in-flight", "sweep-max"}, shapeFlags, traceFlags),
		build: func(f *runFlags, set map[string]bool) (otherPlan, error) {
			p, err := f.ratePlan(set)
			return planRun(f, p, func(p *setup.RatePlan, sim bool) { p.Simulated = sim }, engine.RunRate, finishRate), err
		},
	},
	results.PlanTune: {
		flags: slices.Concat(levelFlags, traceFlags, []string{"setting", "model-setting", "hand-setting", "rounds", "start-timeout", "no-answers", "yes"}),
		build: buildTune,
	},
	results.PlanAnswers: {flags: []string{"against", "against-model", "positions", "answer-prompts", "top"}, build: buildAnswers},
}

// plansTaking are the plans whose entries list the flag name, in
// plans.All's order; none for a flag every plan takes.
func plansTaking(name string) []string {
	var ids []string
	for _, k := range plans.All {
		if slices.Contains(planCLIs[k.ID].flags, name) {
			ids = append(ids, k.ID)
		}
	}
	return ids
}

// checkPlanFlags refuses the first flag (by name) given with a plan it
// does not apply to.
func checkPlanFlags(plan string, set map[string]bool) error {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := notForPlan(n, plan); err != nil {
			return err
		}
	}
	return nil
}

// notForPlan says which plans take the flag name when plan does not, nil
// when plan takes it (or every plan does).
func notForPlan(name, plan string) error {
	if ids := plansTaking(name); len(ids) > 0 && !slices.Contains(ids, plan) {
		return fmt.Errorf("--%s applies to --plan %s, not to --plan %s", name, strings.Join(ids, " or "), plan)
	}
	return nil
}

// otherPlan is a built plan beyond the Kovara method: it runs against ep
// (simulated for the demo) and prints and keeps its result, returning the
// exit code.
type otherPlan func(ctx context.Context, ep setup.Endpoint, simulated bool, obs engine.Observer, prog *progress, stdout, stderr io.Writer) int

// otherPlan builds the plan --plan names from the flags.
func (f *runFlags) otherPlan(set map[string]bool) (otherPlan, error) {
	if c := planCLIs[f.planName]; c.build != nil {
		return c.build(f, set)
	}
	ids := plans.IDs()
	return nil, fmt.Errorf("--plan %q: use %s or %s", f.planName, strings.Join(ids[:len(ids)-1], ", "), ids[len(ids)-1])
}

// planRun is the otherPlan that runs p with run, marked simulated for the
// demo, and prints and keeps its result with finish.
func planRun[P, R any](f *runFlags, p P, simulated func(*P, bool), run func(context.Context, P, setup.Endpoint, engine.Observer) (R, error),
	finish func(R, error, runFlags, io.Writer, io.Writer) int) otherPlan {
	return func(ctx context.Context, ep setup.Endpoint, sim bool, obs engine.Observer, prog *progress, stdout, stderr io.Writer) int {
		simulated(&p, sim)
		prog.start()
		res, err := run(ctx, p, ep, obs)
		prog.stop()
		return finish(res, err, *f, stdout, stderr)
	}
}

// thinkingOff reads --thinking.
func (f *runFlags) thinkingOff() (bool, error) {
	switch f.thinking {
	case "off":
		return true, nil
	case "default":
		return false, nil
	}
	return false, fmt.Errorf("--thinking %q: use off or default", f.thinking)
}

// setSeedTimeout reads --seed (the prompts' seed, fixed) and --timeout,
// each when it is given, into a plan, leaving the plan's default
// otherwise: without --seed, fresh prompts.
func (f *runFlags) setSeedTimeout(set map[string]bool, seed *int64, fixed *bool, timeout *time.Duration) error {
	if set["seed"] {
		s, fx, err := engine.ParseSeed(f.seed)
		if err != nil {
			return fmt.Errorf("--%w", err)
		}
		*seed, *fixed = s, fx
	}
	return f.setTimeout(set, timeout)
}

// setTimeout reads --timeout into a plan's timeout when it is given,
// leaving the plan's default otherwise.
func (f *runFlags) setTimeout(set map[string]bool, timeout *time.Duration) error {
	if !set["timeout"] {
		return nil
	}
	to, err := engine.ParseTimeout(f.timeout)
	if err != nil {
		return fmt.Errorf("--%w", err)
	}
	*timeout = to
	return nil
}

// setIfGiven sets a plan's field to the value of the flag name when the
// flag was given, leaving the plan's default otherwise.
func setIfGiven[T any](set map[string]bool, name string, field *T, v T) {
	if set[name] {
		*field = v
	}
}

// setLevels reads --concurrency into a plan's levels when it is given,
// leaving the plan's default otherwise.
func (f *runFlags) setLevels(set map[string]bool, levels *[]int) error {
	if !set["concurrency"] {
		return nil
	}
	l, err := engine.ParseLevels(f.concurrency)
	if err != nil {
		return fmt.Errorf("--concurrency %q: %w", f.concurrency, err)
	}
	*levels = l
	return nil
}

// setThinkingTimeout reads what the three-stage and speculative-decoding
// plans take alike: --thinking (the server's own thinking unless off) and
// --timeout.
func (f *runFlags) setThinkingTimeout(set map[string]bool, serverThinking *bool, timeout *time.Duration) error {
	off, err := f.thinkingOff()
	if err != nil {
		return err
	}
	*serverThinking = !off
	return f.setTimeout(set, timeout)
}

// stagesPlan is the three-stage plan the flags ask for.
func (f *runFlags) stagesPlan(set map[string]bool) (setup.StagesPlan, error) {
	p := setup.DefaultStagesPlan()
	if err := f.setThinkingTimeout(set, &p.ServerThinking, &p.Timeout); err != nil {
		return p, err
	}
	if f.users < 1 { // the plan reads 0 as its default
		return p, fmt.Errorf("--users %d: the many-user stage needs at least 1 user", f.users)
	}
	p.Model, p.Users, p.Quick = f.model, f.users, f.quick
	p.SpecDecode, p.Note = f.specDecode, f.note
	return p, p.Validate()
}

// specDecPlan is the speculative-decoding plan the flags ask for.
func (f *runFlags) specDecPlan(set map[string]bool) (setup.SpecDecPlan, error) {
	p := setup.DefaultSpecDecPlan()
	if err := f.setThinkingTimeout(set, &p.ServerThinking, &p.Timeout); err != nil {
		return p, err
	}
	p.Model, p.SpecDecode = f.model, f.specDecode
	if err := f.setLevels(set, &p.Levels); err != nil {
		return p, err
	}
	setIfGiven(set, "requests", &p.Requests, f.requests)
	setIfGiven(set, "output-tokens", &p.MaxTokens, f.outputTokens)
	return p, p.Validate()
}

// runOtherPlan runs --plan stages, specdec, capacity or context; other is false for
// the Kovara plan, which the caller runs (its flags checked here too).
// demo runs against the plan's demo simulator (plans.Kind.Demo, as in the
// app).
func runOtherPlan(f runFlags, set map[string]bool, demo bool, stdout, stderr io.Writer) (code int, other bool) {
	cmd := "run"
	if demo {
		cmd = "demo"
	}
	bad := func(err error) (int, bool) {
		fmt.Fprintf(stderr, "kovara-bench %s: %v\n", cmd, err)
		return exitBadInput, true
	}
	if err := checkPlanFlags(f.planName, set); err != nil {
		return bad(err)
	}
	if f.planName == results.PlanKovara {
		return 0, false
	}
	if f.manifest != "" || f.profile != "" {
		return bad(errors.New("--manifest and --profile apply to the Kovara method only"))
	}
	f.demo = demo
	run, err := f.otherPlan(set)
	if err != nil {
		return bad(err)
	}
	var ep setup.Endpoint
	if demo {
		cfg := plans.ByID(f.planName).Demo()
		srv, url, err := sim.Start(cfg, "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench demo: could not start the simulator: %v\n", err)
			return exitFailed, true
		}
		defer srv.Close()
		ep = setup.Endpoint{Name: "Built-in simulator", URL: url}
		like := "vLLM"
		if cfg.Personality == sim.LlamaCpp {
			like = "llama.cpp"
		}
		fmt.Fprintf(stderr, "demo: the %s plan against the built-in simulator (a %s-like fake server, not real hardware)\n", f.planName, like)
	} else {
		if f.endpoint == "" {
			return bad(errors.New("give the server with --endpoint, e.g. --endpoint http://192.168.1.10:8000 or the name of a saved endpoint"))
		}
		if ep, err = f.resolveEndpoint(stderr); err != nil {
			return bad(err)
		}
	}
	ctx, stop := interruptContext()
	defer stop()
	live := engine.NewLive()
	prog := newProgress(stderr, live, f.quiet)
	return run(ctx, ep, demo, engine.Observer{Live: live, Log: prog.log}, prog, stdout, stderr), true
}

// planExit maps a plan's error to an exit code, having said what it was,
// and says whether what the run left is kept whatever it measured
// (engine.Kept: it finished or was stopped).
func planExit(err error, stderr io.Writer) (int, bool) {
	code := exitOK
	switch {
	case err == nil:
	case errors.As(err, new(*engine.ServerGoneError)):
		// What was measured is kept, as after Ctrl-C; the run failed.
		fmt.Fprintf(stderr, "kovara-bench: %v\n", err)
		code = exitFailed
	case errors.Is(err, engine.ErrInterrupted):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		code = exitInterrupted
	default:
		fmt.Fprintf(stderr, "kovara-bench: %v\n", err)
		code = exitFor(err)
	}
	return code, engine.Kept(err, false)
}

// keepPlanResult saves a plan result into the library (save), and writes
// a copy to -o when given; without a library, to a file named by time.
func keepPlanResult(f runFlags, kind string, data []byte, save func(*storage.Library) (string, error), stderr io.Writer) bool {
	saved := false
	if lib, err := openLibrary(); err != nil {
		fmt.Fprintf(stderr, "warning: the results library cannot be used (%v)\n", err)
	} else if id, err := save(lib); err != nil {
		fmt.Fprintf(stderr, "kovara-bench: could not save into the library: %v\n", err)
	} else {
		saved = true
		fmt.Fprintf(stderr, "saved in the library as %s (%s)\n", id, lib.Path(id))
	}
	out := f.output
	if out == "" && !saved {
		out = "kovara-" + kind + "-" + time.Now().Format("20060102-150405") + ".json"
	}
	if out == "" {
		return true
	}
	if err := storage.WriteFileAtomic(out, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "kovara-bench: could not write the result: %v\n", err)
		return false
	}
	fmt.Fprintf(stderr, "result written to %s\n", out)
	return true
}

var finishStages = finishWith(func(r *results.StagesResult) planOutput {
	return planOutput{doc: plans.NewStages(r), server: r.Local.ServerMetrics, warnings: r.Warnings,
		print: func(w io.Writer) {
			printStages(w, r)
			fmt.Fprintln(w)
			fmt.Fprintln(w, "---- wiki block ----")
			fmt.Fprint(w, r.WikiBlock())
		}}
})

// planOutput is what a plan's run leaves for finishPlan to say and keep.
type planOutput struct {
	doc      plans.Doc // nil when the plan gave no result
	print    func(io.Writer)
	server   *results.ServerMetrics
	warnings []string // the run's own, to stderr
	last     string   // said last on stdout, after where the result was kept
}

// finishWith is a plan's finish (planRun's): out says what its result,
// when the plan gave one, leaves for finishPlan.
func finishWith[R any](out func(*R) planOutput) func(*R, error, runFlags, io.Writer, io.Writer) int {
	return func(res *R, err error, f runFlags, stdout, stderr io.Writer) int {
		var o planOutput
		if res != nil {
			o = out(res)
		}
		return finishPlan(o, err, f, stdout, stderr)
	}
}

// finishPlan prints a plan's result, keeps it in the library (and -o),
// and returns the exit code: the plan's error's, else 1 when the result
// failed (plans.Doc.Failed), the rule the app and History follow too.
func finishPlan(o planOutput, err error, f runFlags, stdout, stderr io.Writer) int {
	code, _ := planExit(err, stderr)
	if o.doc == nil || !engine.Kept(err, o.doc.Measured()) {
		return code
	}
	o.print(stdout)
	price, _ := f.price() // checked before the run
	printEnergy(stdout, o.doc, price)
	if line := serverLine(o.server); line != "" {
		fmt.Fprintln(stderr, line)
	}
	for _, w := range o.warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	data, merr := o.doc.Marshal()
	save := func(l *storage.Library) (string, error) { return l.SaveDoc("", o.doc) }
	if merr != nil || !keepPlanResult(f, o.doc.Kind().ID, data, save, stderr) {
		return exitFailed
	}
	if o.last != "" {
		fmt.Fprintln(stdout, o.last)
	}
	return failedCode(code, o.doc)
}

// failedCode is the exit code of a run that ended with code: 1 when its
// result failed.
func failedCode(code int, d plans.Doc) int {
	if code == exitOK && d.Failed() {
		return exitFailed
	}
	return code
}

// printTable writes a result's table (results.Table) in aligned columns,
// each heading on one line: the same cells the app shows.
func printTable(w io.Writer, t results.Table) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, c := range t.Columns {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, results.Flat(c))
	}
	fmt.Fprintln(tw, "\t")
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
}

// printStages writes the three-stage table.
func printStages(w io.Writer, r *results.StagesResult) {
	fmt.Fprintln(w, "Three-stage plan (Kovara Desktop, after the cmp.wiki benchmark protocol)")
	fmt.Fprintln(w, r.Headline())
	printProblems(w, plans.NewStages(r))
	thinking := "thinking at the server default"
	if r.Compat.ThinkingOff {
		thinking = "thinking off"
	}
	fmt.Fprintf(w, "model %s, engine %s, %s\n", r.Model, engineWords(r.Engine), thinking)
	printTable(w, r.Table())
	if t := r.GPUs.CardsTable(); t != nil {
		fmt.Fprintln(w, r.GPUs.Heading()+":")
		printTable(w, *t)
	}
	src := r.TokenSource
	if src == "" {
		src = "-"
	}
	fmt.Fprintf(w, "tokens from %s; decode tok/s = tokens / (last token − first token); prefill tok/s = prompt tokens / TTFT\n", src)
	if r.Users != nil && r.Users.Queued {
		fmt.Fprintln(w, r.Users.QueueNote)
	}
	if sp := r.SpecObserved; sp != nil && sp.MeanAcceptanceLength != nil {
		fmt.Fprintf(w, "speculative decoding during the single-user stage: acceptance %s, mean acceptance length %s\n",
			results.Percent(sp.AcceptanceRate), results.Num(sp.MeanAcceptanceLength, 2))
	}
}

var finishSpecDec = finishWith(func(r *results.SpecDecResult) planOutput {
	return planOutput{doc: plans.NewSpecDec(r), server: r.Local.ServerMetrics, warnings: r.Warnings,
		print: func(w io.Writer) { printSpecDec(w, r) }}
})

// engineWords names the engine a plan's result ran on, for its heading:
// its family's name and version, or that it was not recognised.
func engineWords(d results.Detection) string {
	if results.FamilyName(d.Family) == "" {
		return "not recognised"
	}
	return strings.TrimSpace(results.FamilyName(d.Family) + " " + d.Version)
}

// printHeading writes a plan result's first line, marked when it was
// measured against the simulator.
func printHeading(w io.Writer, title string, simulated bool) {
	if simulated {
		title += " — SIMULATOR"
	}
	fmt.Fprintln(w, title)
}

// printSpecDec writes acceptance per level.
func printSpecDec(w io.Writer, r *results.SpecDecResult) {
	printHeading(w, "Speculative decoding (representative prompts; not publishable)", r.Local.Simulated)
	fmt.Fprintln(w, r.Headline())
	printProblems(w, plans.NewSpecDec(r))
	printTable(w, r.Table())
	perRequest := false
	for _, l := range r.Levels {
		perRequest = perRequest || l.PerRequest != nil
	}
	switch {
	case r.Counters == "":
		fmt.Fprintln(w, "acceptance: the server exposes no speculative-decoding counters")
	default:
		fmt.Fprintf(w, "acceptance = accepted / draft tokens, mean acceptance length = 1 + accepted / drafts, tokens a step of the model (%s, before/after each level); tokens counted from %s\n",
			r.Counters, tokenSources(r))
	}
	if perRequest {
		fmt.Fprintln(w, "per answer: each answer's own counts (llama.cpp's timings.draft_n and draft_n_accepted), immune to other traffic on the server")
	}
	for _, l := range r.Levels {
		if sp := l.Spec; sp != nil && len(sp.PerPosition) > 0 {
			var pos []string
			for i, v := range sp.PerPosition {
				pos = append(pos, fmt.Sprintf("%d: %s", i+1, results.Percent(&v)))
			}
			fmt.Fprintf(w, "concurrency %d, accepted by draft position: %s\n", l.Concurrency, strings.Join(pos, ", "))
		}
	}
	for _, n := range r.LevelNotes() {
		fmt.Fprintln(w, n)
	}
}

func tokenSources(r *results.SpecDecResult) string {
	src := ""
	for _, l := range r.Levels {
		if l.TokenSource != "" && !strings.Contains(src, l.TokenSource) {
			if src != "" {
				src += ", "
			}
			src += l.TokenSource
		}
	}
	if src == "" {
		return "-"
	}
	return src
}

// serverLine sums up the server's own view of a run from its /metrics:
// the peaks of running and waiting requests and of KV-cache use.
func serverLine(sm *results.ServerMetrics) string {
	if sm == nil || len(sm.Samples) == 0 {
		return ""
	}
	var run, wait, kv *float64
	peak := func(p **float64, v *float64) {
		if v != nil && (*p == nil || *v > **p) {
			*p = v
		}
	}
	for _, s := range sm.Samples {
		peak(&run, s.Running)
		peak(&wait, s.Waiting)
		peak(&kv, s.KVCache)
	}
	var parts []string
	if run != nil {
		parts = append(parts, "running "+strconv.FormatFloat(*run, 'f', -1, 64))
	}
	if wait != nil {
		parts = append(parts, "waiting "+strconv.FormatFloat(*wait, 'f', -1, 64))
	}
	if kv != nil {
		parts = append(parts, "KV cache "+strconv.FormatFloat(*kv*100, 'f', 1, 64)+"%")
	}
	source := "/metrics"
	if sm.Source != "" {
		source = sm.Source // llama-server's busy slots when /metrics is off
	}
	return fmt.Sprintf("server %s (%s, %d readings): peak %s", source, results.FamilyName(sm.Family), len(sm.Samples), strings.Join(parts, ", "))
}
