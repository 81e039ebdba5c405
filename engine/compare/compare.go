// Package compare decides how benchmark runs are put side by side: whether
// they were measured under the same conditions (the comparability key of the
// results format), which metrics are shown and which way is better for each,
// how much each value changed against the first run, and the data behind the
// per-user versus total throughput curve. The headless CLI's compare command
// and the GUI's Compare screen both render what this package decides; neither
// makes a comparison decision of its own.
//
// Vocabulary: a results File is one benchmark session and holds one run
// record per concurrency level. Messages speak of files as "run 1", "run 2"…
// in the order they were given, which is the order Order decides: the
// baseline first, then the others oldest to newest.
package compare

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kovara/desktop/engine/results"
)

// Absent is shown for a condition or value the record leaves null or out.
const Absent = "—"

// NullString is a condition the results format allows to be null. Unlike a
// *string it compares by value, so a Key can be compared with == and used
// as a map key.
type NullString struct {
	Value string
	Valid bool
}

func (n NullString) String() string {
	if !n.Valid {
		return Absent
	}
	if n.Value == "" {
		return `""`
	}
	return n.Value
}

// NullInt is an integer condition the results format allows to be null.
type NullInt struct {
	Value int
	Valid bool
}

func (n NullInt) String() string {
	if !n.Valid {
		return Absent
	}
	return strconv.Itoa(n.Value)
}

// Key is a run record's comparability key: the conditions that must all be
// equal for two records' numbers to mean the same thing. Two Keys are equal
// exactly when == says so; null equals null and differs from any value.
type Key struct {
	ModelID       string
	ModelRevision NullString
	Engine        NullString
	EngineVersion NullString
	Accelerator   NullString
	GPUCount      NullInt
	Precision     NullString
	Profile       NullString
	InputTokens   int
	OutputTokens  int
	Concurrency   int
	RunKind       string
}

func nullString(p *string) NullString {
	if p == nil {
		return NullString{}
	}
	return NullString{Value: *p, Valid: true}
}

func nullInt(p *int) NullInt {
	if p == nil {
		return NullInt{}
	}
	return NullInt{Value: *p, Valid: true}
}

// KeyOf returns a record's comparability key.
func KeyOf(r results.Run) Key {
	return Key{
		ModelID:       r.ModelID,
		ModelRevision: nullString(r.ModelRevision),
		Engine:        nullString(r.Engine),
		EngineVersion: nullString(r.EngineVersion),
		Accelerator:   nullString(r.Accelerator),
		GPUCount:      nullInt(r.GPUCount),
		Precision:     nullString(r.Precision),
		Profile:       nullString(r.Profile),
		InputTokens:   r.InputTokens,
		OutputTokens:  r.OutputTokens,
		Concurrency:   r.Concurrency,
		RunKind:       r.RunKind,
	}
}

// Difference is one condition that is not the same everywhere.
type Difference struct {
	Condition string   // stable machine name: the results field, e.g. "engine_version"
	Label     string   // for people, e.g. "engine version"
	Values    []string // one per run compared, Absent for null or missing
}

// workloadCondition names a difference in the requests runs sent
// (local.workload), beside the key's conditions.
const workloadCondition = "workload"

// condition is one field of the key, in the order differences are reported.
type condition struct {
	name, label string
	// value gives the field as shown and as compared; equal strings mean
	// equal values because each field has one spelling per value.
	value func(Key) string
}

func plain(s string) string {
	if s == "" {
		return Absent
	}
	return s
}

var conditions = []condition{
	{"model_id", "model", func(k Key) string { return plain(k.ModelID) }},
	{"model_revision", "model revision", func(k Key) string { return k.ModelRevision.String() }},
	{"engine", "engine", func(k Key) string { return k.Engine.String() }},
	{"engine_version", "engine version", func(k Key) string { return k.EngineVersion.String() }},
	{"accelerator", "accelerator", func(k Key) string { return k.Accelerator.String() }},
	{"gpu_count", "GPU count", func(k Key) string { return k.GPUCount.String() }},
	{"precision", "precision", func(k Key) string { return k.Precision.String() }},
	{"profile", "profile", func(k Key) string { return k.Profile.String() }},
	{"input_tokens", "input tokens", func(k Key) string { return strconv.Itoa(k.InputTokens) }},
	{"output_tokens", "output tokens", func(k Key) string { return strconv.Itoa(k.OutputTokens) }},
	{"concurrency", "concurrency", func(k Key) string { return strconv.Itoa(k.Concurrency) }},
	{"run_kind", "run kind", func(k Key) string { return plain(k.RunKind) }},
}

