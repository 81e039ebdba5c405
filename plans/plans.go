// Package plans holds the plan kinds, each registered once: its names,
// its document's format and decoding, its defaults, the one rule for
// whether its result failed or has problems, its History summary, its
// comparison and its demo simulator. The CLI, the app and the library
// loop over All; what stays per plan above this package is its flags, its
// form and its result view.
package plans

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// Kind is one plan.
type Kind struct {
	// ID is the plan's name everywhere below the screens: --plan, the
	// library's index, a document's local.plan (results.Plan*).
	ID string
	// Title is the plan as the app offers it.
	Title string
	// Results names a kind's documents in a sentence ("three-stage
	// results").
	Results string
	// RunKinds are the kinds of run History tells apart for it, each
	// with its name: a Kovara run is a hardware or a protocol run.
	RunKinds []RunKind
	// Timeout is the per-request timeout its form and flags start from.
	Timeout time.Duration
	// Demo is the simulator its demo runs against, in the app and the
	// CLI alike.
	Demo func() sim.Config
	// Publishable: its documents can be published as Kovara records.
	Publishable bool
	// Repeatable: Repeat (and --repeat) runs it several times as one
	// group.
	Repeatable bool
	// Shardable: one run of it can be measured from several client
	// machines (run --shard, merge).
	Shardable bool
	// Streamless, for a plan whose requests stream no tokens, is what
	// the live view says in place of its token charts.
	Streamless string
	// StopKeeps says what Stop keeps of a run of the kind, as a clause
	// ("" for the levels' rule, StopKeepsLevels).
	StopKeeps string

	doc docKind
	// compare sets two to four documents of the kind side by side; nil
	// for the Kovara method, whose comparison judges noise from raw
	// samples (engine/compare.Compared) and has its own screen.
	compare func(docs []Doc, labels []string) Comparison
}

// StopKeepsLevels is what Stop keeps of a plan run level by level.
const StopKeepsLevels = "finished levels are kept in the history, the level in progress is kept as a partial measurement"

// Stopped says what Stop keeps of a run of k, as a clause.
func (k *Kind) Stopped() string {
	if k.StopKeeps != "" {
		return k.StopKeeps
	}
	return StopKeepsLevels
}

// RunKind is one kind of run History lists and filters by.
type RunKind struct{ Kind, Name string }

// All are the plans, in the order the app offers them.
var All = []*Kind{kovaraKind, stagesKind, specDecKind, capacityKind, contextKind, rateKind, tuneKind, answersKind}

// KovaraMethod is the Kovara method, the default plan and the only
// publishable one.
var KovaraMethod = kovaraKind

// ByID is the plan of this name (results.Plan*), or nil.
func ByID(id string) *Kind {
	for _, k := range All {
		if k.ID == id {
			return k
		}
	}
	return nil
}

// ByTitle is the plan the app offers under this title, or nil.
func ByTitle(title string) *Kind {
	for _, k := range All {
		if k.Title == title {
			return k
		}
	}
	return nil
}

// IDs are the plans' names, for a flag's help and its refusal.
func IDs() []string {
	var out []string
	for _, k := range All {
		out = append(out, k.ID)
	}
	return out
}

// Titles are the plans as the app offers them.
func Titles() []string {
	var out []string
	for _, k := range All {
		out = append(out, k.Title)
	}
	return out
}

// Doc is one document of a plan: a Kovara results file or one of the
// other plans' results.
type Doc interface {
	Kind() *Kind
	Model() string
	CreatedAt() string
	Complete() bool
	Simulated() bool
	// Headline is what the result found, in one line.
	Headline() string
	// Problems are what went wrong, in words, said first wherever the
	// result is shown; History counts them and Export asks before saving
	// such a run for publishing.
	Problems() []string
	// Failed: part of what the plan was asked to measure gave no answer
	// (a level, stage or depth without one success; capacity: not even
	// one user within the service level). The CLI exits 1. Every failure
	// is also among the problems.
	Failed() bool
	// Measured: the result holds something measured (a level, stage,
	// depth, rate, probe or run), so it is worth keeping even when the run
	// ended on an error; nothing is kept where it holds none.
	Measured() bool
	// Notes are what the result says beside its table that is not a
	// problem (a warning to read, how a figure was made), each once and
	// none of the problems again: the app's view, the CLI and the shared
	// reports say the same.
	Notes() []string
	// Table is its figures, one row per level, stage or depth: the cells
	// the app's result view and the CLI show alike.
	Table() results.Table
	// Summary is the document's line in History.
	Summary() Summary
	Marshal() ([]byte, error)
}

