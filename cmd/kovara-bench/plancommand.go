package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// The commands that run plans — run, demo, tune and answers — read into
// one runFlags, and each takes only the flags it reads: its own, and those
// of the plans it runs (planCLIs), so its help lists no flag it would
// refuse and a flag it does not take gets the flag package's error.

// planCommand is a command that runs plans.
type planCommand struct {
	name  string
	usage string // its command line, the first line of its help
	// own are the flags it takes beyond its plans' (runFlags.define's
	// names).
	own []string
	// plans are the ids of the plans it runs.
	plans []string
	// without are its plans' flags it does not take.
	without []string
}

var (
	// endpointFlags are a real server's: where, which model, its key and
	// its power, and the price of that power.
	endpointFlags = []string{"endpoint", "model", "api-key-env", "insecure", "silence", "gpu", "wall", "price-kwh", "currency"}
	// everyPlanFlags are taken by every plan (a plan's entry does not
	// list them).
	everyPlanFlags = []string{"timeout", "o", "quiet"}
)

var (
	runCommand = planCommand{name: "run", usage: "kovara-bench run --endpoint URL [--plan PLAN] [flags]",
		own:   slices.Concat(endpointFlags, everyPlanFlags, []string{"plan", "repeat", "like", "shard", "start-at", "level-every"}),
		plans: plans.IDs()}
	demoCommand = planCommand{name: "demo", usage: "kovara-bench demo [--plan PLAN] [flags]",
		own: slices.Concat(everyPlanFlags, []string{"plan"}), plans: plans.IDs(),
		// A manifest says what a real server runs; the demo's is the
		// simulator.
		without: []string{"manifest", "profile"}}
	tuneCommand = planCommand{name: "tune", usage: "kovara-bench tune [FILE.yaml] --endpoint URL --setting 'NAME=COMMAND' --setting 'NAME=COMMAND' [flags]",
		own: slices.Concat(endpointFlags, everyPlanFlags), plans: []string{results.PlanTune}}
	answersCommand = planCommand{name: "answers", usage: "kovara-bench answers --endpoint A [--against B] [--against-model M] [flags]",
		own: slices.Concat(endpointFlags, everyPlanFlags), plans: []string{results.PlanAnswers}}
)

// flagsOf are the flags of the plan id the command takes.
func (c planCommand) flagsOf(id string) []string {
	return slices.DeleteFunc(slices.Clone(planCLIs[id].flags), func(n string) bool { return slices.Contains(c.without, n) })
}

// flagSet is the command's flags, bound to f: each taken by name from
// runFlags.define, so a flag several commands or plans take has one
// definition.
func (c planCommand) flagSet(f *runFlags) *flag.FlagSet {
	all := flag.NewFlagSet(c.name, flag.ContinueOnError)
	f.define(all)
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	take := func(name string) {
		if fs.Lookup(name) != nil {
			return // shared by two of its plans
		}
		d := all.Lookup(name)
		if d == nil {
			// A name in planCLIs or a command's list that define lacks
			// (TestEveryPlanHasItsFlags).
			panic("kovara-bench " + c.name + ": no flag --" + name)
		}
		fs.Var(d.Value, name, d.Usage)
	}
	for _, n := range c.own {
		take(n)
	}
	for _, id := range c.plans {
		for _, n := range c.flagsOf(id) {
			take(n)
		}
	}
	fs.Usage = func() { c.help(fs) }
	return fs
}

// parse reads args into f as the command takes them, and which flags were
// given by name; ok is false when there is nothing to run: after -h
// (exitOK) or a bad flag (exitBadInput, said already). A command that runs
// one plan runs it without --plan.
func (c planCommand) parse(f *runFlags, args []string, stderr io.Writer) (fs *flag.FlagSet, set map[string]bool, code int, ok bool) {
	fs = c.flagSet(f)
	if len(c.plans) == 1 {
		f.planName = c.plans[0]
	}
	if code, ok := parseFlagsSaying(fs, args, stderr, func(err error) { c.sayPlanOf(err, stderr) }); !ok {
		return fs, nil, code, false
	}
	set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return fs, set, exitOK, true
}

// undefinedFlag is how the flag package begins its error for a flag the
// set does not define, the flag's name after it (flag.FlagSet.Parse).
const undefinedFlag = "flag provided but not defined: -"

// sayPlanOf follows the flag package's error for a flag a one-plan command
// does not define with the plans that take it, when some do: tune --seed
// says that --seed is the Kovara, capacity, context and rate plans'.
func (c planCommand) sayPlanOf(err error, stderr io.Writer) {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok || len(c.plans) != 1 {
		return
	}
	if err := notForPlan(name, c.plans[0]); err != nil {
		fmt.Fprintf(stderr, "kovara-bench %s: %v\n", c.name, err)
	}
}

// help writes the command's help: its command line, its own flags, then
// each of its plans' flags under the plan's heading — a flag two plans
// share described under the first and named under the other.
func (c planCommand) help(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, "Usage: %s\n\nFlags:\n", c.usage)
	printFlags(w, fs, c.own)
	said := map[string]bool{}
	for _, n := range c.own {
		said[n] = true
	}
	for _, k := range plans.All {
		if !slices.Contains(c.plans, k.ID) {
			continue
		}
		var fresh, also []string
		for _, n := range c.flagsOf(k.ID) {
			if said[n] {
				also = append(also, n)
			} else {
				fresh = append(fresh, n)
				said[n] = true
			}
		}
		if len(c.plans) == 1 {
			fmt.Fprintf(w, "\nFlags of the plan it runs (%s):\n", k.Title)
		} else {
			fmt.Fprintf(w, "\nFlags of --plan %s (%s):\n", k.ID, k.Title)
		}
		printFlags(w, fs, fresh)
		if len(also) > 0 {
			slices.Sort(also)
			fmt.Fprintf(w, "  also -%s, described above\n", strings.Join(also, ", -"))
		}
	}
}

// printFlags writes the flags of fs named, as the flag package writes a
// set's (flag.PrintDefaults).
func printFlags(w io.Writer, fs *flag.FlagSet, names []string) {
	some := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	for _, n := range names {
		fl := fs.Lookup(n)
		some.Var(fl.Value, n, fl.Usage)
	}
	some.SetOutput(w)
	some.PrintDefaults()
}
