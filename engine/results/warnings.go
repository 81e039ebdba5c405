package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Severity says how much a warning changes what a result means.
type Severity string

const (
	// SeverityProblem: the figures do not describe what the run set out
	// to measure (requests failed, prompts came from a cache, the run
	// stopped). Shown above the result, in the warning colour; a result
	// with one is never "Complete", and publishing it needs a yes.
	SeverityProblem Severity = "problem"
	// SeverityNote: the figures stand, with a caveat worth reading.
	SeverityNote Severity = "note"
)

// Warning kinds, one per thing that can go wrong in a run.
const (
	WarnFailed      = "failed_requests"
	WarnPartial     = "partial_run"
	WarnPromptCache = "prompt_cache"
	WarnCalibration = "calibration"
	WarnIgnoreEOS   = "ignore_eos"
	WarnChunkCounts = "chunk_counts"
	WarnTails       = "missing_tails"
	WarnMerged      = "merged_chunks"
	WarnTelemetry   = "telemetry"
	WarnQueueing    = "queueing"
	WarnRun         = "run" // said by the engine while it ran (Local.Warnings)
	// WarnForeignLoad: another client used the server during a level
	// (local.server_metrics.foreign_load).
	WarnForeignLoad = "foreign_load"
	// WarnPlacement: where the server ran the model (a split model is a
	// problem; a model wholly on the CPU a note).
	WarnPlacement = "placement"
	// WarnCutShort: answers the server ended at its length limit before
	// the max_tokens asked (its context full).
	WarnCutShort = "cut_short"
)

// Warning is one thing a reader of a result must know, in the words every
// surface shows (docs/results-format.md, "Warnings").
type Warning struct {
	Severity Severity
	Kind     string
	Text     string
}

// Warnings is every warning about f, problems first, each computed from
// the file itself so that the CLI, the app, History, Compare, Export and
// validate say the same thing in the same words. The engine's own
// sentences (Local.Warnings) follow as notes.
func Warnings(f *File) []Warning {
	var ws []Warning
	add := func(s Severity, kind, format string, args ...any) {
		ws = append(ws, Warning{Severity: s, Kind: kind, Text: fmt.Sprintf(format, args...)})
	}
	runs := f.Runs
	if f.Local.PartialRun != nil {
		runs = append(slices.Clone(runs), *f.Local.PartialRun)
	}
	if !f.Complete {
		add(SeverityProblem, WarnPartial, "%s", partialText(f))
	}
	for i, r := range runs {
		loc := levelLocal(f, i, r.Concurrency)
		if t := failedText(r, loc); t != "" {
			add(SeverityProblem, WarnFailed, "%s%s", t, endedEarlyWhy(f, loc))
		}
	}
	if t := PromptCacheText(f); t != "" {
		add(SeverityProblem, WarnPromptCache, "%s", t)
	}
	if t, small := calibrationText(f); t != "" {
		sev := SeverityProblem
		if small {
			sev = SeverityNote
		}
		add(sev, WarnCalibration, "%s", t)
	}
	for _, t := range ForeignLoadProblems(f.Local.ServerMetrics) {
		add(SeverityProblem, WarnForeignLoad, "%s", t)
	}
	hwProblems, hwNotes := HardwareSaid(f)
	for _, t := range hwProblems {
		add(SeverityProblem, WarnThrottle, "%s", t)
	}
	for _, t := range hwNotes {
		add(SeverityNote, WarnThrottle, "%s", t)
	}
	if t, problem := f.Local.Detection.PlacementWords(); t != "" {
		sev := SeverityNote
		if problem {
			sev = SeverityProblem
		}
		add(sev, WarnPlacement, "%s", t)
	}
	if t := queueingText(f, runs); t != "" {
		// A capacity search goes past the server's slots on purpose:
		// there it is the answer's why, not a fault of the run.
		sev := SeverityProblem
		if f.Local.Plan == PlanCapacity {
			sev = SeverityNote
		}
		add(sev, WarnQueueing, "%s", t)
	}
	if t := ignoreEOSText(f, runs); t != "" {
		add(SeverityNote, WarnIgnoreEOS, "%s", t)
	}
	if t := cutShortText(f, runs); t != "" {
		add(SeverityNote, WarnCutShort, "%s", t)
	}
	if chunkCounted(runs) {
		add(SeverityNote, WarnChunkCounts, "the server did not report token usage: tokens were counted as stream chunks, and a chunk may hold more than one token")
	}
	if t := tailsText(runs); t != "" {
		add(SeverityNote, WarnTails, "%s", t)
	}
	if t := ITLMergedText(runs); t != "" {
		add(SeverityNote, WarnMerged, "%s", t)
	} else if t := mergedText(f); t != "" {
		add(SeverityNote, WarnMerged, "%s", t)
	}
	for _, t := range workloadNotes(f) {
		add(SeverityNote, WarnWorkload, "%s", t)
	}
	if t := f.Local.Telemetry; t != nil {
		for _, w := range t.Warnings {
			add(SeverityNote, WarnTelemetry, "%s", w)
		}
	}
	for _, w := range f.Local.Warnings {
		if w == f.Local.ServerGone {
			continue // said by the headline and the partial run's problem
		}
		if !derived(w) && !slices.ContainsFunc(ws, func(x Warning) bool { return x.Text == w }) {
			add(SeverityNote, WarnRun, "%s", w)
		}
	}
	return ws
}

