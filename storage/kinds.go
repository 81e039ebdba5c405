package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kovara/desktop/clip"
	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
)

// Document is one saved run of any kind: exactly one of File, Stages,
// SpecDec, Capacity and Context is set, as Plan says.
type Document struct {
	Plan     string // PlanKovara, PlanStages, PlanSpecDec, PlanCapacity or PlanContext
	File     *results.File
	Stages   *results.StagesResult
	SpecDec  *results.SpecDecResult
	Capacity *results.CapacityResult
	Context  *results.ContextResult
}

// DecodeDocument reads a document of any of the library's kinds.
func DecodeDocument(data []byte) (Document, error) {
	format, _, err := results.DocumentFormat(data)
	if err != nil {
		return Document{}, err
	}
	switch format {
	case results.FormatStages:
		r, err := results.DecodeStages(data)
		return Document{Plan: PlanStages, Stages: r}, err
	case results.FormatSpecDec:
		r, err := results.DecodeSpecDec(data)
		return Document{Plan: PlanSpecDec, SpecDec: r}, err
	case results.FormatCapacity:
		r, err := results.DecodeCapacity(data)
		return Document{Plan: PlanCapacity, Capacity: r}, err
	case results.FormatContext:
		r, err := results.DecodeContext(data)
		return Document{Plan: PlanContext, Context: r}, err
	}
	f, err := results.Decode(data)
	return Document{Plan: PlanKovara, File: f}, err
}