const concurrencyCondition = "concurrency"

// RunsComparable compares two single records on the whole key, concurrency
// included, and names every condition that differs.
func RunsComparable(a, b results.Run) (bool, []Difference) {
	ka, kb := KeyOf(a), KeyOf(b)
	var diffs []Difference
	for _, c := range conditions {
		va, vb := c.value(ka), c.value(kb)
		if va != vb {
			diffs = append(diffs, Difference{Condition: c.name, Label: c.label, Values: []string{va, vb}})
		}
	}
	return len(diffs) == 0, diffs
}

// Verdict says whether a set of benchmark sessions can be compared, and why
// not when they cannot.
type Verdict struct {
	// Comparable is true when every condition of the key except concurrency
	// is the same in every run, and at least one concurrency level is in
	// all of them.
	Comparable bool
	// Differences name the conditions that make the runs not comparable.
	Differences []Difference
	// Cautions name what differs between the runs beyond the key and
	// changes how far their side by side can be trusted: another number
	// of requests per level, another warmup, a run with problems. Each is
	// one sentence naming the runs, with why it matters. Runs that are
	// comparable with cautions are still comparable, but not cleanly so
	// (Clean).
	Cautions []string
	// Changes say in words, for each run against the baseline, which
	// differences are beyond noise ("Run 2 is slower at concurrency 32:
	// …; the other differences are within noise."; for a run made again
	// like the baseline, "Reproduced" or "Not reproduced: …"), and which
	// runs have no raw samples to tell. Only Compared fills them, from
	// the same decision that colours the table.
	Changes []string
	// Notes are caveats that do not decide comparability but that a careful
	// reader must see: levels only some runs have, differently counted
	// tokens, short answers, incomplete or simulated runs, and each run's
	// own warnings.
	Notes []string

	runs     int      // how many runs were given, for Sentence
	blockers []string // reasons other than a differing condition
	// notReproduced: a run made again like the baseline differs from it
	// beyond noise, which is never good news (Clean).
	notReproduced bool
}

// VerdictOf compares benchmark sessions (one results File each) on their
// shared conditions. Every condition except concurrency must be equal across
// all files; concurrency levels may differ, and only the levels every file
// has compare. A file whose own records disagree on a condition shows all
// its values for it, joined with " / ", and counts as differing. A missing
// (nil) file or one with no records makes the set not comparable.
func VerdictOf(files ...*results.File) Verdict {
	v := Verdict{runs: len(files)}
	if len(files) == 0 {
		v.blockers = append(v.blockers, "there are no runs to compare")
		v.Notes = append(v.Notes, "there are no runs to compare")
		return v
	}

	// Files without records have no conditions to compare: they are set
	// aside from the condition check and stop the verdict on their own.
	var usable []int
	for i, f := range files {
		switch {
		case f == nil:
			msg := fmt.Sprintf("%s is missing", runName(i))
			v.blockers = append(v.blockers, msg)
			v.Notes = append(v.Notes, msg)
		case len(f.Runs) == 0:
			msg := emptyRun(runName(i), f)
			v.blockers = append(v.blockers, msg)
			v.Notes = append(v.Notes, msg)
		default:
			usable = append(usable, i)
		}
	}

	for _, c := range conditions {
		if c.name == concurrencyCondition {
			continue
		}
		values := make([]string, len(files))
		differs := false
		for i, f := range files {
			if f == nil || len(f.Runs) == 0 {
				values[i] = Absent
				continue
			}
			var distinct []string
			for _, r := range f.Runs {
				s := c.value(KeyOf(r))
				if !slices.Contains(distinct, s) {
					distinct = append(distinct, s)
				}
			}
			if len(distinct) > 1 {
				differs = true
			}
			values[i] = strings.Join(distinct, " / ")
		}
		for _, i := range usable {
			if values[i] != values[usable[0]] {
				differs = true
			}
		}
		if differs {
			v.Differences = append(v.Differences, Difference{Condition: c.name, Label: c.label, Values: values})
		}
	}

	// The requests a run sent: a workload (local.workload) is not the
	// method's prompts, and two workloads are not like for like.
	if len(usable) > 0 {
		values := make([]string, len(files))
		differs := false
		for i, f := range files {
			values[i] = Absent
			if f != nil && len(f.Runs) > 0 {
				values[i] = workloadSetting(f.Local.Workload)
			}
		}
		for _, i := range usable {
			differs = differs || values[i] != values[usable[0]]
		}
		if differs {
			v.Differences = append(v.Differences, Difference{Condition: workloadCondition, Label: "requests", Values: values})
		}
	}

	// Concurrency: levels only some runs have are a note; when no level is
	// in every usable run there is nothing left to compare.
	levelSets := make([][]int, len(files))
	for _, i := range usable {
		levelSets[i] = levels(files[i])
	}
	var shared, partial []int
	for _, c := range unionLevels(files) {
		in := 0
		for _, i := range usable {
			if slices.Contains(levelSets[i], c) {
				in++
			}
		}
		if in == len(usable) {
			shared = append(shared, c)
		} else {
			partial = append(partial, c)
		}
	}
	if len(usable) > 0 && len(shared) == 0 {
		values := make([]string, len(files))
		for i := range files {
			values[i] = joinInts(levelSets[i])
		}
		v.Differences = append(v.Differences, Difference{Condition: concurrencyCondition, Label: "concurrency levels", Values: values})
	} else {
		for _, c := range partial {
			var in []int
			for _, i := range usable {
				if slices.Contains(levelSets[i], c) {
					in = append(in, i)
				}
			}
			v.Notes = append(v.Notes, fmt.Sprintf("concurrency %d is only in %s", c, runNames(in)))
		}
	}

	v.Cautions = cautions(files, usable)
	v.Notes = append(v.Notes, caveats(files)...)
	v.Comparable = len(v.Differences) == 0 && len(v.blockers) == 0
	return v
}

