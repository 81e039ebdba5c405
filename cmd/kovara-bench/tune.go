package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/internal/shellwords"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/storage"
)

// The settings comparison: kovara-bench tune FILE.yaml, or tune with
// --setting flags (run --plan tune is the same plan; demo --plan tune runs
// it on the simulator's two models).

// tuneFlags are the settings comparison's own flags.
type tuneFlags struct {
	settings, modelSettings, handSettings listFlag
	rounds                                int
	startTimeout                          string
	noAnswers, yes                        bool
	file                                  *storage.TuneFile // FILE.yaml, read by cmdTune
}

// listFlag is a flag given once per value.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func (f *tuneFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.settings, "setting", "tune: a setting the app starts, 'NAME=COMMAND' (the server's whole command line; NAME=VALUE words before the program are its environment), once per setting")
	fs.Var(&f.modelSettings, "model-setting", "tune: a setting that is another model of the same server, 'NAME=MODEL'")
	fs.Var(&f.handSettings, "hand-setting", "tune: a setting you make yourself when asked, 'NAME=WHAT TO CHANGE'")
	fs.IntVar(&f.rounds, "rounds", setup.TuneDefaultRounds, "tune: rounds, each running every setting once, in turns")
	fs.StringVar(&f.startTimeout, "start-timeout", "5m", "tune: how long a started server may take to answer")
	fs.BoolVar(&f.noAnswers, "no-answers", false, "tune: leave out the check of the settings' answers to fixed prompts")
	fs.BoolVar(&f.yes, "yes", false, "tune: run the commands of a settings file without asking (they are printed first)")
}

// cmdTune is kovara-bench tune [FILE.yaml] [flags].
func cmdTune(args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs, set, code, ok := tuneCommand.parse(&f, args, stderr)
	if !ok {
		return code
	}
	switch fs.NArg() {
	case 0:
	case 1:
		tf, err := storage.LoadTuneFile(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench tune: %v\n", err)
			return exitBadInput
		}
		f.tune.file = tf
		if f.endpoint == "" {
			f.endpoint = tf.Endpoint
		}
	default:
		fmt.Fprintf(stderr, "kovara-bench tune: one settings file at most, not %q\n", strings.Join(fs.Args(), " "))
		return exitBadInput
	}
	if f.endpoint == "" {
		fmt.Fprintln(stderr, "kovara-bench tune: give the server with --endpoint (or endpoint: in the file), e.g. --endpoint http://127.0.0.1:8080: the address each setting's server answers at")
		return exitBadInput
	}
	code, _ = runOtherPlan(f, set, false, stdout, stderr)
	return code
}