// Split parts warnings into problems and notes, keeping their order.
func Split(ws []Warning) (problems, notes []string) {
	for _, w := range ws {
		if w.Severity == SeverityProblem {
			problems = append(problems, w.Text)
		} else {
			notes = append(notes, w.Text)
		}
	}
	return problems, notes
}

// Headline is the one-line state of a result: "Complete." only when it is.
func Headline(f *File, ws []Warning) string {
	h := headline(f, ws)
	if g := GoodputLine(f); g != "" {
		h += " " + g
	}
	if p := f.Local.PrefixCheck.Headline(); p != "" {
		h += " " + p
	}
	return h
}

func headline(f *File, ws []Warning) string {
	problems, _ := Split(ws)
	switch {
	case !f.Complete && f.Local.ServerGone != "":
		kept := "; the finished levels are kept"
		if len(f.Runs) == 0 {
			kept = "; no level had finished"
		}
		if f.Local.PartialRun != nil {
			kept += ", and the one in progress is kept as partial"
		}
		return "Ended early: " + f.Local.ServerGone + kept + "."
	case !f.Complete && f.Local.PartialRun != nil:
		return "Stopped before the end: the finished levels are kept, the interrupted one is shown as partial."
	case !f.Complete && len(f.Runs) == 0:
		return "Stopped before the end: no level finished, and the one in progress was not saved."
	case !f.Complete:
		// A checkpoint: the file as it was after its last finished level,
		// left so by a crash or a closed app.
		return "Stopped before the end: the finished levels are kept; the level in progress was not saved (the app closed or crashed while it ran)."
	case len(problems) == 1:
		return "Finished, with a problem: read it before trusting the figures."
	case len(problems) > 1:
		return fmt.Sprintf("Finished, with %d problems: read them before trusting the figures.", len(problems))
	}
	return "Complete."
}

// levelLocal is the local detail of the i-th run record (the partial one
// last): local.levels lists them in the same order, and a capacity
// document probes a concurrency more than once, so the index decides
// first; a file whose lists do not line up is matched by concurrency.
func levelLocal(f *File, i, concurrency int) *LevelLocal {
	if i >= 0 && i < len(f.Local.Levels) && f.Local.Levels[i].Concurrency == concurrency {
		return &f.Local.Levels[i]
	}
	for i := range f.Local.Levels {
		if f.Local.Levels[i].Concurrency == concurrency {
			return &f.Local.Levels[i]
		}
	}
	return nil
}

func partialText(f *File) string {
	done := make([]string, 0, len(f.Runs))
	for _, r := range f.Runs {
		done = append(done, strconv.Itoa(r.Concurrency))
	}
	t := "the run stopped before the end"
	if f.Local.ServerGone != "" {
		t = "the run ended early because the server stopped answering"
	}
	if len(done) > 0 {
		t += fmt.Sprintf(": concurrency %s finished", strings.Join(done, ", "))
	} else {
		t += ": no level finished"
	}
	if p := f.Local.PartialRun; p != nil {
		t += fmt.Sprintf("; the interrupted level (concurrency %d) is kept apart as partial", p.Concurrency)
	} else {
		t += "; the level in progress was not saved"
	}
	return t + "; an incomplete run cannot be published"
}

// failedText says how many of a level's requests failed and how, or "".
func failedText(r Run, loc *LevelLocal) string {
	m := r.Metrics
	failed := m.RequestsError + m.RequestsTimeout
	if failed == 0 {
		return ""
	}
	total := failed + m.RequestsOK
	how := ""
	if loc != nil && len(loc.Errors) > 0 {
		how = " (" + ErrorClasses(loc.Errors) + ")"
	} else if m.RequestsTimeout > 0 {
		how = fmt.Sprintf(" (%d timed out)", m.RequestsTimeout)
	}
	if m.RequestsOK == 0 {
		return fmt.Sprintf("all %d requests failed at concurrency %d%s: the level has no figures", total, r.Concurrency, how)
	}
	return fmt.Sprintf("%d of %d requests failed at concurrency %d%s; the figures describe the %d that succeeded",
		failed, total, r.Concurrency, how, m.RequestsOK)
}

