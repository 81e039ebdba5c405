package storage

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
)

// Library is the local results library: one results file per benchmark
// session in one folder, an index of summaries that keeps the history list
// instant at thousands of runs, and the user's labels and notes.
//
// The index is a cache: delete it and List rebuilds the same summaries from
// the files. Labels and notes are the user's own words and live apart from
// both the results files (which stay exactly what was measured) and the
// cache (so losing the cache loses nothing).
type Library struct {
	dir        string // results files
	indexPath  string
	labelsPath string
	mu         sync.Mutex
	// cached is the index as last read or written, while the file's size
	// and time say no other process has written it since: decoding it
	// was half of every List at 10,000 runs.
	cached struct {
		size int64
		mod  time.Time
		idx  indexDoc
	}
}

const (
	resultsSub    = "results"
	indexFile     = "index.json"
	labelsFile    = "labels.json"
	indexVersion  = 8 // 2: cached_share; 3: problems; 4: every plan's problems, failed; 5: a capacity result's answer and partial level; 6: a rate result's rates; 7: a settings comparison run's setting, a Kovara run's own load; 8: a replay's setting, a comparison that replayed
	maxImportSize = results.MaxFileSize
)

// Summary is one line of the history: what the list shows without opening
// the file — the plan's summary of it (plans.Summary), and the file's id,
// size and time.
type Summary struct {
	ID      string `json:"id"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mod_time"` // Unix ns, to notice a changed file
	plans.Summary
	Unreadable string `json:"unreadable,omitempty"` // why the file could not be read

	Label string `json:"-"`
	Notes string `json:"-"`
}

// State is a run's state in a word or three: "complete", "incomplete",
// "failed" (it ended with nothing to show: plans.Doc.Failed, e.g. a
// level where every request failed), or, when it has problems,
// "finished, 2 problems" / "failed, 1 problem" / "incomplete, 1
// problem" — the count its result's state gives; the sentences are the
// first thing its result shows.
func (s Summary) State() string {
	state := "incomplete"
	switch {
	case s.Complete && s.Failed:
		state = "failed"
	case s.Complete && len(s.Problems) > 0:
		state = "finished"
	case s.Complete:
		state = "complete"
	}
	if n := len(s.Problems); n > 0 {
		state += fmt.Sprintf(", %d %s", n, results.Plural(n, "problem", "problems"))
	}
	return state
}

// Best is the best output tok/s of the run's levels, or results.Missing
// when none measured any (every request failed, or no level finished).
func (s Summary) Best() string {
	if s.BestOutputTPS <= 0 {
		return results.Missing
	}
	return strconv.FormatFloat(s.BestOutputTPS, 'f', 1, 64)
}

type indexDoc struct {
	Version int       `json:"version"`
	Entries []Summary `json:"entries"`
}

// Annotation is the user's label and notes for one run.
type Annotation struct {
	Label string `json:"label,omitempty"`
	Notes string `json:"notes,omitempty"`
}

type labelsDoc struct {
	Version int                   `json:"version"`
	Labels  map[string]Annotation `json:"labels"`
}

// resultsFileKind names what the library reads, in its messages.
const resultsFileKind = "a results file"

// OpenLibrary opens (creating if needed) the library under dataDir.
func OpenLibrary(dataDir string) (*Library, error) {
	dir := filepath.Join(dataDir, resultsSub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, diskError("create the results folder "+dir, err)
	}
	return &Library{
		dir:        dir,
		indexPath:  filepath.Join(dataDir, indexFile),
		labelsPath: filepath.Join(dataDir, labelsFile),
	}, nil
}

// Dir is the folder holding the results files.
func (l *Library) Dir() string { return l.dir }

// Path is the results file of run id.
func (l *Library) Path(id string) string { return filepath.Join(l.dir, id+".json") }

// NewID names a new results file by time, model and a short random id.
func NewID(createdAt time.Time, model string) string {
	var b [3]byte
	rand.Read(b[:])
	return createdAt.UTC().Format(idTimeLayout) + "_" + slug(model) + "_" + hex.EncodeToString(b[:])
}

