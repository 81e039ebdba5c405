package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/plans"
)

// --plan context: prefill and decode speed against context depth, cold
// and with a cached follow-up turn (docs/plans.md).

// contextFlags are the context plan's own flags.
type contextFlags struct {
	depths  string
	repeats int
}

func (c *contextFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.depths, "depths", "", "context: the cold prompts' lengths in tokens, like 1k,8k,32k (the short prompt, 0, is always measured first: deeper prefill is measured above it; default: 0, then doubling from 1k to the deepest the server's context holds)")
	fs.IntVar(&c.repeats, "repeats", setup.DefaultContextRepeats, "context: conversations per user at each depth, for the spread of each figure")
}

// contextPlan is the context plan the flags ask for: --depths, --repeats,
// --users (1 unless given), --output-tokens (128 unless given), --seed
// (a fresh one unless given), --timeout and --model.
func (f *runFlags) contextPlan(set map[string]bool) (setup.ContextPlan, error) {
	p := setup.DefaultContextPlan()
	p.Model, p.Repeats = f.model, f.context.repeats
	if set["depths"] {
		d, err := engine.ParseDepths(f.context.depths)
		if err != nil {
			return p, fmt.Errorf("--depths %q: %w", f.context.depths, err)
		}
		p.Depths = d
	}
	if set["users"] {
		if f.users < 1 {
			return p, fmt.Errorf("--users %d: give at least 1 user", f.users)
		}
		p.Users = f.users
	}
	setIfGiven(set, "output-tokens", &p.OutputTokens, f.outputTokens)
	if set["repeats"] && f.context.repeats < 1 {
		return p, fmt.Errorf("--repeats %d: give at least 1", f.context.repeats)
	}
	if err := f.setSeedTimeout(set, &p.Seed, &p.FixedSeed, &p.Timeout); err != nil {
		return p, err
	}
	return p, p.Validate()
}

var finishContext = finishWith(func(r *results.ContextResult) planOutput {
	return planOutput{doc: plans.NewContext(r), server: r.Local.ServerMetrics, warnings: r.Warnings,
		last: r.Headline(), print: func(w io.Writer) { printContext(w, r) }}
})

// printContext writes the table of depths and how it was made.
func printContext(w io.Writer, r *results.ContextResult) {
	printHeading(w, "Context plan (Kovara Desktop): prefill and decode speed against context depth, cold and cached", r.Local.Simulated)
	ctx := "context not reported"
	if r.Engine.ContextLength > 0 {
		ctx = fmt.Sprintf("context %d tokens (%s)", r.Engine.ContextLength, r.Engine.ContextSource)
	}
	s := r.Settings
	fmt.Fprintf(w, "model %s, engine %s, %s; %d-token answers, %d %s × %d %s a depth\n", r.Model, engineWords(r.Engine), ctx, s.OutputTokens,
		s.Users, results.Plural(s.Users, "user", "users"), s.Repeats, results.Plural(s.Repeats, "repeat", "repeats"))
	printProblems(w, plans.NewContext(r))
	printTable(w, r.Table())
	fmt.Fprintln(w, r.Method())
	if n := r.TimerNote(); n != "" {
		fmt.Fprintln(w, n)
	}
	fmt.Fprintln(w, r.PromptsLine())
}