// State is a result's state in a sentence, the same for every plan: the
// app's result view, History's status and the CLI say it alike.
func State(d Doc) string {
	if k, ok := d.(Kovara); ok {
		// A results file says more of how it stopped (results.Headline).
		return results.Headline(k.File, results.Warnings(k.File))
	}
	problems := d.Problems()
	switch {
	case !d.Complete():
		return "Stopped before the end: what was measured is kept."
	case len(problems) == 1:
		return "Finished, with a problem: read it before trusting the figures."
	case len(problems) > 1:
		return fmt.Sprintf("Finished, with %d problems: read them before trusting the figures.", len(problems))
	}
	return "Complete."
}

// NeedsAttention says a result is not simply complete: stopped, failed
// or with problems. Its state is then shown in the warning colour.
func NeedsAttention(d Doc) bool {
	return !d.Complete() || d.Failed() || len(d.Problems()) > 0
}

// Decode reads a document of any plan, by its format; anything not of
// another plan's format is read as a Kovara results file (files of the
// Python CLI among them).
func Decode(data []byte) (Doc, error) {
	format, _, err := results.DocumentFormat(data)
	if err != nil {
		return nil, err
	}
	for _, k := range All {
		if k != KovaraMethod && k.doc.format == format {
			return k.doc.decode(data)
		}
	}
	return KovaraMethod.doc.decode(data)
}

// docKind is how a plan's documents are told apart and read.
type docKind struct {
	format string // the document's top-level "format"
	decode func([]byte) (Doc, error)
}

// decodeAs is a kind's documents: their format, and their reader with its
// document around what was read.
func decodeAs[R any, D Doc](format string, read func([]byte) (*R, error), doc func(*R) D) docKind {
	return docKind{format: format, decode: func(data []byte) (Doc, error) {
		r, err := read(data)
		if err != nil {
			return nil, err
		}
		return doc(r), nil
	}}
}

// docsOf is the documents of one of the plans beyond the Kovara method:
// its results.DocKind's, read into its document by doc.
func docsOf[R any, D Doc](k results.DocKind[R], doc func(*R) D) docKind {
	return decodeAs(k.Format, k.Decode, doc)
}

// Summary is what History lists of a document without opening it again.
// The library keeps it in its index, with the file's id, size and time.
type Summary struct {
	CreatedAt     string  `json:"created_at,omitempty"`
	EndpointName  string  `json:"endpoint_name,omitempty"`
	Model         string  `json:"model,omitempty"`
	Engine        string  `json:"engine,omitempty"`
	RunKind       string  `json:"run_kind,omitempty"`
	Plan          string  `json:"plan,omitempty"`
	Levels        []int   `json:"levels,omitempty"`
	PartialLevel  int     `json:"partial_level,omitempty"`
	BestOutputTPS float64 `json:"best_output_tps,omitempty"`
	Complete      bool    `json:"complete"`
	Simulated     bool    `json:"simulated,omitempty"`
	// CachedShare is the largest share of a level's prompt tokens the
	// server took from its prompt cache, when it was enough to matter
	// (results.PromptCacheHit).
	CachedShare float64 `json:"cached_share,omitempty"`
	// Problems are the result's problems (Doc.Problems), in the words its
	// result view shows.
	Problems []string `json:"problems,omitempty"`
	// Failed is Doc.Failed.
	Failed bool `json:"failed,omitempty"`
	// Capacity is a capacity result's answer in a few characters ("8
	// users", "4–6 users?"), what History's narrow column shows; Answer
	// is the same in a whole line (AnswerLine), what it says of the run
	// selected.
	Capacity string `json:"capacity,omitempty"`
	Answer   string `json:"answer,omitempty"`
	// Group is a repeated plan's run's place in it, "2 of 3"; GroupID
	// ties the group's runs together.
	Group   string `json:"group,omitempty"`
	GroupID string `json:"group_id,omitempty"`
	// Setting is the setting a settings comparison's run measured
	// ("np8"); Group is then its round.
	Setting string `json:"setting,omitempty"`
	// OwnLoad: a Kovara run sent its own load (a shared prefix,
	// conversations) instead of the method's prompts.
	OwnLoad bool `json:"own_load,omitempty"`
	// Rates are a rate result's offered rates, requests/s, lowest first:
	// its levels (LevelList says either).
	Rates []float64 `json:"rates,omitempty"`
	// Replay: a settings comparison whose runs replayed a trace, its one
	// level the replay's.
	Replay bool `json:"replay,omitempty"`
}

