package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// PlanTune is the plan's name (--plan, the library's index, local.plan).
const PlanTune = "tune"

// TuneDoc is the plan's document kind.
var TuneDoc = localOnlyKind(DocKind[TuneResult]{Format: FormatTune, What: "settings comparison",
	About: "A settings comparison made by Kovara Desktop: the same Kovara plan on each setting of one server, in " +
		"interleaved rounds; each setting against the first from the rounds' paired differences.",
	LocalOnly: "This is a settings comparison (" + FormatTune + "): it names the commands that started your server and is kept on this machine; its runs are ordinary results files, and those can be published one by one."})

// Simulated: the plan ran against the built-in simulator.
func (r *TuneResult) Simulated() bool { return r.Local.Simulated }

// The settings comparison's document, kovara-desktop-tune (docs/plans.md,
// "Compare settings"): two to eight settings of one server, each measured
// by the same Kovara plan in interleaved rounds, the verdict of each
// against the first from the rounds' paired differences, and whether the
// settings' answers to the same prompts at temperature 0 were the same.
// Local only: it names the person's commands, and its runs are in the
// library as ordinary results files, which are the ones to publish.

// FormatTune is a settings comparison (TuneResult).
const FormatTune = "kovara-desktop-tune"

// TuneResult is a settings comparison: the document of kind
// kovara-desktop-tune, format_version 1.
//
// Its header's model is the first setting's.
type TuneResult struct {
	PlanHeader

	Plan     TunePlan      `json:"plan"`
	Settings []TuneSetting `json:"settings"`
	// Runs are every measured run, in the order they ran.
	Runs []TuneRun `json:"runs"`
	// Verdicts are each setting after the first against the first, per
	// level and headline metric.
	Verdicts []TuneVerdict `json:"verdicts"`
	// Answers are each setting's answers to the fixed prompts against the
	// first setting's; empty when the check was not run.
	Answers []TuneAnswers `json:"answers"`
	// DriftNote says why the answers' distributions were not compared
	// (the servers' route is not read); "" when they were, or when no
	// answers were checked.
	DriftNote string    `json:"drift_note,omitempty"`
	Warnings  []string  `json:"warnings"`
	Local     TuneLocal `json:"local"`
}

// TunePlan is what every run measured and how the rounds were judged.
type TunePlan struct {
	Rounds       int   `json:"rounds"`
	Concurrency  []int `json:"concurrency"`
	Requests     int   `json:"requests"`
	InputTokens  int   `json:"input_tokens"`
	OutputTokens int   `json:"output_tokens"`
	// Confidence is each interval's coverage (0.95).
	Confidence float64 `json:"confidence"`
	// Metrics are the judged metrics, in the table's order.
	Metrics []TuneMetric `json:"metrics"`
	// LeastChange is, per metric id, the smallest change called even when
	// its interval excludes none (docs/method.md, "Comparing settings").
	LeastChange map[string]float64 `json:"least_change"`
	// AnswerPrompts names the fixed prompts of the outputs check;
	// AnswerTokens caps each answer.
	AnswerPrompts string `json:"answer_prompts,omitempty"`
	AnswerTokens  int    `json:"answer_tokens,omitempty"`
	// Replay is the trace each run replayed in place of the Kovara
	// plan's levels (Concurrency is then [TuneReplayLevel], and
	// Requests, InputTokens and OutputTokens the trace's); nil when the
	// runs were Kovara plans. The trace's path is in local.trace_file.
	Replay *TuneReplay `json:"replay,omitempty"`
}

// TuneReplay is the trace a settings comparison replayed: how many of
// its requests, how much faster than recorded, and the part of the day
// kept ("" for no bound).
type TuneReplay struct {
	Requests int     `json:"requests"`
	Speed    float64 `json:"speed"`
	From     string  `json:"from,omitempty"`
	To       string  `json:"to,omitempty"`
}

// TuneReplayLevel is the one level of a comparison that replays a trace:
// the trace's own load, not a number of users.
const TuneReplayLevel = 0

// TuneLevelWords names a level in a sentence: "8 users", "the replay".
func TuneLevelWords(c int) string {
	if c == TuneReplayLevel {
		return "the replay"
	}
	return fmt.Sprintf("%d %s", c, Plural(c, "user", "users"))
}