// ReadDocument reads a document of any kind from a file.
func ReadDocument(path string) (Document, error) {
	data, err := ReadBounded(path, maxImportSize, resultsFileKind)
	if err != nil {
		return Document{}, err
	}
	d, err := DecodeDocument(data)
	if err != nil {
		return Document{}, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// LoadDocument reads run id of any kind.
func (l *Library) LoadDocument(id string) (Document, error) {
	data, err := l.loadBytes(id)
	if err != nil {
		return Document{}, err
	}
	return DecodeDocument(data)
}

// Model and CreatedAt name what the document measured, and when.
func (d Document) Model() string {
	switch {
	case d.File != nil:
		return fileModel(d.File)
	case d.Stages != nil:
		return d.Stages.Model
	case d.SpecDec != nil:
		return d.SpecDec.Model
	case d.Capacity != nil:
		return d.Capacity.Model
	case d.Context != nil:
		return d.Context.Model
	}
	return ""
}

func (d Document) CreatedAt() string {
	switch {
	case d.File != nil:
		return d.File.CreatedAt
	case d.Stages != nil:
		return d.Stages.CreatedAt
	case d.SpecDec != nil:
		return d.SpecDec.CreatedAt
	case d.Capacity != nil:
		return d.Capacity.CreatedAt
	case d.Context != nil:
		return d.Context.CreatedAt
	}
	return ""
}

// planNames say each kind in words.
var planNames = map[string]string{
	PlanKovara:   "Kovara runs",
	PlanStages:   "three-stage results",
	PlanSpecDec:  "speculative-decoding results",
	PlanCapacity: "capacity results",
	PlanContext:  "context results",
}

// ComparableKind is the one kind every run to compare has (an empty plan
// counts as a Kovara run, as older index entries have none). Runs of
// different kinds measure different things and cannot share a table.
func ComparableKind(plans []string) (string, error) {
	kind := ""
	for _, p := range plans {
		if p == "" {
			p = PlanKovara
		}
		if kind != "" && p != kind {
			return "", errors.New("compare takes runs of one kind: Kovara runs with Kovara runs, three-stage results with three-stage results, speculative-decoding results with speculative-decoding results, capacity results with capacity results, context results with context results")
		}
		kind = p
	}
	if kind == "" {
		return "", errors.New("there are no runs to compare")
	}
	return kind, nil
}

// PlanName says a kind in words ("three-stage results").
func PlanName(plan string) string {
	if n, ok := planNames[plan]; ok {
		return n
	}
	return planNames[PlanKovara]
}

// RunID is what a library id says: when the run was made, the model (as
// a slug) and a short random part that tells runs apart.
type RunID struct {
	Created time.Time
	Model   string
	Short   string
}

// ParseRunID reads an id made by NewID; ok is false for anything else.
func ParseRunID(id string) (RunID, bool) {
	stamp, rest, ok := strings.Cut(id, "_")
	if !ok {
		return RunID{}, false
	}
	t, err := time.Parse(idTimeLayout, stamp)
	if err != nil {
		return RunID{}, false
	}
	i := strings.LastIndex(rest, "_")
	if i < 0 {
		return RunID{}, false
	}
	return RunID{Created: t, Model: rest[:i], Short: rest[i+1:]}, true
}

// ShortName names a run given as a file path or a library id in a few
// characters: a library id without its time, else the file's name.
func ShortName(arg string) string {
	s := strings.TrimSuffix(filepath.Base(arg), ".json")
	if id, ok := ParseRunID(s); ok {
		s = id.Model + "_" + id.Short
	}
	return clip.Text(s, 25)
}

// RunName names a run for a comparison: the user's label, else the model
// and when it ran ("qwen3-8b 11-29 14:03", UTC).
func RunName(label, model, createdAt string) string {
	if label != "" {
		return label
	}
	if t, err := time.Parse(time.RFC3339, createdAt); err == nil {
		return model + " " + t.UTC().Format("01-02 15:04")
	}
	return model
}

// isFile reports whether arg names an existing file (rather than an id).
func isFile(arg string) bool {
	st, err := os.Stat(arg)
	return err == nil && !st.IsDir()
}

// LoadArg reads a run named on a command line: a file path, or an id of
// the library (opened on first need through open).
func LoadArg(arg string, lib **Library, open func() (*Library, error)) (Document, error) {
	if isFile(arg) {
		return ReadDocument(arg)
	}
	if *lib == nil {
		l, err := open()
		if err != nil {
			return Document{}, fmt.Errorf("%s is not a file, and the library cannot be opened: %w", arg, err)
		}
		*lib = l
	}
	d, err := (*lib).LoadDocument(arg)
	if err != nil {
		return Document{}, fmt.Errorf("%s is neither a results file nor a run in the library (%v)", arg, err)
	}
	return d, nil
}

// CompareOrder is the order runs of any kind are shown in a comparison
// (compare.Order, by each document's created_at): the baseline first —
// docs[baseline], or the oldest for compare.OldestBaseline — then the
// others oldest to newest. Arrange the runs, their names and anything
// else kept beside them with compare.Arrange.
func CompareOrder(docs []Document, baseline int) []int {
	created := make([]string, len(docs))
	for i, d := range docs {
		created[i] = d.CreatedAt()
	}
	return compare.Order(created, baseline)
}

// Comparison is a side by side of three-stage, speculative-decoding,
// capacity or context results: whether they are like for like, and their metric × run table.
type Comparison struct {
	Like     bool
	Diffs    []string
	Rows     []compare.Row
	PerLevel bool // the rows are per concurrency level
	plan     string
}

// Sentence is the verdict in words.
func (c Comparison) Sentence() string {
	if !c.Like {
		return "Not like for like: " + strings.Join(c.Diffs, "; ") + "."
	}
	return "These " + PlanName(c.plan) + " measured the same thing."
}

// CompareOthers compares documents of one of the other plans (docs all of
// kind plan, as ComparableKind found); labels name the runs.
func CompareOthers(plan string, docs []Document, labels []string) Comparison {
	c := Comparison{plan: plan}
	switch plan {
	case PlanStages:
		var rs []*results.StagesResult
		for _, d := range docs {
			rs = append(rs, d.Stages)
		}
		c.Like, c.Diffs = compare.StagesVerdict(rs)
		c.Rows = compare.StagesTable(rs)
	case PlanSpecDec:
		var rs []*results.SpecDecResult
		for _, d := range docs {
			rs = append(rs, d.SpecDec)
		}
		c.Like, c.Diffs = compare.SpecDecVerdict(rs)
		c.Rows, c.PerLevel = compare.SpecDecTable(rs, labels), true
	case PlanCapacity:
		var rs []*results.CapacityResult
		for _, d := range docs {
			rs = append(rs, d.Capacity)
		}
		c.Like, c.Diffs = compare.CapacityVerdict(rs)
		c.Rows = compare.CapacityTable(rs, labels)
	case PlanContext:
		var rs []*results.ContextResult
		for _, d := range docs {
			rs = append(rs, d.Context)
		}
		c.Like, c.Diffs = compare.ContextVerdict(rs)
		c.Rows = compare.ContextTable(rs, labels)
	}
	return c
}

// IsFile says whether a run argument names a file (else a library id).
func IsFile(arg string) bool { return isFile(arg) }
