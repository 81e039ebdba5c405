package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// The plans beyond the Kovara method: --plan stages (the three-stage plan)
// and --plan specdec (the speculative-decoding mode). Their results are
// their own document kinds, written as a file (-o, or a name with the time
// in the current folder); the library keeps kovara-benchmark-results only.

// Plan names for --plan.
const (
	planKovara   = "kovara"
	planStages   = "stages"
	planSpecDec  = "specdec"
	planCapacity = "capacity"
)

// planFlags are the flags of the plans beyond the Kovara method.
type planFlags struct {
	planName   string
	quick      bool
	users      int
	specDecode string
	note       string
	thinking   string
	capacity   capacityFlags
}

func (f *planFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.planName, "plan", planKovara, "what to run: kovara (the Kovara method), stages (the three-stage plan), specdec (speculative-decoding acceptance) or capacity (how many users at once within a service level)")
	fs.BoolVar(&f.quick, "quick", false, "stages: a short smoke test (128-token answers, 2,000-token prefill); its numbers are not the plan's")
	fs.IntVar(&f.users, "users", engine.DefaultUsers, "stages: users in the many-user stage")
	fs.StringVar(&f.specDecode, "spec-decode", "", "stages, specdec: how speculative decoding is set up on the server, e.g. \"MTP 3\" or \"none\" (for the wiki block)")
	fs.StringVar(&f.note, "note", "", "stages: free text added to the wiki block's bench_note")
	fs.StringVar(&f.thinking, "thinking", "off", "stages, specdec: off (ask the chat template for no thinking) or default (send nothing)")
	f.capacity.register(fs)
}

// runOtherPlan runs --plan stages, specdec or capacity. other is false for the
// Kovara plan, which the caller runs. demo runs against the built-in
// simulator.
func runOtherPlan(f runFlags, set map[string]bool, demo bool, stdout, stderr io.Writer) (code int, other bool) {
	cmd := "run"
	if demo {
		cmd = "demo"
	}
	bad := func(format string, args ...any) (int, bool) {
		fmt.Fprintf(stderr, "kovara-bench %s: %s\n", cmd, fmt.Sprintf(format, args...))
		return exitBadInput, true
	}
	switch f.planName {
	case planKovara:
		for _, name := range []string{"quick", "users", "spec-decode", "note", "thinking"} {
			if set[name] {
				fmt.Fprintf(stderr, "kovara-bench %s: --%s applies to --plan stages or specdec, not to the Kovara method\n", cmd, name)
				return exitBadInput, true
			}
		}
		if name, ok := capacityFlagSet(set); ok {
			return bad("--%s applies to --plan capacity", name)
		}
		return 0, false
	case planStages, planSpecDec, planCapacity:
	default:
		return bad("--plan %q: use kovara, stages, specdec or capacity", f.planName)
	}
	if name, ok := capacityFlagSet(set); ok && f.planName != planCapacity {
		return bad("--%s applies to --plan capacity", name)
	}
	var capPlan engine.CapacityPlan
	if f.planName == planCapacity {
		p, err := f.capacityPlan(set)
		if err != nil {
			return bad("%v", err)
		}
		capPlan = p
	}
	if f.manifest != "" || f.profile != "" {
		return bad("--manifest and --profile apply to the Kovara method only")
	}
	if f.thinking != "off" && f.thinking != "default" {
		return bad("--thinking %q: use off or default", f.thinking)
	}
	var timeout time.Duration
	if set["timeout"] {
		to, err := engine.ParseTimeout(f.timeout)
		if err != nil {
			return bad("--%v", err)
		}
		timeout = to
	}
	for _, name := range []string{"input-tokens", "warmup", "seed"} {
		if set[name] && f.planName != planCapacity {
			return bad("--%s applies to the Kovara method and the capacity plan only", name)
		}
	}

	var ep engine.Endpoint
	simulated := false
	if demo {
		cfg := sim.Demo()
		switch f.planName {
		case planCapacity:
			cfg = sim.CapacityDemo()
		case planSpecDec:
			cfg.SpecDecode = &sim.SpecDecode{DraftTokens: 3, Acceptance: 0.7}
		default:
			// The plan's prompts ask for long answers; the simulated
			// model obliges instead of stopping half way.
			cfg.NaturalStop = func(int64) int { return 1 << 20 }
		}
		srv, url, err := sim.Start(cfg, "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(stderr, "kovara-bench demo: could not start the simulator: %v\n", err)
			return exitFailed, true
		}
		defer srv.Close()
		ep, simulated = engine.Endpoint{Name: "Built-in simulator", URL: url}, true
		fmt.Fprintf(stderr, "demo: the %s plan against the built-in simulator (a vLLM-like fake server, not real hardware)\n", f.planName)
	} else {
		if f.endpoint == "" {
			return bad("give the server with --endpoint, e.g. --endpoint http://192.168.1.10:8000 or the name of a saved endpoint")
		}
		var err error
		if ep, err = f.resolveEndpoint(stderr); err != nil {
			return bad("%v", err)
		}
	}

	ctx, stop := interruptContext()
	defer stop()
	live := engine.NewLive()
	prog := newProgress(stderr, live, f.quiet)
	obs := engine.Observer{Live: live, Log: prog.log}

	if f.planName == planCapacity {
		capPlan.Simulated = simulated
		prog.start()
		res, err := engine.RunCapacity(ctx, capPlan, ep, obs)
		prog.stop()
		return finishCapacity(res, err, f, stdout, stderr), true
	}
	if f.planName == planStages {
		if set["concurrency"] || set["requests"] || set["output-tokens"] {
			return bad("--concurrency, --requests and --output-tokens do not apply to --plan stages (it has fixed stages; see --users and --quick)")
		}
		if f.users < 1 {
			return bad("--users must be at least 1")
		}
		p := engine.DefaultStagesPlan()
		p.Model, p.Users, p.Quick, p.Simulated = f.model, f.users, f.quick, simulated
		p.ServerThinking = f.thinking == "default"
		p.SpecDecode, p.Note = f.specDecode, f.note
		if timeout > 0 {
			p.Timeout = timeout
		}
		prog.start()
		res, err := engine.RunStages(ctx, p, ep, obs)
		prog.stop()
		return finishStages(res, err, f, stdout, stderr), true
	}

	if set["quick"] || set["users"] || set["note"] {
		return bad("--quick, --users and --note apply to --plan stages")
	}
	p := engine.DefaultSpecDecPlan()
	p.Model, p.Simulated, p.SpecDecode = f.model, simulated, f.specDecode
	p.ServerThinking = f.thinking == "default"
	if set["concurrency"] {
		levels, err := engine.ParseLevels(f.concurrency)
		if err != nil {
			return bad("--concurrency %q: %v", f.concurrency, err)
		}
		p.Levels = levels
	}
	if set["requests"] {
		p.Requests = f.requests
	}
	if set["output-tokens"] {
		p.MaxTokens = f.outputTokens
	}
	if timeout > 0 {
		p.Timeout = timeout
	}
	if err := p.Validate(); err != nil {
		return bad("%v", err)
	}
	prog.start()
	res, err := engine.RunSpecDec(ctx, p, ep, obs)
	prog.stop()
	return finishSpecDec(res, err, f, stdout, stderr), true
}