// LevelList is History's Levels column: the levels measured ("1,2,4",
// a partial one marked "8*") or a rate result's rates ("0.5,2,4").
func (s Summary) LevelList() string {
	parts := make([]string, 0, len(s.Levels)+len(s.Rates)+1)
	for _, l := range s.Levels {
		parts = append(parts, strconv.Itoa(l))
	}
	for _, r := range s.Rates {
		parts = append(parts, results.RateNumber(r))
	}
	if s.PartialLevel > 0 {
		parts = append(parts, strconv.Itoa(s.PartialLevel)+"*")
	}
	if s.Replay {
		parts = append(parts, "replay")
	}
	return strings.Join(parts, ",")
}

// docBase is what the documents of every plan but the Kovara method read
// alike from their result R (a *results.CapacityResult, …): its header's
// model, time and completeness, whether it was simulated, its headline,
// table and bytes. A plan's document embeds it and adds what is its own:
// its kind, when it failed, its problems and its line in History.
type docBase[T any, R interface {
	*T
	results.PlanDocument
}] struct{ Result R }

func (d docBase[T, R]) Model() string            { return d.Result.Header().Model }
func (d docBase[T, R]) CreatedAt() string        { return d.Result.Header().CreatedAt }
func (d docBase[T, R]) Complete() bool           { return d.Result.Header().Complete }
func (d docBase[T, R]) Simulated() bool          { return d.Result.Simulated() }
func (d docBase[T, R]) Headline() string         { return d.Result.Headline() }
func (d docBase[T, R]) Table() results.Table     { return d.Result.Table() }
func (d docBase[T, R]) Marshal() ([]byte, error) { return results.MarshalDocument(d.Result) }

// baseOf is r as the base of its plan's document.
func baseOf[T any, R interface {
	*T
	results.PlanDocument
}](r R) docBase[T, R] {
	return docBase[T, R]{Result: r}
}

// result is the typed result, for ResultOf.
func (d docBase[T, R]) result() R { return d.Result }

// ResultOf is the typed result (a *results.CapacityResult, …) of a
// document of a plan beyond the Kovara method, for code that takes one
// plan's documents (its comparison, its result view). R must be its
// plan's result type.
func ResultOf[R any](d Doc) R { return d.(interface{ result() R }).result() }

// summaryOf is the part of a Summary every plan fills the same way.
func summaryOf(d Doc, endpointName, engine string) Summary {
	return Summary{
		CreatedAt: d.CreatedAt(), EndpointName: endpointName, Model: d.Model(), Engine: engine,
		RunKind: d.Kind().ID, Plan: d.Kind().ID, Complete: d.Complete(), Simulated: d.Simulated(),
		Problems: d.Problems(), Failed: d.Failed(),
	}
}

// engineName is a detected engine as History shows it ("llama.cpp b9749").
func engineName(d results.Detection) string {
	if d.Family == "" {
		return ""
	}
	if d.Version != "" {
		return d.Family + " " + d.Version
	}
	return d.Family
}