// tunePlan is the comparison the flags (or the file) ask for.
func (f *runFlags) tunePlan(set map[string]bool) (setup.TunePlan, error) {
	var p setup.TunePlan
	if tf := f.tune.file; tf != nil {
		for _, n := range []string{"setting", "model-setting", "hand-setting"} {
			if set[n] {
				return p, fmt.Errorf("--%s with a settings file: put every setting in %s", n, tf.Path)
			}
		}
		p = tf.Plan
	} else {
		p = setup.TunePlan{Inner: setup.TuneDefaultPlan()}
		for _, s := range f.tune.settings {
			st, err := commandSetting(s)
			if err != nil {
				return p, err
			}
			p.Settings = append(p.Settings, st)
		}
		for _, s := range f.tune.modelSettings {
			name, model, ok := strings.Cut(s, "=")
			if !ok {
				return p, fmt.Errorf("--model-setting %q: write NAME=MODEL", s)
			}
			p.Settings = append(p.Settings, setup.TuneSetting{Name: name, How: setup.ByModel, Model: model})
		}
		for _, s := range f.tune.handSettings {
			name, what, ok := strings.Cut(s, "=")
			if !ok {
				return p, fmt.Errorf("--hand-setting %q: write NAME=WHAT TO CHANGE", s)
			}
			p.Settings = append(p.Settings, setup.TuneSetting{Name: name, How: setup.ByHand, Instruction: what})
		}
		if len(p.Settings) == 0 && f.demo {
			for _, m := range sim.TuneDemo().Models {
				p.Settings = append(p.Settings, setup.TuneSetting{Name: strings.TrimPrefix(m, "kovara-sim-8b-"), How: setup.ByModel, Model: m})
			}
		}
	}
	in := &p.Inner
	setIfGiven(set, "model", &in.Model, f.model)
	if err := f.setLevels(set, &in.Concurrency); err != nil {
		return p, err
	}
	setIfGiven(set, "requests", &in.Requests, f.requests)
	setIfGiven(set, "input-tokens", &in.InputTokens, f.inputTokens)
	setIfGiven(set, "output-tokens", &in.OutputTokens, f.outputTokens)
	setIfGiven(set, "warmup", &in.Warmup, f.warmup)
	if err := f.setTimeout(set, &in.Timeout); err != nil {
		return p, err
	}
	if set["rounds"] || p.Rounds == 0 {
		p.Rounds = f.tune.rounds
	}
	if set["start-timeout"] || p.StartTimeout == 0 {
		d, err := engine.ParseTimeout(f.tune.startTimeout)
		if err != nil {
			return p, fmt.Errorf("--start-timeout: %w", err)
		}
		p.StartTimeout = d
	}
	if set["no-answers"] {
		p.NoAnswers = f.tune.noAnswers
	}
	if f.rate.trace != "" {
		// Each turn replays the trace in place of the Kovara plan's
		// levels: the trace says the load, so the levels' flags do not
		// apply.
		for _, n := range []string{"concurrency", "requests", "input-tokens", "output-tokens", "warmup"} {
			if set[n] {
				return p, fmt.Errorf("--%s with --trace: the trace's replay sends its own requests at their recorded times", n)
			}
		}
		rp := setup.DefaultRatePlan()
		rp.Rates, rp.Sweep = nil, false
		rp.Replay = &setup.Replay{File: f.rate.trace, Speed: f.rate.speed, From: f.rate.from, To: f.rate.to}
		p.Replay = &rp
	} else if set["speed"] || set["from"] || set["to"] {
		return p, fmt.Errorf("--speed, --from and --to apply to --trace")
	}
	return p, p.Validate()
}

// commandSetting reads --setting 'NAME=COMMAND': the command's leading
// NAME=VALUE words are the server's environment, as a shell would take
// them.
func commandSetting(s string) (setup.TuneSetting, error) {
	name, cmd, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return setup.TuneSetting{}, fmt.Errorf("--setting %q: write NAME=COMMAND, e.g. --setting 'np8=llama-server -m model.gguf -np 8 --port 8080'", s)
	}
	env, command, err := shellwords.Command(cmd)
	if err != nil {
		return setup.TuneSetting{}, fmt.Errorf("--setting %s: %w", name, err)
	}
	return setup.TuneSetting{Name: name, How: setup.ByCommand, Env: env, Command: command}, nil
}

// buildTune is the settings comparison's builder (planCLIs).
func buildTune(f *runFlags, set map[string]bool) (otherPlan, error) {
	p, err := f.tunePlan(set)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, ep setup.Endpoint, simulated bool, obs engine.Observer, prog *progress, stdout, stderr io.Writer) int {
		p.Inner.Simulated = simulated
		// Where each started server listens, before anything is asked or
		// started: said in one sentence where it is not the endpoint's
		// address (engine.ListenOf).
		for _, l := range engine.TuneListens(p.Settings, ep.URL) {
			if line := l.Line(); line != "" {
				fmt.Fprintln(stderr, line)
			}
		}
		if tf := f.tune.file; tf != nil {
			if ok, code := confirmFile(tf, f.tune.yes, stderr); !ok {
				return code
			}
		}
		lib, err := openLibrary()
		if err != nil {
			fmt.Fprintf(stderr, "warning: the results library cannot be used (%v): the runs are not kept\n", err)
		}
		tobs := engine.TuneObserver{
			Observer: obs,
			Status: func(s engine.TuneStatus) {
				prog.log(fmt.Sprintf("round %d of %d, %s: %s", s.Round, s.Rounds, s.Setting, s.Doing))
			},
			Saved: func(rf *results.File) string {
				if lib == nil {
					return ""
				}
				id, err := lib.SaveTuneRun(rf)
				if err != nil {
					// Through the progress line's lock: its goroutine
					// redraws the same stderr.
					prog.log("kovara-bench: could not save a run into the library: " + err.Error())
				}
				return id
			},
			SavedReplay: func(r *results.RateResult) string {
				if lib == nil {
					return ""
				}
				id, err := lib.SaveTuneReplay(r)
				if err != nil {
					prog.log("kovara-bench: could not save a replay into the library: " + err.Error())
				}
				return id
			},
			Pause: func(ctx context.Context, s setup.TuneSetting) error { return askByHand(ctx, s, prog) },
		}
		what := engine.DescribePlan(p.Inner)
		if p.Replay != nil {
			what = engine.DescribeTuneReplay(*p.Replay)
		}
		fmt.Fprintf(stderr, "comparing %d settings in %d rounds: %s\n", len(p.Settings), p.Rounds, what)
		prog.start()
		res, err := engine.RunTune(ctx, p, ep, tobs)
		prog.stop()
		return finishTune(res, err, *f, stdout, stderr)
	}, nil
}