// planExit maps a plan's error to an exit code, having said what it was.
func planExit(err error, stderr io.Writer) (int, bool) {
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, engine.ErrInterrupted):
		fmt.Fprintf(stderr, "stopped: %v\n", err)
		return exitInterrupted, true
	}
	fmt.Fprintf(stderr, "kovara-bench: %v\n", err)
	return exitFor(err), false
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

func finishStages(res *results.StagesResult, err error, f runFlags, stdout, stderr io.Writer) int {
	code, keep := planExit(err, stderr)
	if res == nil || (!keep && len(res.Decode) == 0) {
		return code
	}
	printStages(stdout, res)
	if line := serverLine(res.Local.ServerMetrics); line != "" {
		fmt.Fprintln(stderr, line)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "---- wiki block ----")
	fmt.Fprint(stdout, res.WikiBlock())
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	data, merr := results.MarshalStages(res)
	save := func(l *storage.Library) (string, error) { return l.SaveStages("", res) }
	if merr != nil || !keepPlanResult(f, "stages", data, save, stderr) {
		return exitFailed
	}
	if code == exitOK && len(res.Failed()) > 0 {
		fmt.Fprintf(stderr, "some stages failed: %s\n", strings.Join(res.Failed(), ", "))
		code = exitFailed
	}
	return code
}

