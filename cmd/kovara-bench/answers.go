package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
)

// cmdAnswers compares two settings' answer distributions (docs/method.md
// §14): two endpoints, or two models of one server. Its first line says
// the figures against the floor; exit 1 when they could not be
// measured, 2 for bad input.
func cmdAnswers(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("answers", flag.ContinueOnError)
	var base, other runFlags
	var otherModel string
	var plan engine.AnswersPlan
	fs.StringVar(&base.endpoint, "endpoint", "", "the baseline: a saved endpoint's name, or the server's address")
	fs.StringVar(&base.model, "model", "", "the baseline's model (default: the only model served)")
	fs.StringVar(&other.endpoint, "against", "", "the other setting's endpoint (default: the baseline's, with --against-model)")
	fs.StringVar(&otherModel, "against-model", "", "the other setting's model (default: the only model served)")
	fs.StringVar(&base.apiKeyEnv, "api-key-env", "KOVARA_API_KEY", "environment variable that holds the API key (both endpoints)")
	fs.BoolVar(&base.insecure, "insecure", false, "accept a self-signed or otherwise unverified https certificate")
	fs.IntVar(&plan.Positions, "positions", 32, "tokens of each reference answer read")
	fs.IntVar(&plan.Prompts, "prompts", len(engine.AnswerPrompts), "how many of the fixed prompts")
	fs.IntVar(&plan.TopK, "top", 20, "the most likely tokens asked at each position")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	switch {
	case base.endpoint == "":
		fmt.Fprintln(stderr, "kovara-bench answers: give the baseline's --endpoint and the other setting's --against (or --against-model of the same server)")
		return exitBadInput
	case other.endpoint == "" && otherModel == "":
		fmt.Fprintln(stderr, "kovara-bench answers: give the other setting: --against ENDPOINT, --against-model MODEL, or both")
		return exitBadInput
	case plan.Positions < 1 || plan.Prompts < 1 || plan.Prompts > len(engine.AnswerPrompts) || plan.TopK < 1:
		fmt.Fprintf(stderr, "kovara-bench answers: --positions and --top must be at least 1, --prompts from 1 to %d\n", len(engine.AnswerPrompts))
		return exitBadInput
	}
	if other.endpoint == "" {
		other.endpoint = base.endpoint
	}
	other.apiKeyEnv, other.insecure = base.apiKeyEnv, base.insecure
	bep, err := base.resolveEndpoint(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench answers: %v\n", err)
		return exitBadInput
	}
	oep, err := other.resolveEndpoint(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench answers: --against: %v\n", err)
		return exitBadInput
	}
	ctx, stop := interruptContext()
	defer stop()
	fmt.Fprintf(stderr, "reading %d prompts × %d positions: %d requests (%s)\n", plan.Prompts, plan.Positions, plan.Requests(), engine.AnswerPromptsVersion)
	var last time.Time
	progress := func(done, total int) {
		if *quiet || (time.Since(last) < time.Second && done < total) {
			return
		}
		last = time.Now()
		fmt.Fprintf(stderr, "  %d of %d requests\n", done, total)
	}
	res, err := engine.MeasureAnswers(ctx, engine.AnswersSide{Endpoint: bep, Model: base.model}, engine.AnswersSide{Endpoint: oep, Model: otherModel}, plan, progress)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench answers: %v\n", err)
		if ctx.Err() != nil {
			return exitInterrupted
		}
		var ee *engine.EndpointError
		if errors.As(err, &ee) && ee.Kind != engine.ErrRefused {
			return exitBadInput
		}
		return exitFailed
	}
	fmt.Fprintln(stdout, res.Line())
	fmt.Fprintf(stdout, "%s against %s: %d positions; the baseline's token under the other setting %.1f %% on average (%.1f %% against itself); KL p99 %s nats\n",
		results.ModelName(res.OtherModel), results.ModelName(res.BaseModel), res.Other.Positions, 100*res.Other.RefProb, 100*res.Floor.RefProb, fmt.Sprintf("%.3g", res.Other.KLP99))
	if k := res.Drift().KindsWords(); k != "" {
		fmt.Fprintln(stdout, k)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(stdout, "note: "+n)
	}
	return exitOK
}