// TuneAtLevel is where a figure was read: "at 8 users", "in the
// replay".
func TuneAtLevel(c int) string {
	if c == TuneReplayLevel {
		return "in the replay"
	}
	return "at " + TuneLevelWords(c)
}

// TuneLevelLabel is a level in a table's Users column: "8", "replay".
func TuneLevelLabel(c int) string {
	if c == TuneReplayLevel {
		return "replay"
	}
	return strconv.Itoa(c)
}

// ConfidenceWords is the intervals' coverage as a percentage ("95 %").
func (p TunePlan) ConfidenceWords() string {
	return strconv.FormatFloat(100*p.Confidence, 'f', -1, 64) + " %"
}

// LeastChangeWords says the least change of each judged metric, those of
// one size together, in the metrics' order: "3 % for output tok/s and
// ITL p50, 10 % for TTFT p95".
func (p TunePlan) LeastChangeWords() string {
	var sizes []float64
	byLeast := map[float64][]string{}
	for _, m := range p.Metrics {
		l, ok := p.LeastChange[m.ID]
		if !ok {
			continue
		}
		if byLeast[l] == nil {
			sizes = append(sizes, l)
		}
		byLeast[l] = append(byLeast[l], m.Label)
	}
	slices.Sort(sizes)
	parts := make([]string, len(sizes))
	for i, l := range sizes {
		parts[i] = percentWords(l) + " for " + JoinAnd(byLeast[l])
	}
	return strings.Join(parts, ", ")
}

// TuneSetting is one setting as it ran. Its command, environment and
// log are in Local: they are the person's own.
type TuneSetting struct {
	Name  string `json:"name"`
	How   string `json:"how"` // "command", "model" or "manual" (setup.ByCommand …)
	Model string `json:"model,omitempty"`
	// Server is what the server said of itself once in this setting (its
	// first run's detection); nil when no run reached it.
	Server *TuneServer `json:"server,omitempty"`
	// Failed is why the setting could not be measured, in words ("the
	// server exited before it answered: …"); "" when it ran.
	Failed string `json:"failed,omitempty"`
	// Rounds is how many of its runs were measured.
	Rounds int `json:"rounds"`
}

// TuneServer is what a server reported of its configuration.
type TuneServer struct {
	Family  string `json:"family,omitempty"`
	Build   string `json:"build,omitempty"`
	Slots   int    `json:"slots,omitempty"`
	Context int    `json:"context,omitempty"`
	// PowerLimitW is the GPUs' power limits summed, as the GPU source
	// read them back at the setting's latest run: what a command before
	// the turn ("sudo nvidia-smi -pl 250") really applied.
	PowerLimitW *float64 `json:"power_limit_w,omitempty"`
	// Placement is where the server put the model (its start-up log, or
	// Ollama's /api/ps), as its runs found it.
	Placement *Placement `json:"placement,omitempty"`
}

// Describe is the report in a few words ("llama.cpp b9749, 8 slots,
// context 4,096").
func (s *TuneServer) Describe() string {
	if s == nil {
		return ""
	}
	context := ""
	if s.Context > 0 {
		context = "context " + Thousands(s.Context) + " tokens"
		if s.Slots > 1 {
			context += " a slot"
		}
	}
	placed := ""
	if p := s.Placement; p != nil {
		switch {
		case p.LayersTotal > 0:
			placed = fmt.Sprintf("%d of %d layers on the GPU", p.LayersGPU, p.LayersTotal)
		case p.NoGPU:
			placed = "no GPU (a CPU build)"
		default:
			placed = fmt.Sprintf("%.0f %% of the model on the CPU", p.CPUShare*100)
		}
	}
	limit := ""
	if s.PowerLimitW != nil {
		limit = fmt.Sprintf("GPU power limit %.0f W", *s.PowerLimitW)
	}
	return listed(
		when(s.Family != "", strings.TrimSpace(FamilyName(s.Family)+" "+s.Build)),
		when(s.Slots > 0, fmt.Sprintf("%d %s", s.Slots, Plural(s.Slots, "slot", "slots"))),
		context, placed, limit)
}