// endedEarlyWhy says why a family's server ends a stream unfinished,
// where we know: Ollama 0.24.0 stops a prediction when the model repeats
// one token more than 30 times and closes the stream without a
// finish_reason or [DONE] (its llm/server.go; seen on a real server).
func endedEarlyWhy(f *File, loc *LevelLocal) string {
	if loc == nil || loc.Errors["ended_early"] == 0 || f.Local.Detection == nil || f.Local.Detection.Family != FamilyOllama {
		return ""
	}
	return "; Ollama ends a stream like this when the model repeats one token more than 30 times in a row (its token repeat limit), so the model is likely looping"
}

// ErrorClasses lists error counts by class, most first: "connection: 42,
// HTTP 503: 3".
func ErrorClasses(errs map[string]int) string {
	var parts []string
	for _, c := range byCount(errs) {
		parts = append(parts, ClassName(c.class)+": "+strconv.Itoa(c.n))
	}
	return strings.Join(parts, ", ")
}

type classCount struct {
	class string
	n     int
}

// byCount is a level's error classes, most first, then by name.
func byCount(errs map[string]int) []classCount {
	var all []classCount
	for k, n := range errs {
		if n > 0 {
			all = append(all, classCount{k, n})
		}
	}
	slices.SortFunc(all, func(a, b classCount) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return strings.Compare(a.class, b.class)
	})
	return all
}

// ClassName is an error class for people: "http_503" is "HTTP 503".
func ClassName(class string) string {
	if code, ok := strings.CutPrefix(class, "http_"); ok {
		return "HTTP " + code
	}
	switch class {
	case "empty_completion":
		return "empty answer"
	case "error_event":
		return "error in the stream"
	}
	return strings.ReplaceAll(class, "_", " ")
}

// PromptCacheText says that a level's TTFT came partly from the server's
// prompt cache beyond what every request of the method shares by design,
// how the server said so and what to do, or "".
func PromptCacheText(f *File) string {
	l, beyond := promptCacheLevel(f)
	if l == nil {
		return ""
	}
	c, pc := l.Concurrency, l.PromptCache
	how := "the server's own count per request, " + pc.Source
	switch pc.Source {
	case CacheFromMetrics:
		how = "the server-wide counters " + pc.Metrics + ", so other traffic would count too"
	case CacheFromPromptN:
		how = "the server's own count per request: its usage.prompt_tokens less the timings.prompt_n it evaluated"
	case "":
		how = "as the server reported it"
	}
	what := fmt.Sprintf("at concurrency %d the server took %.0f%% of the prompt tokens (%d of %d) from its prompt cache",
		c, 100*pc.Share(), pc.CachedTokens, pc.PromptTokens)
	if s := pc.SharedTokens; s != nil && *s > 0 {
		what += fmt.Sprintf(", %.0f%% beyond the %d %s per request that every request shares by design (the chat template and the method's instruction)",
			100*beyond, *s, Plural(*s, "token", "tokens"))
	}
	advice := "these prompts were new to this run, yet the server reused more of them than the template and instruction they all start with: another client may have sent the same prompts, or its cache matches more than the start of a prompt"
	if !f.Local.FreshSeed && len(f.Runs) > 0 {
		advice = fmt.Sprintf("the seed was fixed (--seed %d) and the server had seen these prompts before; leave the seed out for new prompts each run", f.Runs[0].Seed)
	}
	family := ""
	if d := f.Local.Detection; d != nil {
		family = d.Family
	}
	return fmt.Sprintf("%s (%s): TTFT there measures cache hits, not a cold prefill; %s; %s", what, how, advice, CacheFix(family))
}

// CacheFix is what a family's server does with prompts it has seen and
// the setting that turns it off, in a person's words (flags as each
// server's own help names them).
func CacheFix(family string) string {
	switch family {
	case FamilyLlamaCpp:
		return "llama-server reuses the start of prompts it has seen: each slot keeps its last prompt (unless a request sends cache_prompt: false), --cache-reuse N also reuses matching pieces of at least N tokens (off unless set), and newer builds keep finished prompts in memory too (--cache-ram N, in MiB; --cache-ram 0 turns that off)"
	case FamilyVLLM:
		return "vLLM reuses the start of prompts it has seen (automatic prefix caching, on by default since its V1 engine): start it with --no-enable-prefix-caching to measure cold prefills"
	case FamilySGLang:
		return "SGLang reuses any start of a prompt it has seen (its radix cache, on by default): start it with --disable-radix-cache to measure cold prefills"
	case FamilyOllama:
		return "Ollama reuses the start of a prompt within a loaded model and documents no setting to turn that off"
	}
	return "check the server's prompt-cache settings"
}

