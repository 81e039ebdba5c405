package storage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kovara/desktop/engine/results"
)

// ErrAlreadyImported marks a file whose exact bytes are already a run in
// the library.
var ErrAlreadyImported = errors.New("already in the library")

// importBatch is how many files an import copies between two index
// writes. The index is rewritten whole (and fsynced) each time, so one
// write per file made 3,000 files take 18 minutes; a bounded batch keeps
// an interrupted import's last index write at most this many files behind
// the folder, which List then reads as it does any new file.
const importBatch = 500

// Imported is what became of one file of an import: its run when it was
// copied, or why not.
type Imported struct {
	Path    string
	Summary Summary
	Err     error
}

// ImportReport is what an import did, file by file, in the order given.
type ImportReport struct {
	Files []Imported
}

// Count returns how many files were copied, were already in the library,
// and could not be read or copied.
func (r ImportReport) Count() (imported, duplicates, unreadable int) {
	for _, f := range r.Files {
		switch {
		case f.Err == nil:
			imported++
		case errors.Is(f.Err, ErrAlreadyImported):
			duplicates++
		default:
			unreadable++
		}
	}
	return imported, duplicates, unreadable
}

// importNamed is how many unreadable files the sentence names before it
// counts the rest.
const importNamed = 3

// Sentence says in one line how the import went, as the app's History
// and the CLI print it: "2,998 imported, 2 unreadable: a.json (…); b.json
// (…)".
func (r ImportReport) Sentence() string {
	imported, dups, bad := r.Count()
	parts := []string{results.Thousands(imported) + " imported"}
	if dups > 0 {
		parts = append(parts, results.Thousands(dups)+" already in the library")
	}
	s := strings.Join(parts, ", ")
	if bad == 0 {
		return s + "."
	}
	s += ", " + results.Thousands(bad) + " unreadable: "
	var named []string
	for _, f := range r.Files {
		if f.Err == nil || errors.Is(f.Err, ErrAlreadyImported) {
			continue
		}
		if len(named) == importNamed {
			named = append(named, fmt.Sprintf("and %s more", results.Thousands(bad-importNamed)))
			break
		}
		named = append(named, f.Err.Error())
	}
	return s + strings.Join(named, "; ") + "."
}

// ImportPaths expands what a person gave to import — files and folders —
// into the results files to read: a folder stands for every .json file
// under it (sorted, hidden files and folders skipped), a file for itself
// whatever its name. A path that does not exist is kept, so the import
// says so for it.
func ImportPaths(args []string) []string {
	var out []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil || !info.IsDir() {
			out = append(out, a)
			continue
		}
		// WalkDir does not enter a link to a folder given as its root.
		root := a
		if r, err := filepath.EvalSymlinks(a); err == nil {
			root = r
		}
		var found []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable subfolder: the rest still imports
			}
			name := d.Name()
			if p != root && strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(name), ".json") {
				found = append(found, p)
			}
			return nil
		})
		slices.Sort(found)
		out = append(out, found...)
	}
	return out
}

// Import validates the results file at path and copies it into the library.
// Files written by the Python kovara CLI import too.
func (l *Library) Import(path string) (Summary, error) {
	r, err := l.ImportFiles(context.Background(), []string{path}, nil)
	if err != nil {
		return Summary{}, err
	}
	f := r.Files[0]
	return f.Summary, f.Err
}

