package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/compare"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/plans"
)

// ReadDocument reads a document of any plan from a file.
func ReadDocument(path string) (plans.Doc, error) {
	data, err := ReadBounded(path, maxImportSize, resultsFileKind)
	if err != nil {
		return nil, err
	}
	d, err := plans.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// LoadDocument reads run id of any plan.
func (l *Library) LoadDocument(id string) (plans.Doc, error) {
	data, err := l.loadBytes(id)
	if err != nil {
		return nil, err
	}
	return plans.Decode(data)
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
	model = results.ModelName(model) // never the folder it lies in
	if t, err := time.Parse(time.RFC3339, createdAt); err == nil {
		return model + " " + t.UTC().Format("01-02 15:04")
	}
	return model
}

// Run is what names a run in a comparison: its label in History, its
// model, when it ran (RFC 3339) and whether it stopped before its end.
type Run struct {
	Label, Model, CreatedAt string
	Partial                 bool
}

// RunNames names runs compared together, each as RunName does and each
// unlike the others, saying what tells apart those that would read the
// same: "(partial)" on the one that stopped before its end, else the
// seconds they began at, else "#1", "#2" in the order given. Two runs of
// one model begun in the same minute (a run stopped, then made again)
// were both "tiny-llama.gguf 12-07 00:19" in Compare.
func RunNames(runs []Run) []string {
	names := make([]string, len(runs))
	marked := make([]bool, len(runs)) // "(partial)" added
	for i, r := range runs {
		names[i] = RunName(r.Label, r.Model, r.CreatedAt)
	}
	// Each pass changes only names that are still shared, and only where
	// what it adds differs among those sharing it.
	sharing := func(each func(group []int)) {
		by := map[string][]int{}
		var order []string
		for i, n := range names {
			if by[n] == nil {
				order = append(order, n)
			}
			by[n] = append(by[n], i)
		}
		for _, n := range order {
			if g := by[n]; len(g) > 1 {
				each(g)
			}
		}
	}
	sharing(func(g []int) {
		partial := 0
		for _, i := range g {
			if runs[i].Partial {
				partial++
			}
		}
		if partial == 0 || partial == len(g) {
			return
		}
		for _, i := range g {
			if runs[i].Partial {
				names[i] += " (partial)"
				marked[i] = true
			}
		}
	})
	sharing(func(g []int) {
		stamps := map[string]bool{}
		for _, i := range g {
			stamps[secondStamp(runs[i].CreatedAt)] = true
		}
		if len(stamps) < 2 {
			return // the same second, or no time: seconds tell nothing
		}
		for _, i := range g {
			if st := secondStamp(runs[i].CreatedAt); st != "" {
				names[i] = runNameAt(runs[i], st, marked[i])
			}
		}
	})
	taken := map[string]bool{}
	for _, n := range names {
		taken[n] = true
	}
	sharing(func(g []int) {
		n := 1
		for _, i := range g {
			base := names[i]
			for taken[fmt.Sprintf("%s #%d", base, n)] {
				n++
			}
			names[i] = fmt.Sprintf("%s #%d", base, n)
			taken[names[i]] = true
			n++
		}
	})
	return names
}

// secondStamp is when a run began to the second ("12-07 00:19:41", UTC),
// "" when createdAt does not read.
func secondStamp(createdAt string) string {
	t, err := time.Parse(time.RFC3339, createdAt)
	if err != nil {
		return ""
	}
	return t.UTC().Format("01-02 15:04:05")
}

// runNameAt is r's name with stamp for when it began: after its label,
// or in place of RunName's minute after its model; "(partial)" after it
// when marked.
func runNameAt(r Run, stamp string, marked bool) string {
	name := r.Label
	if name == "" {
		name = results.ModelName(r.Model)
	}
	name += " " + stamp
	if marked {
		name += " (partial)"
	}
	return name
}

// isFile reports whether arg names an existing file (rather than an id).
func isFile(arg string) bool {
	st, err := os.Stat(arg)
	return err == nil && !st.IsDir()
}

// LoadArg reads a run named on a command line, as ReadArg finds it, and
// decodes it.
func LoadArg(arg string, lib **Library, open func() (*Library, error)) (plans.Doc, error) {
	data, err := ReadArg(arg, lib, open)
	if err != nil {
		return nil, err
	}
	d, err := plans.Decode(data)
	switch {
	case err == nil:
		return d, nil
	case isFile(arg):
		return nil, fmt.Errorf("%s: %w", arg, err)
	default:
		return nil, fmt.Errorf("%s is neither a results file nor a run in the library (%v)", arg, err)
	}
}

// CompareOrder is the order runs of any kind are shown in a comparison
// (compare.Order, by each document's created_at): the baseline first —
// docs[baseline], or the oldest for compare.OldestBaseline — then the
// others oldest to newest. Arrange the runs, their names and anything
// else kept beside them with compare.Arrange.
func CompareOrder(docs []plans.Doc, baseline int) []int {
	created := make([]string, len(docs))
	for i, d := range docs {
		created[i] = d.CreatedAt()
	}
	return compare.Order(created, baseline)
}

// IsFile says whether a run argument names a file (else a library id).
func IsFile(arg string) bool { return isFile(arg) }