// confirmFile shows a settings file's commands and asks before any of
// them runs, unless this machine confirmed the same text before (or
// --yes). Without a terminal to ask on, it refuses.
func confirmFile(tf *storage.TuneFile, yes bool, stderr io.Writer) (bool, int) {
	cmds := tf.Commands()
	if len(cmds) == 0 {
		return true, 0
	}
	dirs, err := storage.DefaultDirs()
	var conf *storage.Confirmations
	if err == nil {
		conf = storage.OpenConfirmations(dirs.Config)
		if conf.Has(tf.Hash) {
			return true, 0
		}
	}
	fmt.Fprintf(stderr, "%s runs these commands on this machine (or through ssh):\n", tf.Path)
	for _, c := range cmds {
		fmt.Fprintf(stderr, "  %s\n", c)
	}
	if !yes {
		if !term.IsTerminal(int(os.Stdin.Fd())) {
			fmt.Fprintf(stderr, "kovara-bench tune: %s has not been confirmed on this machine: read the commands above, then run again with --yes\n", tf.Path)
			return false, exitBadInput
		}
		fmt.Fprint(stderr, "Run them? [y/N] ")
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stderr, "kovara-bench tune: nothing was run")
			return false, exitBadInput
		}
	}
	if conf != nil {
		if err := conf.Add(tf.Hash); err != nil {
			fmt.Fprintf(stderr, "warning: the confirmation could not be kept (%v): it will be asked again\n", err)
		}
	}
	return true, 0
}

// askByHand says what to change and waits for Enter on the terminal.
func askByHand(ctx context.Context, s setup.TuneSetting, prog *progress) error {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return errors.New("a setting changed by hand needs a terminal to press Enter on")
	}
	prog.log(fmt.Sprintf("setting %s: %s, then press Enter", s.Name, s.Instruction))
	done := make(chan struct{})
	go func() {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var finishTune = finishWith(func(r *results.TuneResult) planOutput {
	return planOutput{doc: plans.NewTune(r), print: func(w io.Writer) { printTune(w, r) }}
})

// printTune writes the verdict first, in one sentence, then the table
// and what each setting's server said of itself.
func printTune(w io.Writer, r *results.TuneResult) {
	fmt.Fprintln(w, r.Headline())
	if a := r.AnswersSentence(); a != "" {
		fmt.Fprintln(w, a)
	}
	printHeading(w, fmt.Sprintf("Settings comparison (Kovara Desktop): %d %s, each setting against %s from the rounds' paired differences (%s intervals)",
		r.Plan.Rounds, results.Plural(r.Plan.Rounds, "round", "rounds"), r.Settings[0].Name, r.Plan.ConfidenceWords()), r.Local.Simulated)
	printProblems(w, plans.NewTune(r))
	for _, st := range r.Settings {
		if log := r.Local.Logs[st.Name]; len(log) > 0 {
			fmt.Fprintf(w, "  %s's server, its last lines:\n", st.Name)
			for _, l := range log[max(0, len(log)-12):] {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
	}
	for i, s := range r.Settings {
		line := s.Server.Describe()
		if i < len(r.Local.Commands) && r.Local.Commands[i].Before != "" {
			line = strings.TrimPrefix(line+"; before each turn: "+r.Local.Commands[i].Before, "; ")
		}
		if line != "" {
			fmt.Fprintf(w, "  %s: %s\n", s.Name, line)
		}
	}
	printTable(w, r.Table())
}