func calibrationText(f *File) (text string, small bool) {
	cal := f.Local.Calibration
	if cal == nil || cal.Converged || (f.Local.Compat != nil && !f.Local.Compat.Usage) {
		return "", false
	}
	if cal.PromptTokens == nil {
		return fmt.Sprintf("prompt calibration failed: the prompts (%d words) were never measured against the %d tokens asked for", cal.Words, cal.TargetTokens), false
	}
	got, want := *cal.PromptTokens, cal.TargetTokens
	miss := 0.0
	if want > 0 {
		miss = float64(got-want) / float64(want)
	}
	if math.Abs(miss) <= CalibrationNoteMiss {
		// A prompt a few tokens off moves TTFT and prefill by as
		// little: the figures hold, for the length said.
		return fmt.Sprintf("prompts are about %d tokens against the %d asked for (%+.1f %%), outside the method's 1 %% after %d calibration %s: the figures are for prompts of that length",
			got, want, 100*miss, len(cal.Attempts), Plural(len(cal.Attempts), "request", "requests")), true
	}
	return fmt.Sprintf("prompt calibration did not converge in %d %s: prompts are about %d tokens against the %d asked for (%+.1f %%)",
		len(cal.Attempts), Plural(len(cal.Attempts), "request", "requests"), got, want, 100*miss), false
}

// CalibrationNoteMiss is how far a prompt's length may miss its target and
// be a note, not a problem: a prompt 2 % short moves TTFT by about as
// much, within a run's own noise, and it is not a figure made wrong.
const CalibrationNoteMiss = 0.05