// idTimeLayout is how an id begins: the run's time, UTC (ParseRunID).
const idTimeLayout = "20060102-150405"

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "run"
	}
	return out
}

// Save writes f under id (a new id when empty), atomically, and updates the
// index. Call it again with the same id to rewrite the file after every
// finished level.
func (l *Library) Save(id string, f *results.File) (string, error) {
	data, err := results.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("the results do not validate, so they were not saved: %w", err)
	}
	d := plans.Kovara{File: f}
	return l.saveDocument(id, f.CreatedAt, d.Model(), data, func(id string) Summary { return Summary{ID: id, Summary: d.Summary()} })
}

// Load reads and validates run id.
func (l *Library) Load(id string) (*results.File, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	data, err := ReadBounded(l.Path(id), maxImportSize, resultsFileKind)
	if err != nil {
		return nil, err
	}
	f, err := results.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid results file: %w", id, err)
	}
	return f, nil
}

// Delete removes run id's file, its index entry and its label.
func (l *Library) Delete(id string) error {
	_, err := l.DeleteRuns([]string{id})
	return err
}

// DeleteRuns removes runs' files, their index entries and their labels,
// writing the index and the labels once however many there are. It goes
// on past a run it cannot delete, returns the ids it deleted and the first
// reason one was not.
func (l *Library) DeleteRuns(ids []string) (deleted []string, err error) {
	gone := map[string]bool{}
	for _, id := range ids {
		if e := checkID(id); e != nil {
			err = cmp.Or(err, e)
			continue
		}
		if e := os.Remove(l.Path(id)); e != nil && !errors.Is(e, os.ErrNotExist) {
			err = cmp.Or(err, diskError("delete "+id, e))
			continue
		}
		gone[id] = true
		deleted = append(deleted, id)
	}
	if len(gone) == 0 {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	idx := l.readIndex()
	idx.Entries = slices.DeleteFunc(idx.Entries, func(s Summary) bool { return gone[s.ID] })
	if e := l.writeIndex(idx); e != nil {
		return deleted, cmp.Or(err, e)
	}
	labels := l.readLabels()
	n := len(labels.Labels)
	for id := range gone {
		delete(labels.Labels, id)
	}
	if len(labels.Labels) != n {
		if e := l.writeLabels(labels); e != nil {
			return deleted, cmp.Or(err, e)
		}
	}
	return deleted, err
}

// Annotation is run id's label and notes, without listing the library.
func (l *Library) Annotation(id string) Annotation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readLabels().Labels[id]
}

// SetAnnotation sets run id's label and notes (empty clears them).
func (l *Library) SetAnnotation(id string, a Annotation) error {
	if err := checkID(id); err != nil {
		return err
	}
	if _, err := os.Stat(l.Path(id)); err != nil {
		return fmt.Errorf("no run %s in the library", id)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	labels := l.readLabels()
	if a == (Annotation{}) {
		delete(labels.Labels, id)
	} else {
		labels.Labels[id] = a
	}
	return l.writeLabels(labels)
}

// List returns every run, newest first, bringing the index up to date with
// the folder: new or changed files are read, vanished ones dropped.
// Unreadable files are listed with the reason, never removed.
func (l *Library) List() ([]Summary, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	idx := l.readIndex()
	next, changed, err := l.reconcile(idx.Entries)
	if err != nil {
		return nil, err
	}
	if changed {
		// A failed cache write is not worth failing the list for: the next
		// List reconciles again.
		_ = l.writeIndex(indexDoc{Version: indexVersion, Entries: next})
	}
	return l.withLabels(next), nil
}

func (l *Library) reconcile(old []Summary) ([]Summary, bool, error) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, false, diskError("read the results folder "+l.dir, err)
	}
	known := make(map[string]Summary, len(old))
	for _, s := range old {
		known[s.ID] = s
	}
	changed := false
	out := make([]Summary, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp") {
			// A write killed halfway leaves its temp file; an hour on, no
			// write is still using it.
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				os.Remove(filepath.Join(l.dir, name))
			}
			continue
		}
		if e.IsDir() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		id := strings.TrimSuffix(name, ".json")
		info, err := e.Info()
		if err != nil {
			continue // vanished between ReadDir and now
		}
		if s, ok := known[id]; ok && s.Size == info.Size() && s.ModTime == info.ModTime().UnixNano() {
			out = append(out, s)
			delete(known, id)
			continue
		}
		delete(known, id)
		changed = true
		s := l.readSummary(id)
		s.Size, s.ModTime = info.Size(), info.ModTime().UnixNano()
		out = append(out, s)
	}
	if len(known) > 0 {
		changed = true
	}
	if !changed && slices.IsSortedFunc(old, summaryOrder) {
		return old, false, nil
	}
	sortSummaries(out)
	return out, changed, nil
}