// ComparableKind is the one plan every document to compare has (an empty
// name counts as the Kovara method, as older index entries have none).
// Documents of different plans measure different things and cannot share
// a table.
func ComparableKind(ids []string) (*Kind, error) {
	var kind *Kind
	for _, id := range ids {
		k := ByID(id)
		if id == "" || k == nil {
			k = KovaraMethod
		}
		if kind != nil && k != kind {
			var pairs []string
			for _, k := range All {
				pairs = append(pairs, k.Results+" with "+k.Results)
			}
			return nil, fmt.Errorf("compare takes runs of one kind: %s", strings.Join(pairs, ", "))
		}
		kind = k
	}
	if kind == nil {
		return nil, fmt.Errorf("there are no runs to compare")
	}
	return kind, nil
}

// Comparison is a side by side of documents of one plan other than the
// Kovara method: whether they are like for like, and their metric × run
// table.
type Comparison struct {
	Like     bool
	Diffs    []string
	Rows     []compare.Row
	PerLevel bool // the rows are per concurrency level
	kind     *Kind
}

// Sentence is the verdict in words.
func (c Comparison) Sentence() string {
	if !c.Like {
		return "Not like for like: " + strings.Join(c.Diffs, "; ") + "."
	}
	return "These " + c.kind.Results + " measured the same thing."
}

// HasComparison says the plan's documents are compared by Compare (the
// Kovara method's have their own, with noise).
func (k *Kind) HasComparison() bool { return k.compare != nil }

// Compare sets documents of this plan side by side; labels name them.
func (k *Kind) Compare(docs []Doc, labels []string) Comparison {
	c := k.compare(docs, labels)
	c.kind = k
	return c
}

// compareBy is a plan's comparison by its verdict and its table over the
// documents' typed results.
func compareBy[R any](verdict func([]R) (bool, []string), table func([]R, []string) []compare.Row) func([]Doc, []string) Comparison {
	return func(docs []Doc, labels []string) Comparison {
		rs := make([]R, len(docs))
		for i, d := range docs {
			rs[i] = ResultOf[R](d)
		}
		var c Comparison
		c.Like, c.Diffs = verdict(rs)
		c.Rows = table(rs, labels)
		return c
	}
}

// noneOrAny: nothing was measured, or failed says one of what was (a
// depth, a rate) failed.
func noneOrAny[L any](measured []L, failed func(L) bool) bool {
	return len(measured) == 0 || slices.ContainsFunc(measured, failed)
}

// noneMeasured is the problem of a plan that ran to its end and measured
// none of what it measures ("depth", "rate"); a stopped one says so
// in its state instead.
func noneMeasured(d Doc, what string) []string {
	if !d.Measured() && d.Complete() {
		return []string{"no " + what + " was measured"}
	}
	return nil
}

// notesBeside is notes without the document's problems and without
// repeats, in order.
// placementSaid is where the server ran the model, as every plan's result
// says it (results.Placement.Words): a split model among the problems,
// a model wholly on the CPU among the notes.
func placementSaid(det *results.Detection) (problems, notes []string) {
	switch t, problem := det.PlacementWords(); {
	case t == "":
	case problem:
		problems = []string{t}
	default:
		notes = []string{t}
	}
	return problems, notes
}

// hardwareSaid is what a plan's result says of its hardware, problems
// and notes apart: where the server ran the model (placementSaid, from
// det) and what the GPUs and their machine did in its measured windows
// (results.HardwareSaid). The Kovara method's are among its warnings
// already.
func hardwareSaid(d Doc, det *results.Detection) (problems, notes []string) {
	problems, notes = placementSaid(det)
	if p, ok := Powered(d); ok {
		hp, hn := results.HardwareSaid(p)
		problems, notes = append(problems, hp...), append(notes, hn...)
	}
	return problems, notes
}

func notesBeside(d Doc, notes ...[]string) []string {
	seen := map[string]bool{}
	for _, p := range d.Problems() {
		seen[p] = true
	}
	var out []string
	for _, ns := range notes {
		for _, n := range ns {
			if n != "" && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