func fmtOpt(v *float64, prec int) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// printStages writes the three-stage table.
func printStages(w io.Writer, r *results.StagesResult) {
	head := "Three-stage plan (Kovara Desktop, after the cmp.wiki benchmark protocol)"
	if r.Quick {
		head += " — QUICK RUN, not protocol numbers"
	}
	if r.Local.Simulated {
		head += " — SIMULATOR"
	}
	fmt.Fprintln(w, head)
	eng := results.FamilyName(r.Engine.Family)
	if eng == "" {
		eng = "not recognised"
	}
	if r.Engine.Version != "" {
		eng += " " + r.Engine.Version
	}
	thinking := "thinking at the server default"
	if r.Compat.ThinkingOff {
		thinking = "thinking off"
	}
	fmt.Fprintf(w, "model %s, engine %s, %s\n", r.Model, eng, thinking)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\ttokens\tTTFT ms\ttok/s\t\t")
	for _, d := range r.Decode {
		label := "1 user, " + d.Prompt
		if d.Prompt == "code" {
			label += " (decode_single)"
		}
		if d.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tfailed: %s\t\n", label, d.Error)
			continue
		}
		flag := ""
		if d.Short {
			flag = "short answer"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", label, d.CompletionTokens, fmtOpt(d.TTFTMs, 1), fmtOpt(d.DecodeTPS, 1), flag)
	}
	if p := r.Prefill; p != nil {
		switch {
		case p.Error != "":
			fmt.Fprintf(tw, "cold prefill\t-\t-\t-\tfailed: %s\t\n", p.Error)
		default:
			tokens := "?"
			if p.PromptTokens != nil {
				tokens = strconv.Itoa(*p.PromptTokens)
			}
			fmt.Fprintf(tw, "cold prefill (prefill_tps)\t%s\t%s\t%s\t\t\n", tokens, fmtOpt(p.TTFTMs, 1), fmtOpt(p.PrefillTPS, 0))
		}
	}
	if u := r.Users; u != nil {
		label := fmt.Sprintf("%d users (decode_agg)", u.Users)
		if u.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tfailed: %s\t\n", label, u.Error)
		} else {
			q := ""
			if u.Queued {
				q = "QUEUED"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", label, u.CompletionTokens, fmtOpt(u.TTFTMsMax, 1), fmtOpt(u.AggregateTPS, 1), q)
			fmt.Fprintf(tw, "  per user, mean / min\t\t\t%s / %s\t\t\n", fmtOpt(u.PerUserMeanTPS, 1), fmtOpt(u.PerUserMinTPS, 1))
		}
	}
	tw.Flush()
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
			pct(sp.AcceptanceRate), fmtOpt(sp.MeanAcceptanceLength, 2))
	}
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}

func finishSpecDec(res *results.SpecDecResult, err error, f runFlags, stdout, stderr io.Writer) int {
	code, keep := planExit(err, stderr)
	if res == nil || (!keep && len(res.Levels) == 0) {
		return code
	}
	printSpecDec(stdout, res)
	if line := serverLine(res.Local.ServerMetrics); line != "" {
		fmt.Fprintln(stderr, line)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	data, merr := results.MarshalSpecDec(res)
	save := func(l *storage.Library) (string, error) { return l.SaveSpecDec("", res) }
	if merr != nil || !keepPlanResult(f, "specdec", data, save, stderr) {
		return exitFailed
	}
	if code == exitOK {
		for _, l := range res.Levels {
			if l.OK == 0 {
				code = exitFailed
			}
		}
	}
	return code
}

// printSpecDec writes acceptance per level.
func printSpecDec(w io.Writer, r *results.SpecDecResult) {
	head := "Speculative decoding (representative prompts; not publishable)"
	if r.Local.Simulated {
		head += " — SIMULATOR"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, r.Stops())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "conc\tok/req\tout tok/s\tdecode tok/s\ttokens min/p50/max\tacceptance\tmean length\tper answer p50 [min–max]\tmean length\t")
	perRequest := false
	for _, l := range r.Levels {
		spread := "-"
		if s := l.OutputTokens; s != nil {
			spread = fmt.Sprintf("%d/%s/%d", s.Min, strconv.FormatFloat(s.P50, 'f', -1, 64), s.Max)
		}
		acc, length := "-", "-"
		if sp := l.Spec; sp != nil {
			acc, length = pct(sp.AcceptanceRate), fmtOpt(sp.MeanAcceptanceLength, 2)
		}
		perAcc, perLen := "-", "-"
		if pr := l.PerRequest; pr != nil {
			perRequest = true
			if s := pr.RateSpread; s != nil {
				perAcc = fmt.Sprintf("%s [%s–%s]", pct(&s.P50), pct(&s.Min), pct(&s.Max))
			}
			perLen = fmtOpt(pr.MeanAcceptanceLength, 2)
		}
		fmt.Fprintf(tw, "%d\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Concurrency, l.OK, l.Requests,
			fmtOpt(l.OutputTPS, 1), fmtOpt(l.MeanDecodeTPS, 1), spread, acc, length, perAcc, perLen)
	}
	tw.Flush()
	switch {
	case r.Counters == "":
		fmt.Fprintln(w, "acceptance: the server exposes no speculative-decoding counters")
	default:
		fmt.Fprintf(w, "acceptance = accepted / draft tokens, mean length = 1 + accepted / drafts (%s, before/after each level); tokens counted from %s\n",
			r.Counters, tokenSources(r))
	}
	if perRequest {
		fmt.Fprintln(w, "per answer: each answer's own counts (llama.cpp's timings.draft_n and draft_n_accepted), immune to other traffic on the server")
	}
	for _, l := range r.Levels {
		if sp := l.Spec; sp != nil && len(sp.PerPosition) > 0 {
			var pos []string
			for i, v := range sp.PerPosition {
				pos = append(pos, fmt.Sprintf("%d: %s", i+1, pct(&v)))
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
	return fmt.Sprintf("server /metrics (%s, %d readings): peak %s", results.FamilyName(sm.Family), len(sm.Samples), strings.Join(parts, ", "))
}