// Clean reports whether the runs are comparable with nothing to weigh: two
// or more runs, the same conditions, no caution and no run made again
// like the baseline that did not reproduce it. Only a clean verdict may
// be shown as good news (the success colour); any other is a warning.
func (v Verdict) Clean() bool {
	return v.Comparable && v.runs > 1 && len(v.Cautions) == 0 && !v.notReproduced
}

// Lines are the verdict as shown: the sentence, the changes, then each
// caution.
func (v Verdict) Lines() []string {
	return slices.Concat([]string{v.Sentence()}, v.Changes, v.Cautions)
}

// cautions are the differences a careful reader must weigh although the
// conditions match; files[usable[0]] is the baseline, named last in each
// sentence so the sentence reads "this run did X, the baseline Y".
func cautions(files []*results.File, usable []int) []string {
	var out []string
	if s := spread(files, usable, func(r results.Run) int { return r.Requests }, "measured %s requests per level"); s != "" {
		out = append(out, s+": fewer requests make the tails noisier")
	}
	if s := spread(files, usable, func(r results.Run) int { return r.Warmup }, "sent %s warmup requests"); s != "" {
		out = append(out, s+": a shorter warmup can leave the server's cold start in the first level")
	}
	out = append(out, hardwareCautions(files, usable)...)
	for _, i := range usable {
		problems, _ := results.Split(results.Warnings(files[i]))
		switch n := len(problems); {
		case n == 1:
			out = append(out, runName(i)+" has a problem: read it before trusting its figures")
		case n > 1:
			out = append(out, fmt.Sprintf("%s has %d problems: read them before trusting its figures", runName(i), n))
		}
	}
	return out
}

// spread says how the usable files differ in one per-record number, or ""
// when they all have the same: "run 2 measured 40 requests per level, run
// 1 100". first words the first group (its value in place of %s); the
// baseline's group comes last. A file whose records differ shows each of
// its values, joined with " / ".
func spread(files []*results.File, usable []int, get func(results.Run) int, first string) string {
	type group struct {
		value string
		runs  []int
	}
	var groups []group
	for _, i := range usable {
		var distinct []int
		for _, r := range files[i].Runs {
			if !slices.Contains(distinct, get(r)) {
				distinct = append(distinct, get(r))
			}
		}
		slices.Sort(distinct)
		value := strings.ReplaceAll(joinInts(distinct), ", ", " / ")
		j := slices.IndexFunc(groups, func(g group) bool { return g.value == value })
		if j < 0 {
			groups = append(groups, group{value: value})
			j = len(groups) - 1
		}
		groups[j].runs = append(groups[j].runs, i)
	}
	if len(groups) < 2 {
		return ""
	}
	// The baseline's group was made first: move it to the end.
	groups = append(groups[1:], groups[0])
	parts := make([]string, len(groups))
	for j, g := range groups {
		if j == 0 {
			parts[j] = runNames(g.runs) + " " + fmt.Sprintf(first, g.value)
		} else {
			parts[j] = runNames(g.runs) + " " + g.value
		}
	}
	return strings.Join(parts, ", ")
}

