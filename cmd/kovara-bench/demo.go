package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// cmdDemo runs the default plan against the built-in simulator, in
// process, and writes a results file marked simulated.
func cmdDemo(args []string, stdout, stderr io.Writer) int {
	var f runFlags
	_, set, code, ok := demoCommand.parse(&f, args, stderr)
	if !ok {
		return code
	}
	if f.pngRefused("demo", set, stderr) {
		return exitBadInput
	}
	if code, other := runOtherPlan(f, set, true, stdout, stderr); other {
		return code
	}
	plan, err := f.plan(nil)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench demo: %v\n", err)
		return exitBadInput
	}
	srv, url, err := sim.Start(sim.Demo(), "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench demo: could not start the simulator: %v\n", err)
		return exitFailed
	}
	defer srv.Close()
	plan.Simulated = true
	fmt.Fprintf(stderr, "demo: benchmarking the built-in simulator (a vLLM-like fake server, not real hardware)\n")
	code, _ = benchmark(plan, setup.Endpoint{Name: "Built-in simulator", URL: url}, f, runMarks{}, stdout, stderr)
	return code
}

// cmdSimulate serves the simulator until Ctrl-C.
func cmdSimulate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	cfg := sim.Demo()
	listen := fs.String("listen", "127.0.0.1:8000", "address to listen on")
	personality := fs.String("personality", string(cfg.Personality), "vllm, sglang, llamacpp, ollama or strict")
	model := fs.String("model", cfg.Models[0], "served model id")
	fs.DurationVar(&cfg.TokenInterval, "token-interval", cfg.TokenInterval, "decode interval per sequence at batch size 1")
	fs.Float64Var(&cfg.BatchSlowdown, "batch-slowdown", cfg.BatchSlowdown, "interval growth per extra sequence in the batch")
	fs.Float64Var(&cfg.PrefillRate, "prefill-rate", cfg.PrefillRate, "prompt tokens per second")
	fs.IntVar(&cfg.BatchCapacity, "batch-capacity", cfg.BatchCapacity, "sequences admitted at once; the rest queue")
	fs.Float64Var(&cfg.Jitter, "jitter", cfg.Jitter, "± fraction of random jitter per token interval")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed for jitter and natural stops")
	fs.BoolVar(&cfg.NoUsage, "no-usage", false, "never report token usage")
	fs.BoolVar(&cfg.RecordTruth, "record-truth", false, "keep every request's true timing and serve it at /debug/truth (accuracy checks)")
	specK := fs.Int("spec-draft-tokens", 0, "simulate speculative decoding with this many draft tokens per step (0: off)")
	specP := fs.Float64("spec-acceptance", 0.7, "with --spec-draft-tokens: the chance each draft token is accepted")
	fs.BoolVar(&cfg.RefuseTemplateKwargs, "refuse-template-kwargs", false, "answer 400 to requests that carry chat_template_kwargs")
	fs.IntVar(&cfg.ReasoningTokens, "reasoning-tokens", 0, "begin every answer with this many reasoning tokens unless thinking is turned off")
	fs.IntVar(&cfg.ContextLength, "context-length", 0, "the context it serves, tokens (0: 32768, 4096 as Ollama)")
	fs.Float64Var(&cfg.CPUShare, "cpu-share", 0, "with --personality ollama: the share of the model run on the CPU (0 to 1), as /api/ps says it; a split model decodes slower")
	fs.Float64Var(&cfg.Answers.Drift, "answers-drift", 0, "move the next-token logits the answers measurement reads by this standard deviation, as a quantisation does (0.15: about Q8_0 on Llama 3 8B; 0: the model itself)")
	fs.BoolVar(&cfg.Answers.ChatRestarts, "chat-restarts", false, "answer a chat's final assistant message again from its start instead of continuing it (as llama-server b4748 does)")
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	switch p := sim.Personality(*personality); p {
	case sim.VLLM, sim.SGLang, sim.LlamaCpp, sim.Ollama, sim.Strict:
		cfg.Personality = p
	default:
		fmt.Fprintf(stderr, "kovara-bench simulate: unknown personality %q: use vllm, sglang, llamacpp, ollama or strict\n", *personality)
		return exitBadInput
	}
	if cfg.Answers.Drift < 0 {
		fmt.Fprintln(stderr, "kovara-bench simulate: --answers-drift is a standard deviation of 0 or more, like 0.15")
		return exitBadInput
	}
	cfg.Answers.DriftSeed = 4
	if cfg.CPUShare < 0 || cfg.CPUShare > 1 {
		fmt.Fprintln(stderr, "kovara-bench simulate: --cpu-share is a share from 0 to 1, like 0.38")
		return exitBadInput
	}
	cfg.Models = []string{*model}
	if *specK > 0 {
		cfg.SpecDecode = &sim.SpecDecode{DraftTokens: *specK, Acceptance: *specP}
	}
	// Catch Ctrl-C before saying we are up, so a stop right after the
	// announcement still shuts down cleanly.
	ctx, stop := interruptContext()
	defer stop()
	srv, url, err := sim.Start(cfg, *listen)
	if err != nil {
		fmt.Fprintf(stderr, "kovara-bench simulate: could not listen on %s: %v\n", *listen, err)
		return exitBadInput
	}
	fmt.Fprint(stdout, sim.ServingLine(cfg.Personality, *model, url))
	<-ctx.Done()
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return exitOK
}