func ignoreEOSText(f *File, runs []Run) string {
	if c := f.Local.Compat; c != nil && !c.IgnoreEOS {
		out := 0
		if len(runs) > 0 {
			out = runs[0].OutputTokens
		}
		return fmt.Sprintf("the server refused ignore_eos, the setting that asks for answers of exactly the requested length: answers may stop before %d tokens, so throughput is less comparable", out)
	}
	var short []string
	for _, r := range runs {
		if h := r.Environment.IgnoreEOSHonoured; h != nil && !*h && !slices.Contains(short, strconv.Itoa(r.Concurrency)) {
			short = append(short, strconv.Itoa(r.Concurrency))
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("at concurrency %s the server ignored ignore_eos, the setting that asks for answers of exactly the requested length: some answers stopped before %d tokens, so throughput is less comparable",
		strings.Join(short, ", "), runs[0].OutputTokens)
}

func chunkCounted(runs []Run) bool {
	return slices.ContainsFunc(runs, func(r Run) bool { return r.Metrics.TokenCountMethod == TokenCountStreamChunks })
}

// tailsText names the levels whose p95 or p99 is missing for lack of
// successes, or "".
func tailsText(runs []Run) string {
	var no95, no99 []string
	asked := 0
	for _, r := range runs {
		d := r.Metrics.TTFTMs
		if d == nil || d.N == 0 {
			continue // no success: failedText says so
		}
		c := strconv.Itoa(r.Concurrency)
		switch {
		case d.P95 == nil && !slices.Contains(no95, c):
			no95 = append(no95, c)
		case d.P95 != nil && d.P99 == nil && !slices.Contains(no99, c):
			no99 = append(no99, c)
		}
		asked = max(asked, r.Requests)
	}
	// A plan of fewer requests than a percentile needs is said as such:
	// the "—" is the plan's size, not a fault of the server.
	var why95, why99 string
	if asked < MinP95 {
		why95 = fmt.Sprintf("; the plan asks %d a level", asked)
	}
	if asked < MinP99 {
		why99 = fmt.Sprintf("; the plan asks %d a level, so ask %d or more for a p99", asked, MinP99)
	}
	var parts []string
	if len(no95) > 0 {
		parts = append(parts, fmt.Sprintf("p95 and p99 are missing at concurrency %s (a percentile needs %d successes for p95 and %d for p99%s)", JoinAnd(no95), MinP95, MinP99, why95))
	}
	if len(no99) > 0 {
		parts = append(parts, fmt.Sprintf("p99 is missing at concurrency %s (fewer than %d successes%s)", JoinAnd(no99), MinP99, why99))
	}
	return strings.Join(parts, "; ")
}

// MergedWarnShare is the share of a level's token gaps read together with
// the chunk before them (0 ms) above which its ITL is warned about: below
// it, a few late reads on a busy client; above it, the low end of the ITL
// distribution is the client's or the server's batching, not the decode.
// MergedWarnMin merged gaps at least make the share worth a warning; a
// short level's few late reads say nothing about the client.
const (
	MergedWarnShare = 0.05
	MergedWarnMin   = 100
)

// mergedText names the level with the largest share of chunks read
// together, when any level passed MergedWarnShare, or "".
func mergedText(f *File) string {
	worst, share := 0, 0.0
	var l LevelLocal
	for _, x := range f.Local.Levels {
		if x.Gaps == 0 || x.MergedGaps < MergedWarnMin {
			continue
		}
		if s := float64(x.MergedGaps) / float64(x.Gaps); s > MergedWarnShare && s > share {
			worst, share, l = x.Concurrency, s, x
		}
	}
	if share == 0 {
		return ""
	}
	return fmt.Sprintf("at concurrency %d, %.0f%% of the gaps between tokens (%d of %d) were two chunks read from the socket together (the client read late, or the server sent them at once): each such gap counts as 0 ms, so the low end of ITL (inter-token latency) there is not the model's decode pace",
		worst, 100*share, l.MergedGaps, l.Gaps)
}

// ITLMergedText names the ITL percentiles shown as "—" because they
// fall among chunks read together (ITLAt), or "": "ITL p50 at
// concurrency 1 and 8 is —: …".
func ITLMergedText(runs []Run) string {
	var parts []string
	for _, q := range []int{50, 95, 99} {
		var at []string
		for _, r := range runs {
			if _, ok := r.Metrics.ITLMs.At(q); !ok {
				continue
			}
			if _, ok := ITLAt(r.Metrics.ITLMs, q); !ok && !slices.Contains(at, strconv.Itoa(r.Concurrency)) {
				at = append(at, strconv.Itoa(r.Concurrency))
			}
		}
		if len(at) > 0 {
			parts = append(parts, fmt.Sprintf("ITL p%d at concurrency %s", q, JoinAnd(at)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: shown as %s, not 0.0 ms — that share of the gaps between tokens were chunks that came off the socket together (the server sent its tokens in groups, or the client read late), so the percentile is no gap the model took; TPOT (the time per token over the whole answer) still says its pace",
		strings.Join(parts, ", "), Missing)
}

// derived tells the engine's sentences that Warnings now computes from the
// file itself, so that files saved before it are not warned twice.
func derived(w string) bool {
	for _, p := range []string{
		"prompt calibration did not converge",
		"the server refused ignore_eos",
		"the server does not report token usage",
	} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return strings.HasPrefix(w, "at concurrency ") &&
		(strings.Contains(w, "from its prompt cache") || strings.HasSuffix(w, "no request succeeded"))
}

// ErrorDetails is each level's failures grouped by class, most first, with
// the first message the class recorded: "at concurrency 8, connection ×42:
// 127.0.0.1:8080 closed …". Nothing for a run without failures.
func ErrorDetails(f *File) []string {
	var out []string
	for _, l := range f.Local.Levels {
		for _, c := range byCount(l.Errors) {
			line := fmt.Sprintf("at concurrency %d, %s ×%d", l.Concurrency, ClassName(c.class), c.n)
			if msgs := l.Messages[c.class]; len(msgs) > 0 {
				line += ": " + msgs[0]
			}
			out = append(out, line)
		}
	}
	return out
}

// cutShortText says which levels' answers the server ended at a length
// limit before the max_tokens asked (finish_reason "length", from the
// raw samples): its context, or a slot's share of it, filled first, so
// those answers are shorter than the plan's for the server's sake.
func cutShortText(f *File, runs []Run) string {
	var parts []string
	for i, r := range runs {
		loc := levelLocal(f, i, r.Concurrency)
		if loc == nil || loc.Samples == nil {
			continue
		}
		cut, all := 0, 0
		for _, q := range loc.Samples.Requests {
			if q.OK() {
				all++
				if q.CutShort {
					cut++
				}
			}
		}
		if cut > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d at concurrency %d", cut, all, r.Concurrency))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("answers the server ended at its length limit before the %d tokens asked (%s): its context, or each slot's share of it (-c over -np on llama-server, num_ctx on Ollama), filled first — give it more context per slot, or ask for shorter answers",
		runs[0].OutputTokens, strings.Join(parts, ", "))
}