// TuneRun is one measured run of one setting.
type TuneRun struct {
	Setting  int    `json:"setting"`  // index into Settings
	Round    int    `json:"round"`    // 1 …
	Position int    `json:"position"` // 1 … its place in the round
	Seed     int64  `json:"seed,omitempty"`
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
	// RunID is the run's results file in the library, when it was saved.
	RunID  string      `json:"run_id,omitempty"`
	Levels []TuneLevel `json:"levels"`
}

// TuneLevel is one level's headline figures, by metric id.
type TuneLevel struct {
	Concurrency int                `json:"concurrency"`
	Values      map[string]float64 `json:"values"`
}

// Value is the figure of metric id at concurrency c in this run.
func (r *TuneRun) Value(c int, id string) (float64, bool) {
	for _, l := range r.Levels {
		if l.Concurrency == c {
			v, ok := l.Values[id]
			return v, ok
		}
	}
	return 0, false
}

// Verdicts of one setting's metric against the first setting's.
const (
	TuneBetter  = "better"
	TuneWorse   = "worse"
	TuneSame    = "same"    // no difference beyond noise
	TuneUnknown = "unknown" // too few paired rounds to say
)

// TuneVerdict is one setting against the first at one level and metric:
// the change of the rounds' paired ratios and its interval, as fractions
// (0.18 is +18 %).
type TuneVerdict struct {
	Setting     int     `json:"setting"`
	Concurrency int     `json:"concurrency"`
	Metric      string  `json:"metric"`
	Label       string  `json:"label"`
	Unit        string  `json:"unit"`
	HigherBest  bool    `json:"higher_is_better"`
	Rounds      int     `json:"rounds"` // pairs the change is taken from
	Base        float64 `json:"base"`   // the first setting's geometric mean
	Value       float64 `json:"value"`  // this setting's
	Change      float64 `json:"change"`
	Low         float64 `json:"low"`
	High        float64 `json:"high"`
	Verdict     string  `json:"verdict"`
}

// Called says the change is beyond noise.
func (v TuneVerdict) Called() bool { return v.Verdict == TuneBetter || v.Verdict == TuneWorse }

// HalfWidth is half the interval's width, the change this comparison could
// not have told from noise.
func (v TuneVerdict) HalfWidth() float64 { return (v.High - v.Low) / 2 }

// TuneAnswers is one setting's answers against the first setting's.
type TuneAnswers struct {
	Setting int `json:"setting"`
	Prompts int `json:"prompts"` // compared (both answered)
	// Differ are the prompts whose answers differ, each with the token
	// (the stream's chunk) where it first did.
	Differ []TuneAnswerDiff `json:"differ"`
	// Missing counts prompts one of the two did not answer.
	Missing int `json:"missing,omitempty"`
	// Drift is the setting's answer distribution against the first
	// setting's (docs/method.md §14), where the servers allow reading
	// it; nil when it was not measured.
	Drift *TuneDrift `json:"drift,omitempty"`
}

// TuneDrift is one setting's answer distribution against the first
// setting's, token by token of the first setting's answers to the fixed
// prompts, and the first setting read against itself (its floor).
type TuneDrift struct {
	Prompts   string `json:"prompts"` // the prompt set, kovara-answers-v2
	Positions int    `json:"positions"`
	// SameTop and KLMean are the setting's figures, FloorSameTop and
	// FloorKL the first setting's against itself; KLP99 the setting's
	// 99th percentile. KL divergences in nats a token, lower bounds from
	// the servers' top lists.
	SameTop      float64 `json:"same_top"`
	FloorSameTop float64 `json:"floor_same_top"`
	KLMean       float64 `json:"kl_mean"`
	FloorKL      float64 `json:"floor_kl_mean"`
	KLP99        float64 `json:"kl_p99"`
	// SameTopBeyond and KLBeyond say which figures drift beyond the
	// floor; Ruler where the KL stands beside the published marks.
	SameTopBeyond bool   `json:"same_top_beyond"`
	KLBeyond      bool   `json:"kl_beyond"`
	Ruler         string `json:"ruler,omitempty"`
	// Kinds are the setting's figures prompt kind by prompt kind.
	Kinds []TuneDriftKind `json:"kinds,omitempty"`
}