// ImportFiles copies results files into the library, validating each, and
// says what became of every one. A file the library already holds (the
// same bytes) is not copied again. The index is written once per
// importBatch files and at the end; a stop through ctx (or a crash) leaves
// every file copied so far in the library, listed by the next List.
// progress, when given, hears after each file how many of paths are done.
// The error is for the library itself failing (its folder unreadable, the
// disk full); a file that cannot be read is in the report.
func (l *Library) ImportFiles(ctx context.Context, paths []string, progress func(done, total int)) (ImportReport, error) {
	report := ImportReport{Files: make([]Imported, 0, len(paths))}
	list, err := l.List()
	if err != nil {
		return report, err
	}
	seen := newContentIndex(l, list)
	var pending []Summary
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		syncDir(l.dir)
		l.mu.Lock()
		defer l.mu.Unlock()
		err := l.writeIndex(upsertAll(l.readIndex(), pending))
		pending = pending[:0]
		return err
	}
	for i, path := range paths {
		if ctx.Err() != nil {
			break
		}
		s, err := l.importOne(path, seen)
		if err != nil {
			var disk *DiskError
			if errors.As(err, &disk) {
				// The library cannot be written: every next file would
				// fail the same way.
				flush()
				return report, err
			}
		} else {
			pending = append(pending, s)
		}
		report.Files = append(report.Files, Imported{Path: path, Summary: s, Err: err})
		if importHook != nil {
			importHook(i)
		}
		if len(pending) == importBatch {
			// The index is a cache: a failed write is mended by the next List.
			_ = flush()
		}
		if progress != nil {
			progress(i+1, len(paths))
		}
	}
	_ = flush()
	return report, ctx.Err()
}

// importHook, when set by a test, runs after each file of an import.
var importHook func(i int)

func (l *Library) importOne(path string, seen *contentIndex) (Summary, error) {
	data, err := ReadBounded(path, maxImportSize, resultsFileKind)
	if err != nil {
		return Summary{}, err
	}
	doc, err := importDocument(path, data)
	if err != nil {
		return Summary{}, err
	}
	if id, ok := seen.find(data); ok {
		return Summary{ID: id}, fmt.Errorf("%s is %w (as %s)", filepath.Base(path), ErrAlreadyImported, id)
	}
	created, _ := time.Parse(time.RFC3339, doc.CreatedAt)
	id := NewID(created, doc.Model)
	// Copy the bytes as they are: an imported file stays exactly what its
	// author wrote. The folder is synced once a batch, before the index
	// names the batch's files.
	if err := writeFileAtomic(l.Path(id), data, 0o644, false); err != nil {
		return Summary{}, err
	}
	info, err := os.Stat(l.Path(id))
	if err != nil {
		return Summary{}, diskError("read back "+l.Path(id), err)
	}
	seen.add(id, data)
	s := doc
	s.ID, s.Size, s.ModTime = id, info.Size(), info.ModTime().UnixNano()
	return s, nil
}

// contentIndex finds a file's exact bytes among the library's runs. A
// run is read (and hashed) only when a file of its size comes, and at
// most once.
type contentIndex struct {
	l        *Library
	unhashed map[int64][]string // by size
	byHash   map[[sha256.Size]byte]string
}

func newContentIndex(l *Library, list []Summary) *contentIndex {
	c := &contentIndex{l: l, unhashed: map[int64][]string{}, byHash: map[[sha256.Size]byte]string{}}
	for _, s := range list {
		if s.Unreadable == "" {
			c.unhashed[s.Size] = append(c.unhashed[s.Size], s.ID)
		}
	}
	return c
}

func (c *contentIndex) find(data []byte) (string, bool) {
	size := int64(len(data))
	for _, id := range c.unhashed[size] {
		if old, err := os.ReadFile(c.l.Path(id)); err == nil && int64(len(old)) == size {
			c.byHash[sha256.Sum256(old)] = id
		}
	}
	delete(c.unhashed, size)
	id, ok := c.byHash[sha256.Sum256(data)]
	return id, ok
}

func (c *contentIndex) add(id string, data []byte) {
	c.byHash[sha256.Sum256(data)] = id
}

// upsertAll puts summaries into the index, replacing any of the same id,
// and sorts it once.
func upsertAll(idx indexDoc, add []Summary) indexDoc {
	at := make(map[string]int, len(idx.Entries))
	for i, s := range idx.Entries {
		at[s.ID] = i
	}
	for _, s := range add {
		if i, ok := at[s.ID]; ok {
			idx.Entries[i] = s
			continue
		}
		at[s.ID] = len(idx.Entries)
		idx.Entries = append(idx.Entries, s)
	}
	sortSummaries(idx.Entries)
	return idx
}