func (l *Library) readSummary(id string) Summary {
	data, err := ReadBounded(l.Path(id), maxImportSize, resultsFileKind)
	if err != nil {
		return Summary{ID: id, Unreadable: err.Error()}
	}
	return decodeAny(id, data)
}

// summaryOrder is the history's order: newest first, then by id.
func summaryOrder(a, b Summary) int {
	if a.CreatedAt != b.CreatedAt {
		return strings.Compare(b.CreatedAt, a.CreatedAt)
	}
	return strings.Compare(b.ID, a.ID)
}

func sortSummaries(s []Summary) { slices.SortStableFunc(s, summaryOrder) }

func (l *Library) withLabels(in []Summary) []Summary {
	labels := l.readLabels()
	out := make([]Summary, len(in))
	for i, s := range in {
		a := labels.Labels[s.ID]
		s.Label, s.Notes = a.Label, a.Notes
		out[i] = s
	}
	return out
}

// readIndex returns the index, or an empty one when it is missing or
// damaged (it is only a cache). The caller owns the entries it gets. Call
// with mu held.
func (l *Library) readIndex() indexDoc {
	info, err := os.Stat(l.indexPath)
	if err != nil {
		return indexDoc{Version: indexVersion}
	}
	if c := &l.cached; c.idx.Version == indexVersion && c.size == info.Size() && c.mod.Equal(info.ModTime()) {
		return indexDoc{Version: indexVersion, Entries: slices.Clone(c.idx.Entries)}
	}
	var idx indexDoc
	data, err := os.ReadFile(l.indexPath)
	if err != nil || json.Unmarshal(data, &idx) != nil || idx.Version != indexVersion {
		return indexDoc{Version: indexVersion}
	}
	l.remember(idx)
	return idx
}

// remember keeps a copy of idx, just read or written, with the index
// file's size and time.
func (l *Library) remember(idx indexDoc) {
	l.cached.idx = indexDoc{}
	if info, err := os.Stat(l.indexPath); err == nil {
		l.cached.size, l.cached.mod = info.Size(), info.ModTime()
		l.cached.idx = indexDoc{Version: idx.Version, Entries: slices.Clone(idx.Entries)}
	}
}

// writeIndex replaces the index. Call with mu held.
func (l *Library) writeIndex(idx indexDoc) error {
	idx.Version = indexVersion
	data, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(l.indexPath, data, 0o644); err != nil {
		l.cached.idx = indexDoc{}
		return err
	}
	l.remember(idx)
	return nil
}

func (l *Library) readLabels() labelsDoc {
	doc := labelsDoc{Version: 1, Labels: map[string]Annotation{}}
	data, err := os.ReadFile(l.labelsPath)
	if err != nil {
		return doc
	}
	if json.Unmarshal(data, &doc) != nil || doc.Labels == nil {
		return labelsDoc{Version: 1, Labels: map[string]Annotation{}}
	}
	return doc
}

func (l *Library) writeLabels(doc labelsDoc) error {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(l.labelsPath, data, 0o644)
}

// checkID refuses ids that would reach outside the results folder.
func checkID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fmt.Errorf("%q is not a run id", id)
	}
	return nil
}