// TuneDriftKind is one prompt kind's figures ("code", "json", …).
type TuneDriftKind struct {
	Kind      string  `json:"kind"`
	Positions int     `json:"positions"`
	SameTop   float64 `json:"same_top"`
	KLMean    float64 `json:"kl_mean"`
}

// KindsWords says the prompt kinds' KL divergences, the furthest first:
// "by prompt: code 3.1e-04, json 1.2e-04, prose 0"; "" without kinds.
func (d *TuneDrift) KindsWords() string {
	if len(d.Kinds) == 0 {
		return ""
	}
	ks := slices.Clone(d.Kinds)
	slices.SortStableFunc(ks, func(a, b TuneDriftKind) int { return cmp.Compare(b.KLMean, a.KLMean) })
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k.Kind + " " + NatsText(k.KLMean)
		if k.SameTop < 1 {
			parts[i] += fmt.Sprintf(" (same top token %.1f %%)", 100*k.SameTop)
		}
	}
	return "KL divergence by prompt: " + strings.Join(parts, ", ")
}

// Words says the drift in one clause, with the floor: "same top token
// 99.2 % (floor 100.0 %), KL divergence 0.0041 nats a token (floor 0):
// beyond the floor on both; about what Q8_0 costs Llama 3 8B (0.0014)".
func (d *TuneDrift) Words() string {
	return fmt.Sprintf("same top token %s (floor %s), KL divergence %s nats a token (floor %s): %s",
		sharePercent(d.SameTop), sharePercent(d.FloorSameTop), NatsText(d.KLMean), NatsText(d.FloorKL), d.judgement())
}

// Brief says the drift as the verdict's first lines do, the figures
// without their floor: "same top token 99.2 %, KL divergence 0.0041 —
// beyond the floor on both; about what Q8_0 costs Llama 3 8B (0.0014)".
func (d *TuneDrift) Brief() string {
	return fmt.Sprintf("same top token %s, KL divergence %s — %s", sharePercent(d.SameTop), NatsText(d.KLMean), d.judgement())
}

// judgement is which figures drift beyond the floor, and where the KL
// divergence stands on the ruler when it does.
func (d *TuneDrift) judgement() string {
	ruler := ""
	if d.Ruler != "" {
		ruler = "; " + d.Ruler
	}
	switch {
	case d.SameTopBeyond && d.KLBeyond:
		return "beyond the floor on both" + ruler
	case d.KLBeyond:
		return "beyond the floor on KL divergence, the top token as often the same" + ruler
	case d.SameTopBeyond:
		return "beyond the floor on the top token" + ruler
	}
	return "within the floor"
}

// sharePercent is a share as a percentage with one decimal ("99.2 %").
func sharePercent(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + " %" }

