package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kovara/desktop/internal/clip"
	"github.com/kovara/desktop/plans"
)

// The library keeps every plan's documents (plans.All): Kovara results
// files, and this app's three-stage, speculative-decoding, capacity and
// context results. They share the folder, the index and the history;
// Summary.Plan tells them apart.

// SaveDoc saves a plan's document under id (a new id when empty).
func (l *Library) SaveDoc(id string, d plans.Doc) (string, error) {
	data, err := d.Marshal()
	if err != nil {
		return "", err
	}
	return l.saveDocument(id, d.CreatedAt(), d.Model(), data, func(id string) Summary { return Summary{ID: id, Summary: d.Summary()} })
}

// saveDocument writes a document of any kind atomically and updates the
// index. The run is saved once its file is: the index is only a cache, so
// when it cannot be written (a disk that filled up just now) the next List
// rebuilds the entry from the file.
func (l *Library) saveDocument(id, createdAt, model string, data []byte, sum func(string) Summary) (string, error) {
	if id == "" {
		t, _ := time.Parse(time.RFC3339, createdAt)
		id = NewID(t, model)
	}
	path := l.Path(id)
	if err := WriteFileAtomic(path, data, 0o644); err != nil {
		return "", err
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", diskError("read back "+path, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s := sum(id)
	s.ID, s.Size, s.ModTime = id, info.Size(), info.ModTime().UnixNano()
	_ = l.writeIndex(upsertAll(l.readIndex(), []Summary{s}))
	return id, nil
}

// LoadAs reads run id as a document of one plan (plans.Stages, …).
func LoadAs[D plans.Doc](l *Library, id string) (D, error) {
	var zero D
	d, err := l.LoadDocument(id)
	if err != nil {
		return zero, err
	}
	typed, ok := d.(D)
	if !ok {
		return zero, fmt.Errorf("%s is a %s document, not one of %s", id, d.Kind().ID, zero.Kind().Results)
	}
	return typed, nil
}

func (l *Library) loadBytes(id string) ([]byte, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	return ReadBounded(l.Path(id), maxImportSize, resultsFileKind)
}

// RunKinds are the kinds of run the library holds — a Kovara run is a
// hardware or a protocol run, then the other plans' documents — each with
// the name History, its filter and kovara-bench history give it.
var RunKinds = runKinds()

func runKinds() []plans.RunKind {
	var out []plans.RunKind
	for _, k := range plans.All {
		out = append(out, k.RunKinds...)
	}
	return out
}

// KindName is a run kind (Summary.RunKind) as people read it.
func KindName(kind string) string {
	for _, k := range RunKinds {
		if k.Kind == kind {
			return k.Name
		}
	}
	return kind
}

// kindSetting is how much of a setting's name KindLine shows.
const kindSetting = 24

// KindLine is a run's kind as History and `kovara-bench history` show it:
// the kind, then what sets the run apart from another of that kind — its
// own load ("protocol · own load") or its place in a repeated plan
// ("protocol, run 2 of 3"). A settings comparison's run is its setting
// and round instead ("np8, round 2/12"): its kind is always the Kovara
// method's, and the column is narrow on a small screen.
func (s Summary) KindLine() string {
	kind := KindName(s.RunKind)
	if s.Setting != "" {
		kind = clip.Line(s.Setting, kindSetting)
		if s.Group != "" {
			kind += ", round " + strings.Replace(s.Group, " of ", "/", 1)
		}
	}
	if s.Simulated {
		kind += " (sim)"
	}
	if s.OwnLoad {
		kind += " · own load"
	}
	if s.Setting == "" && s.Group != "" {
		kind += ", run " + s.Group
	}
	return kind
}

// ReadArg reads the bytes of a run named on a command line: a file path,
// or an id of the library (opened on first need through open).
func ReadArg(arg string, lib **Library, open func() (*Library, error)) ([]byte, error) {
	if isFile(arg) {
		return ReadBounded(arg, maxImportSize, resultsFileKind)
	}
	if *lib == nil {
		l, err := open()
		if err != nil {
			return nil, fmt.Errorf("%s is not a file, and the library cannot be opened: %w", arg, err)
		}
		*lib = l
	}
	data, err := (*lib).loadBytes(arg)
	if err != nil {
		return nil, fmt.Errorf("%s is neither a results file nor a run in the library (%v)", arg, err)
	}
	return data, nil
}

// decodeAny reads any of the library's kinds into a summary.
func decodeAny(id string, data []byte) Summary {
	d, err := plans.Decode(data)
	if err != nil {
		return Summary{ID: id, Unreadable: err.Error()}
	}
	return Summary{ID: id, Summary: d.Summary()}
}

// importDocument validates data of any kind, for Import.
func importDocument(path string, data []byte) (Summary, error) {
	s := decodeAny("", data)
	if s.Unreadable != "" {
		return s, fmt.Errorf("%s cannot be imported: %s", filepath.Base(path), s.Unreadable)
	}
	return s, nil
}