// caveats are the notes about how the numbers were measured.
func caveats(files []*results.File) []string {
	var notes []string

	var simulated []int
	methodRuns := map[string][]int{}
	var methods []string
	for i, f := range files {
		if f == nil || len(f.Runs) == 0 {
			continue
		}
		if f.Local.Simulated {
			simulated = append(simulated, i)
		}
		var fileMethods []string
		for _, r := range f.Runs {
			m := plain(r.Metrics.TokenCountMethod)
			if !slices.Contains(fileMethods, m) {
				fileMethods = append(fileMethods, m)
			}
		}
		m := strings.Join(fileMethods, " / ")
		if _, seen := methodRuns[m]; !seen {
			methods = append(methods, m)
		}
		methodRuns[m] = append(methodRuns[m], i)
	}

	for i, f := range files {
		if f == nil || len(f.Runs) == 0 {
			continue
		}
		// Each run's own warnings, in the words its result shows.
		for _, w := range results.Warnings(f) {
			notes = append(notes, runName(i)+": "+w.Text)
		}
	}
	if len(simulated) > 0 {
		notes = append(notes, fmt.Sprintf("%s %s from the built-in simulator, not a real server",
			runNames(simulated), verb(len(simulated), "comes", "come")))
	}
	if len(methods) > 1 {
		parts := make([]string, len(methods))
		for j, m := range methods {
			parts[j] = fmt.Sprintf("%s in %s", m, runNames(methodRuns[m]))
		}
		notes = append(notes, fmt.Sprintf("output tokens were counted differently (%s), so token figures may not line up exactly",
			strings.Join(parts, ", ")))
	}
	for i, f := range files {
		if f == nil {
			continue
		}
		var off []string
		for _, r := range sortedRuns(f) {
			if mean := r.Metrics.OutputTokensMean; mean != nil && lengthOff(*mean, r.OutputTokens) {
				off = append(off, fmt.Sprintf("%s of %d tokens at concurrency %d",
					strconv.FormatFloat(*mean, 'f', 1, 64), r.OutputTokens, r.Concurrency))
			}
		}
		if len(off) > 0 {
			notes = append(notes, fmt.Sprintf("%s: the mean output length is more than 1 %% off the requested length (%s)",
				runName(i), strings.Join(off, "; ")))
		}
	}
	return notes
}

// LengthTolerance is how far (relative) a record's mean output length may be
// from the requested output tokens before a note says so.
const LengthTolerance = 0.01

func lengthOff(mean float64, requested int) bool {
	if requested <= 0 {
		return false
	}
	want := float64(requested)
	d := mean - want
	if d < 0 {
		d = -d
	}
	return d > LengthTolerance*want
}

// Sentence sums the verdict up in one plain sentence.
func (v Verdict) Sentence() string {
	if v.Comparable {
		switch {
		case v.runs == 1:
			return "There is only one run, so there is nothing to compare it with."
		case len(v.Cautions) > 0:
			return "These runs are comparable on conditions; weigh these differences before trusting the changes."
		}
		return "These runs are comparable."
	}
	if v.runs == 0 && len(v.Differences) == 0 && len(v.blockers) > 0 {
		return "There are no runs to compare."
	}
	var parts []string
	after := ""
	for _, d := range v.Differences {
		vals := strings.Join(d.Values, " vs ")
		switch d.Condition {
		case concurrencyCondition:
			parts = append(parts, fmt.Sprintf("no concurrency level is in every run (%s)", vals))
			continue
		case "run_kind":
			after = " " + runKindWords
		}
		parts = append(parts, fmt.Sprintf("%s differs (%s)", d.Label, vals))
	}
	parts = append(parts, v.blockers...)
	if len(parts) == 0 {
		return "Not comparable."
	}
	return "Not comparable: " + results.JoinAnd(parts) + "." + after
}