// NatsText says a KL divergence (nats) with two significant digits, the
// one way every surface writes one: "0", "1.6e-06", "0.0014", "0.031",
// "0.45", "12".
func NatsText(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 0.001:
		return strconv.FormatFloat(v, 'e', 1, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// TuneAnswerDiff is one prompt answered differently.
type TuneAnswerDiff struct {
	Prompt string `json:"prompt"` // the prompt's kind, "code"
	After  int    `json:"after"`  // tokens alike before the first difference
}

// TuneLocal is what stays on this machine.
type TuneLocal struct {
	PlanLocal
	// Commands are the settings' commands, environments and instructions,
	// in the order of Settings.
	Commands []TuneCommand `json:"commands"`
	// Logs are the last lines of each setting's server log when it failed
	// (by setting name).
	Logs map[string][]string `json:"logs,omitempty"`
	// Answers are each setting's answers, by setting then prompt.
	Answers [][]string `json:"answers,omitempty"`
}

// TuneCommand is how one setting was reached.
type TuneCommand struct {
	Command string   `json:"command,omitempty"`
	Env     []string `json:"env,omitempty"`
	SSH     string   `json:"ssh,omitempty"`
	// Before ran before each of its turns, on the server's machine.
	Before string `json:"before,omitempty"`
	// Instruction is what the person was asked to do (by hand).
	Instruction string `json:"instruction,omitempty"`
}

// TuneColumns are the verdict table's headings: the speed's, then the
// answers' (each setting's answer distribution against the first's,
// the same on every row of the setting).
var TuneColumns = []string{"Users", "Metric", "Setting", "Value", "Change", "Interval", "Verdict", "Same top\ntoken %", "KL divergence\n(nats)"}

// Table is the verdict table: per level and metric, every setting's
// figure (the geometric mean of its rounds), and for each after the first
// its change against the first with the interval and the verdict. A
// setting that could not be measured has its row all the same, saying so.
// The last two columns are the setting's answers against the first's
// token by token (TuneDrift): the share of the same top token and the
// mean KL divergence, the first setting's own row its floor (it read
// against itself), Missing where they were not measured.
func (r *TuneResult) Table() Table {
	t := Table{Columns: TuneColumns}
	for _, c := range r.Plan.Concurrency {
		for _, m := range r.Plan.Metrics {
			if !r.hasValue(c, m.ID) {
				continue
			}
			for s := range r.Settings {
				sameTop, kl := r.driftCells(s)
				row := []string{TuneLevelLabel(c), m.Label, r.settingName(s), tuneValue(r.MeanOf(s, c, m.ID), m.Unit), "", "", "", sameTop, kl}
				switch {
				case r.Settings[s].Failed != "" && r.Settings[s].Rounds == 0:
					row[3], row[6] = Missing, "not measured"
				case s == 0:
					row[6] = "baseline"
				default:
					row[4], row[5], row[6] = Missing, Missing, "not compared"
					if v, ok := r.verdict(s, c, m.ID); ok {
						if v.Rounds > 0 {
							row[4] = signedPercent(v.Change)
						}
						switch {
						case v.Verdict == TuneUnknown:
						case v.High-v.Low > 10 && v.Low > 0:
							// Wide, but all of it above no change: the
							// verdict stands, and the near end is what
							// the interval says (a 1,000-fold span beside
							// "worse" read as a contradiction).
							row[5] = "above " + signedPercent(v.Low)
						case v.High-v.Low > 10 && v.High < 0:
							row[5] = "below " + signedPercent(v.High)
						case v.High-v.Low > 10:
							row[5] = "too wide to tell" // a 1,000-fold span says only "run more rounds"
						default:
							row[5] = signedPercent(v.Low) + " … " + signedPercent(v.High)
						}
						row[6] = v.words()
					}
				}
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t
}

// driftCells are setting s's answers' cells of the table: its share of
// the same top token and its mean KL divergence against the first
// setting, or for the first setting its floor, "floor 100.0 %" and
// "floor 0"; Missing where they were not measured.
func (r *TuneResult) driftCells(s int) (sameTop, kl string) {
	if s == 0 {
		for _, a := range r.Answers {
			if a.Drift != nil {
				return "floor " + sharePercent(a.Drift.FloorSameTop), "floor " + NatsText(a.Drift.FloorKL)
			}
		}
		return Missing, Missing
	}
	if d := r.driftOf(s); d != nil {
		return sharePercent(d.SameTop), NatsText(d.KLMean)
	}
	return Missing, Missing
}

// driftOf is setting s's answer distribution against the first
// setting's, nil where it was not measured.
func (r *TuneResult) driftOf(s int) *TuneDrift {
	for _, a := range r.Answers {
		if a.Setting == s {
			return a.Drift
		}
	}
	return nil
}

// TuneMetric names one judged metric.
type TuneMetric struct {
	ID         string `json:"id"`
	Label      string `json:"label"`
	Unit       string `json:"unit"`
	HigherBest bool   `json:"higher_is_better"`
}

// MetricLabel is the metric's label, its id when the plan does not name it.
func (r *TuneResult) MetricLabel(id string) (label, unit string) {
	for _, m := range r.Plan.Metrics {
		if m.ID == id {
			return m.Label, m.Unit
		}
	}
	return id, ""
}

// MeanOf is setting s's geometric mean of metric id at concurrency c over
// its runs, 0 when none has it.
func (r *TuneResult) MeanOf(s, c int, id string) float64 {
	var sum float64
	n := 0
	for i := range r.Runs {
		if r.Runs[i].Setting != s {
			continue
		}
		if v, ok := r.Runs[i].Value(c, id); ok && v > 0 {
			sum += math.Log(v)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}

func (r *TuneResult) hasValue(c int, id string) bool {
	for i := range r.Runs {
		if _, ok := r.Runs[i].Value(c, id); ok {
			return true
		}
	}
	return false
}

func (r *TuneResult) verdict(s, c int, id string) (TuneVerdict, bool) {
	for _, v := range r.Verdicts {
		if v.Setting == s && v.Concurrency == c && v.Metric == id {
			return v, true
		}
	}
	return TuneVerdict{}, false
}

func (r *TuneResult) settingName(i int) string {
	if i >= 0 && i < len(r.Settings) {
		return r.Settings[i].Name
	}
	return "setting " + strconv.Itoa(i+1)
}

// tuneValue is a figure with its unit.
func tuneValue(v float64, unit string) string {
	if v == 0 || math.IsNaN(v) {
		return Missing
	}
	prec := 1
	if unit == "tok/J" || v < 10 {
		prec = 2
	}
	return strings.TrimSpace(strconv.FormatFloat(v, 'f', prec, 64) + " " + unit)
}

func (v TuneVerdict) words() string {
	switch v.Verdict {
	case TuneBetter:
		return "better"
	case TuneWorse:
		return "worse"
	case TuneSame:
		return "no difference beyond noise"
	}
	return "too few rounds"
}

// Headline is the verdict in one sentence or two, as a person says it:
// what each setting changed beyond noise against the first, or that
// nothing did and how small a change could have been seen; and, where
// its answers' distribution was measured, how far it is from the
// first's ("…; answers: same top token 99.2 %, KL divergence 0.0041 —
// beyond the floor on both; about what Q8_0 costs Llama 3 8B (0.0014).").
func (r *TuneResult) Headline() string {
	if len(r.Settings) < 2 {
		return "Nothing was compared."
	}
	var parts []string
	for s := 1; s < len(r.Settings); s++ {
		line := r.settingSentence(s)
		if e := r.energySentence(s); e != "" {
			line += " " + e
		}
		if d := r.driftOf(s); d != nil {
			// Speed and answers together: the two things the comparison
			// was run to find out. Where only the answers' text was
			// checked, AnswersSentence says it after the verdict.
			line = strings.TrimSuffix(line, ".") + "; answers: " + d.Brief() + "."
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, " ")
}

// TuneDefaultRounds is the settings comparison's default number of
// rounds, as the sentences say it: setup.TuneDefaultRounds, which this
// package cannot import (TestTuneDefaultRoundsIsSetups holds the two
// together).
const TuneDefaultRounds = 12

// moreRounds advises more rounds than a comparison ran: up to the
// default where it ran fewer, else beyond what it ran.
func moreRounds(ran int) string {
	if ran < TuneDefaultRounds {
		return fmt.Sprintf("run more rounds (%d is the default)", TuneDefaultRounds)
	}
	return fmt.Sprintf("run more rounds than %d", ran)
}

// settingSentence is one setting against the first.
func (r *TuneResult) settingSentence(s int) string {
	name, base := r.Settings[s].Name, r.Settings[0].Name
	if r.Settings[0].Failed != "" && r.Settings[0].Rounds == 0 {
		return fmt.Sprintf("%s could not be measured, so nothing was compared with it.", base)
	}
	if r.Settings[s].Failed != "" && r.Settings[s].Rounds == 0 {
		return fmt.Sprintf("%s could not be measured: %s", name, r.Settings[s].Failed)
	}
	var rows []TuneVerdict
	levels := map[int]bool{}
	for _, v := range r.Verdicts {
		// Speed only: what it costs per token is energySentence's.
		if v.Setting == s && !energyMetric(v.Metric) {
			rows = append(rows, v)
			levels[v.Concurrency] = true
		}
	}
	if len(rows) == 0 {
		return fmt.Sprintf("%s was not measured against %s.", name, base)
	}
	var called []TuneVerdict
	unknown := 0
	for _, v := range rows {
		if v.Called() {
			called = append(called, v)
		}
		if v.Verdict == TuneUnknown {
			unknown++
		}
	}
	if unknown == len(rows) {
		return fmt.Sprintf("%s against %s: too few rounds to judge (at least 2 of each are needed).", name, base)
	}
	if len(called) == 0 {
		hw := typicalHalfWidth(rows)
		if hw >= 1 {
			// Intervals wider than the figures themselves: too few rounds
			// for this server's noise to tell anything.
			return fmt.Sprintf("%s does not differ from %s beyond noise after %d %s, but the intervals are wider than the figures: this server's runs are too far apart for so few rounds to see any change — %s.",
				name, base, r.Plan.Rounds, Plural(r.Plan.Rounds, "round", "rounds"), moreRounds(r.Plan.Rounds))
		}
		return fmt.Sprintf("%s does not differ from %s beyond noise after %d %s; differences under ~%s cannot be seen on this server — run more rounds to look closer.",
			name, base, r.Plan.Rounds, Plural(r.Plan.Rounds, "round", "rounds"), percentWords(hw))
	}
	better, worse := 0, 0
	for _, v := range called {
		if v.Verdict == TuneBetter {
			better++
		} else {
			worse++
		}
	}
	mixed := better > 0 && worse > 0
	head := fmt.Sprintf("%s is faster than %s: ", name, base)
	switch {
	case mixed:
		head = fmt.Sprintf("%s against %s: ", name, base)
	case worse > 0:
		head = fmt.Sprintf("%s is slower than %s: ", name, base)
	}
	// The changes by level, the most users first (where settings part
	// most), each level's in the table's order (throughput first), at
	// most three a side; the levels where nothing changed come last.
	var clauses []string
	var quiet []int
	cs := slices.Sorted(maps.Keys(levels))
	slices.Reverse(cs)
	for _, c := range cs {
		var good, bad []string
		for _, v := range called {
			if v.Concurrency != c {
				continue
			}
			item := fmt.Sprintf("%s %s (±%s)", v.Label, signedPercent(v.Change), percentWords(v.HalfWidth()))
			if v.Verdict == TuneBetter {
				good = append(good, item)
			} else {
				bad = append(bad, item)
			}
		}
		switch {
		case len(good)+len(bad) == 0:
			quiet = append(quiet, c)
		case mixed:
			var sides []string
			if len(good) > 0 {
				sides = append(sides, "better on "+fewOf(good))
			}
			if len(bad) > 0 {
				sides = append(sides, "worse on "+fewOf(bad))
			}
			clauses = append(clauses, TuneAtLevel(c)+" "+strings.Join(sides, ", "))
		default:
			clauses = append(clauses, TuneAtLevel(c)+" "+fewOf(append(good, bad...)))
		}
	}
	out := head + strings.Join(clauses, "; ")
	switch {
	case len(quiet) == 1:
		out += "; no difference beyond noise " + TuneAtLevel(quiet[0])
	case len(quiet) > 1:
		words := make([]string, len(quiet))
		for i, c := range quiet {
			words[i] = TuneLevelWords(c)
		}
		out += "; no difference beyond noise at " + strings.Join(words, " or ")
	}
	return out + "."
}

// energyMetric: tokens per joule, of the GPUs or at the wall.
func energyMetric(id string) bool { return id == "tokens_per_joule" || id == "wall_tokens_per_joule" }

// energySentence says which of setting s and the first costs less per
// output token (issue #49), from tokens per joule at the wall where the
// runs read a plug (the bill), else the GPUs', at the most users both
// were judged at; "" when neither was measured.
func (r *TuneResult) energySentence(s int) string {
	name, base := r.Settings[s].Name, r.Settings[0].Name
	for _, id := range []string{"wall_tokens_per_joule", "tokens_per_joule"} {
		var at *TuneVerdict
		for i, v := range r.Verdicts {
			if v.Setting == s && v.Metric == id && v.Verdict != TuneUnknown && (at == nil || v.Concurrency > at.Concurrency) {
				at = &r.Verdicts[i]
			}
		}
		if at == nil {
			continue
		}
		where := "at the wall"
		if id == "tokens_per_joule" {
			where = "of the GPUs"
		}
		change := fmt.Sprintf("tokens per joule %s %s (±%s) %s", where, signedPercent(at.Change), percentWords(at.HalfWidth()), TuneAtLevel(at.Concurrency))
		switch {
		case at.Called() && at.Verdict == TuneBetter:
			return fmt.Sprintf("Per token, %s is cheaper to run than %s: %s.", name, base, change)
		case at.Called():
			return fmt.Sprintf("Per token, %s costs more to run than %s: %s.", name, base, change)
		}
		return fmt.Sprintf("Per token, %s and %s cost the same to run within noise (%s).", name, base, change)
	}
	return ""
}

// fewOf lists up to three items and says how many more there are.
func fewOf(items []string) string {
	if len(items) > 3 {
		return strings.Join(items[:3], ", ") + fmt.Sprintf(" and %d more", len(items)-3)
	}
	return JoinAnd(items)
}

// percentWords is a share as a whole percentage when it is over 2 %, else
// with one decimal ("6 %", "1.5 %").
func percentWords(x float64) string {
	x = math.Abs(x) * 100
	if x >= 2 {
		return strconv.FormatFloat(math.Round(x), 'f', 0, 64) + " %"
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + " %"
}

// typicalHalfWidth is the median half-width of the judged rows: how
// close this comparison could look.
func typicalHalfWidth(rows []TuneVerdict) float64 {
	var hw []float64
	for _, v := range rows {
		if v.Verdict != TuneUnknown {
			hw = append(hw, v.HalfWidth())
		}
	}
	if len(hw) == 0 {
		return 0
	}
	slices.Sort(hw)
	return hw[len(hw)/2]
}

// Problems are the settings that could not be measured, runs that
// failed, and runs that did not finish.
func (r *TuneResult) Problems() []string {
	var out []string
	for _, s := range r.Settings {
		switch {
		case s.Failed != "" && s.Rounds > 0:
			out = append(out, fmt.Sprintf("setting %s was measured in %d %s, then failed: %s", s.Name, s.Rounds, Plural(s.Rounds, "round", "rounds"), s.Failed))
		case s.Failed != "":
			out = append(out, fmt.Sprintf("setting %s could not be measured: %s", s.Name, s.Failed))
		}
	}
	for _, run := range r.Runs {
		if run.Error != "" && r.Settings[run.Setting].Failed == "" {
			out = append(out, fmt.Sprintf("%s, round %d: %s", r.settingName(run.Setting), run.Round, run.Error))
		}
	}
	for _, s := range r.Settings {
		if s.Server == nil {
			continue
		}
		if words, problem := s.Server.Placement.Words(s.Server.Family); problem {
			// A split model's speed is the split's, not the setting's.
			out = append(out, fmt.Sprintf("setting %s: %s", s.Name, words))
		}
	}
	return out
}

// AnswersSentence says whether each setting answered the fixed prompts as
// the first did: "Answers: B the same as A in all 10 prompts; C differs
// from A in 3 of 10 prompts (code, json, story), after 41 tokens on
// average." Empty when no check was made.
func (r *TuneResult) AnswersSentence() string {
	if len(r.Answers) == 0 {
		return ""
	}
	var parts []string
	for _, a := range r.Answers {
		name, base := r.settingName(a.Setting), r.settingName(0)
		switch {
		case a.Prompts == 0:
			parts = append(parts, fmt.Sprintf("%s's answers could not be compared with %s's", name, base))
		case len(a.Differ) == 0:
			parts = append(parts, fmt.Sprintf("%s answers the same as %s in all %d prompts", name, base, a.Prompts))
		default:
			var kinds []string
			sum := 0
			for _, d := range a.Differ {
				kinds = append(kinds, d.Prompt)
				sum += d.After
			}
			parts = append(parts, fmt.Sprintf("%s's answers differ from %s's in %d of %d prompts (%s), after %d tokens on average",
				name, base, len(a.Differ), a.Prompts, strings.Join(kinds, ", "), int(math.Round(float64(sum)/float64(len(a.Differ))))))
		}
		if a.Missing > 0 {
			parts[len(parts)-1] += fmt.Sprintf(" (%d %s not answered by both)", a.Missing, Plural(a.Missing, "prompt", "prompts"))
		}
		if a.Drift != nil {
			// The distribution first: how much, not only whether (any
			// two quantisations part somewhere in ten answers).
			parts[len(parts)-1] = fmt.Sprintf("%s against %s token by token: %s — %s", name, base, a.Drift.Words(), parts[len(parts)-1])
		}
	}
	out := "Answers at temperature 0: " + strings.Join(parts, "; ") + "."
	if r.DriftNote != "" {
		out += " Their distributions were not compared token by token: " + r.DriftNote + "."
	}
	return out
}
