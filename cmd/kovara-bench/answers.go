package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/plans"
)

// The answers comparison (docs/method.md §14): `kovara-bench answers`
// and `run --plan answers`, two endpoints or two models of one server.
// Its first line says the figures against the floor; exit 1 when they
// could not be measured, 2 for bad input.

// answersFlags are the answers plan's own flags.
type answersFlags struct {
	against, againstModel string
	positions, prompts    int
	top                   int
}

func (a *answersFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.against, "against", "", "answers: the other setting's endpoint, a saved endpoint's name or an address (default: the baseline's, with --against-model)")
	fs.StringVar(&a.againstModel, "against-model", "", "answers: the other setting's model (default: the only model served)")
	fs.IntVar(&a.positions, "positions", 32, "answers: tokens of each reference answer read")
	fs.IntVar(&a.prompts, "answer-prompts", len(setup.AnswerPrompts), "answers: how many of the fixed prompts ("+setup.AnswerPromptsVersion+")")
	fs.IntVar(&a.top, "top", 20, "answers: the most likely tokens asked at each position")
}

// cmdAnswers is `kovara-bench answers`: run --plan answers with the
// baseline's endpoint required.
func cmdAnswers(args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs, set, code, ok := answersCommand.parse(&f, args, stderr)
	if !ok {
		return code
	}
	switch {
	case f.endpoint == "":
		fmt.Fprintln(stderr, "kovara-bench answers: give the baseline's --endpoint and the other setting's --against (or --against-model of the same server)")
		return exitBadInput
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "kovara-bench answers: unexpected %q\n", fs.Arg(0))
		return exitBadInput
	}
	code, _ = runOtherPlan(f, set, false, stdout, stderr)
	return code
}

// answersRun is the comparison the flags ask for; the other endpoint is
// resolved at the run (a saved endpoint's key from the keyring).
func (f *runFlags) answersRun(set map[string]bool) (engine.AnswersRun, error) {
	a := f.answers
	p := engine.AnswersRun{AnswersPlan: setup.AnswersPlan{Positions: a.positions, Prompts: a.prompts, TopK: a.top},
		Model: f.model, AgainstModel: a.againstModel}
	switch {
	case a.positions < 1 || a.top < 1 || a.prompts < 1 || a.prompts > len(setup.AnswerPrompts):
		return p, fmt.Errorf("--positions and --top must be at least 1, --answer-prompts from 1 to %d", len(setup.AnswerPrompts))
	case a.against == "" && a.againstModel == "" && !f.demo:
		return p, errors.New("give the other setting: --against ENDPOINT, --against-model MODEL, or both")
	}
	if f.demo && a.against == "" && a.againstModel == "" {
		// The demo's two models: the drifted one against the first.
		ms := sim.AnswersDemo().Models
		p.Model, p.AgainstModel = ms[0], ms[1]
	}
	if a.against != "" {
		// Resolved at the run (its key from the keyring); its address
		// stands in for the plan's check.
		p.Against = &setup.Endpoint{URL: a.against}
	}
	p.Timeout = plans.ByID(results.PlanAnswers).Timeout
	if err := f.setTimeout(set, &p.Timeout); err != nil {
		return p, err
	}
	return p, p.Validate()
}

// buildAnswers is the answers plan's builder (planCLIs).
func buildAnswers(f *runFlags, set map[string]bool) (otherPlan, error) {
	p, err := f.answersRun(set)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, ep setup.Endpoint, simulated bool, obs engine.Observer, prog *progress, stdout, stderr io.Writer) int {
		p.Simulated = simulated
		if f.answers.against != "" {
			of := *f
			of.endpoint = f.answers.against
			oep, err := of.resolveEndpoint(stderr)
			if err != nil {
				fmt.Fprintf(stderr, "kovara-bench: --against: %v\n", err)
				return exitBadInput
			}
			p.Against = &oep
		}
		prog.start()
		res, err := engine.RunAnswers(ctx, p, ep, obs)
		prog.stop()
		return finishAnswers(res, err, *f, stdout, stderr)
	}, nil
}

var finishAnswers = finishWith(func(r *results.AnswersResult) planOutput {
	return planOutput{doc: plans.NewAnswers(r), print: func(w io.Writer) { printAnswers(w, r) }}
})

// printAnswers writes the comparison: its first line the figures against
// the floor with the ruler's word, then the table and the notes.
func printAnswers(w io.Writer, r *results.AnswersResult) {
	d := plans.NewAnswers(r)
	fmt.Fprintln(w, r.Headline())
	printHeading(w, "Compare answers (Kovara Desktop): one setting's answer distribution against a baseline's, token by token", r.Local.Simulated)
	printProblems(w, d)
	printTable(w, r.Table())
	for _, n := range d.Notes() {
		fmt.Fprintln(w, "note: "+n)
	}
}