// runKindWords says what the run kinds are, after a verdict that names
// them: the words are the results file's, not a person's.
const runKindWords = "(protocol: a protocol test, a run made with no kovara.yaml stating the hardware it ran on; hardware: a run made with one.)"

// levels returns a file's concurrency levels, ascending, each once.
func levels(f *results.File) []int {
	if f == nil {
		return nil
	}
	var out []int
	for _, r := range f.Runs {
		if !slices.Contains(out, r.Concurrency) {
			out = append(out, r.Concurrency)
		}
	}
	slices.Sort(out)
	return out
}

func unionLevels(files []*results.File) []int {
	var out []int
	for _, f := range files {
		for _, c := range levels(f) {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// sortedRuns returns a file's records ordered by concurrency, keeping file
// order among equal levels.
func sortedRuns(f *results.File) []results.Run {
	rs := slices.Clone(f.Runs)
	slices.SortStableFunc(rs, func(a, b results.Run) int { return a.Concurrency - b.Concurrency })
	return rs
}

func joinInts(xs []int) string {
	if len(xs) == 0 {
		return Absent
	}
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func runName(i int) string { return "run " + strconv.Itoa(i+1) }

// emptyRun says why the run called name, with no finished level, has
// nothing to compare: one stopped (or whose server stopped answering)
// in its first level keeps that level as partial, which is shown with
// the run and never compared; otherwise no level was measured at all.
func emptyRun(name string, f *results.File) string {
	if p := f.Local.PartialRun; p != nil {
		return fmt.Sprintf("%s ended during its first level (concurrency %d): nothing finished to compare, and its partial level is shown with the run, never compared", name, p.Concurrency)
	}
	return name + " measured no level, so there is nothing of it to compare"
}

// runNames names zero-based file indexes: "run 2", "runs 1 and 3",
// "runs 1, 2 and 4".
func runNames(idx []int) string {
	if len(idx) == 1 {
		return runName(idx[0])
	}
	s := make([]string, len(idx))
	for j, i := range idx {
		s[j] = strconv.Itoa(i + 1)
	}
	return "runs " + results.JoinAnd(s)
}

func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// HardwareState is one thing a run's hardware did that its speeds
// depend on (issue #50), said of a run in a few words.
type HardwareState struct {
	// Of says it of a run ("slowed itself for 40 % of concurrency 32"),
	// a Kovara run or any other plan's measured windows (a trace's
	// replay in Compare settings); ok is false where the run's server or
	// telemetry did not say.
	Of func(results.Powered) (string, bool)
	// Calm is what Of says of a run where it did not happen.
	Calm string
	// Why is the caution, its %s what each run did.
	Why string
}

// HardwareStates are the things Compare and Compare settings check the
// runs did alike before weighing their speeds (where the model ran is
// said beside each setting in Compare settings, so it is Compare's
// alone: placementState).
var HardwareStates = []HardwareState{
	{ThrottleState, "did not slow itself", "the GPUs did not run alike: %s — a speed difference may be the card slowing itself, not the setting"},
	{SwapState, "did not swap", "the server's machine did not run alike: %s — a speed difference may be its disk, not the setting"},
	{SharedState, "had its cards to itself", "the cards were not the server's alone in every run: %s — a speed difference may be the other programs', not the setting's"},
}

// hardwareCautions say where the runs' hardware did different things
// (issue #50), before any speed is compared: a model split onto the CPU
// in one run and not in another, a GPU that slowed itself, a machine
// that swapped, a card shared with other programs in one run only. Runs
// whose server or telemetry did not say are left out.
func hardwareCautions(files []*results.File, usable []int) []string {
	var out []string
	placed := func(p results.Powered) (string, bool) { return placementState(p.(*results.File)) }
	for _, c := range append([]HardwareState{{Of: placed, Why: "where the server ran the model differs: %s — a speed difference may be the split's, not the setting's"}}, HardwareStates...) {
		var said []string
		seen := map[string]bool{}
		for _, i := range usable {
			if s, ok := c.Of(files[i]); ok {
				said = append(said, runName(i)+" "+s)
				seen[s] = true
			}
		}
		if len(seen) > 1 {
			out = append(out, fmt.Sprintf(c.Why, strings.Join(said, ", ")))
		}
	}
	return out
}

// SwapState is the most a run's server machine swapped in a level, where
// that is a problem (results.SwapProblemBytes): "swapped 1.8 GiB at
// concurrency 1", or "did not swap"; ok is false where nothing read the
// machine's memory.
func SwapState(p results.Powered) (string, bool) {
	known, worst, at := worstWindow(p, func(t *results.Telemetry, key int) (float64, bool) {
		if t.Levels[key].Host == nil {
			return 0, false
		}
		most := 0.0
		for _, fd := range results.HardwareFindings(t, key) {
			if fd.Reason == results.FindingSwap && fd.Severity == results.SeverityProblem {
				most = max(most, fd.MiB)
			}
		}
		return most, true
	})
	switch {
	case !known:
		return "", false
	case worst > 0:
		return fmt.Sprintf("swapped %s at %s", results.BytesWords(worst*(1<<20)), at), true
	}
	return "did not swap", true
}

// SharedState is whether other programs held a share of a run's cards
// that is a problem (results.OtherProgramsProblemShare): "shared GPU 0
// with other programs holding 6.1 GiB", or "had its cards to itself";
// ok is false where the cards' programs were not listed.
func SharedState(p results.Powered) (string, bool) {
	t, _ := p.Power()
	if t == nil || t.GPUProcesses == nil {
		return "", false
	}
	var shared []string
	for _, fd := range results.RunFindings(t) {
		if fd.Reason == results.FindingOtherPrograms && fd.Severity == results.SeverityProblem {
			shared = append(shared, fmt.Sprintf("GPU %d with other programs holding %s", fd.GPU, results.BytesWords(fd.MiB*(1<<20))))
		}
	}
	if len(shared) == 0 {
		return "had its cards to itself", true
	}
	return "shared " + results.JoinAnd(shared), true
}

// placementState is where a run's server put the model, in a few words.
func placementState(f *results.File) (string, bool) {
	d := f.Local.Detection
	if d == nil || d.Placement == nil {
		return "", false
	}
	p := d.Placement
	switch {
	case p.Split() && p.LayersTotal > 0:
		return fmt.Sprintf("ran %d of %d layers on the CPU", p.LayersTotal-p.LayersGPU, p.LayersTotal), true
	case p.Split():
		return fmt.Sprintf("ran %.0f %% of the model on the CPU", p.CPUShare*100), true
	case p.CPUShare >= 1:
		return "ran it all on the CPU", true
	}
	return "ran it all in GPU memory", true
}

// ThrottleState is the longest a run's GPUs slowed themselves in a
// window, in a few words: "slowed itself for 40 % of concurrency 32", or
// "did not slow itself"; ok is false where its telemetry did not say.
func ThrottleState(p results.Powered) (string, bool) {
	known, worst, at := worstWindow(p, func(t *results.Telemetry, key int) (float64, bool) {
		s := t.Levels[key].ThrottledShare
		if s == nil {
			return 0, false
		}
		return *s, true
	})
	switch {
	case !known:
		return "", false
	case worst > results.ThrottleProblemShare:
		return fmt.Sprintf("slowed itself for %.0f %% of %s", worst*100, at), true
	}
	return "did not slow itself", true
}

// worstWindow is the largest of measure over p's measured windows that
// its telemetry read, and the window's name; known is false where
// measure said nothing of any.
func worstWindow(p results.Powered, measure func(t *results.Telemetry, key int) (float64, bool)) (known bool, worst float64, at string) {
	t, _ := p.Power()
	if t == nil {
		return false, 0, ""
	}
	heading, keys := p.EnergyKeys()
	for _, k := range keys {
		if _, ok := t.Levels[k.Key]; !ok {
			continue
		}
		v, ok := measure(t, k.Key)
		if !ok {
			continue
		}
		if !known || v > worst {
			worst, at = v, windowName(heading, k)
		}
		known = true
	}
	return known, worst, at
}

// windowName names a measured window in a sentence: "concurrency 32",
// "offered req/s 2.82".
func windowName(heading string, k results.EnergyKey) string {
	return strings.ToLower(heading[:1]) + heading[1:] + " " + k.Label
}
