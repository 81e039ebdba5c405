package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pythonFile is a results file of the Python kovara CLI, made unique by i:
// what a person moving their history brings, thousands at a time.
func pythonFile(tb testing.TB, i int) []byte {
	tb.Helper()
	data, err := os.ReadFile("../engine/results/testdata/python_cli.json")
	if err != nil {
		tb.Fatal(err)
	}
	at := time.Date(2026, 10, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	s := strings.Replace(string(data), `"created_at": "2026-10-29T12:00:00.123456+00:00"`, `"created_at": "`+at.Format(time.RFC3339)+`"`, 1)
	s = strings.Replace(s, `"seed": 7`, fmt.Sprintf(`"seed": %d`, 1000+i), 1)
	if s == string(data) {
		tb.Fatal("the Python CLI fixture changed: pythonFile makes no unique files")
	}
	return []byte(s)
}

// writePythonFiles writes n unique files into dir and returns their paths.
func writePythonFiles(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	var paths []string
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("run-%05d.json", i))
		if err := os.WriteFile(p, pythonFile(tb, i), 0o644); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func TestImportFiles(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	src := t.TempDir()
	writePythonFiles(t, src, 3)
	os.WriteFile(filepath.Join(src, "copy of run-00001.JSON"), pythonFile(t, 1), 0o644)
	os.WriteFile(filepath.Join(src, "broken.json"), []byte(`{"format":`), 0o644)
	os.WriteFile(filepath.Join(src, "notes.txt"), []byte("not a results file"), 0o644)
	os.WriteFile(filepath.Join(src, ".hidden.json"), pythonFile(t, 9), 0o644)
	os.MkdirAll(filepath.Join(src, "older"), 0o755)
	os.WriteFile(filepath.Join(src, "older", "run-a.json"), pythonFile(t, 5), 0o644)
	// One is in the library before the import.
	before := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(before, pythonFile(t, 2), 0o644)
	if _, err := l.Import(before); err != nil {
		t.Fatal(err)
	}

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	if got := len(ImportPaths([]string{link})); got != 6 {
		t.Errorf("a link to the folder gives %d files, want 6", got)
	}
	paths := ImportPaths([]string{src, filepath.Join(src, "missing.json")})
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimPrefix(p, src+string(filepath.Separator)))
	}
	wantNames := []string{"broken.json", "copy of run-00001.JSON", filepath.Join("older", "run-a.json"), "run-00000.json", "run-00001.json", "run-00002.json", "missing.json"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("ImportPaths:\n got %q\nwant %q", names, wantNames)
	}

	var calls []int
	r, err := l.ImportFiles(context.Background(), paths, func(done, total int) {
		if total != len(paths) {
			t.Errorf("progress total %d, want %d", total, len(paths))
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("progress %v", calls)
	}
	imported, dups, bad := r.Count()
	if imported != 3 || dups != 2 || bad != 2 {
		t.Errorf("imported, duplicates, unreadable = %d, %d, %d; want 3, 2, 2", imported, dups, bad)
	}
	got := r.Sentence()
	for _, want := range []string{"3 imported, 2 already in the library, 2 unreadable: broken.json cannot be imported", "missing.json does not exist."} {
		if !strings.Contains(got, want) {
			t.Errorf("sentence %q lacks %q", got, want)
		}
	}
	list, err := l.List()
	if err != nil || len(list) != 4 {
		t.Fatalf("library after import: %d runs, %v", len(list), err)
	}
	assertIndexMatchesFolder(t, l)
}

func TestImportSentenceNamesAFew(t *testing.T) {
	t.Parallel()
	r := ImportReport{}
	for i := 0; i < 2998; i++ {
		r.Files = append(r.Files, Imported{})
	}
	for i := 0; i < 5; i++ {
		r.Files = append(r.Files, Imported{Err: fmt.Errorf("f%d.json is not JSON", i)})
	}
	got, want := r.Sentence(), "2,998 imported, 5 unreadable: f0.json is not JSON; f1.json is not JSON; f2.json is not JSON; and 2 more."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestImportWritesTheIndexInBatches holds the fix for the 18-minute import:
// the index is rewritten once per importBatch files, not once per file.
func TestImportWritesTheIndexInBatches(t *testing.T) {
	l, _ := newLib(t)
	n := importBatch + importBatch/2
	paths := writePythonFiles(t, t.TempDir(), n)
	var indexed []int
	importHook = func(i int) {
		if i%100 == 99 {
			indexed = append(indexed, len(l.readIndex().Entries))
		}
	}
	defer func() { importHook = nil }()
	r, err := l.ImportFiles(context.Background(), paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	if imported, _, _ := r.Count(); imported != n {
		t.Fatalf("%d imported, want %d", imported, n)
	}
	// The hook runs before the batch's write, so the index lags by up to
	// one batch and catches up at the end.
	want := []int{0, 0, 0, 0, 0, 500, 500}
	if !slices.Equal(indexed, want) {
		t.Errorf("index entries every 100 files: %v, want %v", indexed, want)
	}
	if got := len(l.readIndex().Entries); got != n {
		t.Errorf("index after the import: %d entries, want %d", got, n)
	}
}

func TestImportStopped(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	paths := writePythonFiles(t, t.TempDir(), 10)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := l.ImportFiles(ctx, paths, func(done, _ int) {
		if done == 4 {
			cancel()
		}
	})
	if err == nil || len(r.Files) != 4 {
		t.Fatalf("stopped import: %d files, %v", len(r.Files), err)
	}
	assertIndexMatchesFolder(t, l)
}

// importChildEnv names the library a child test process imports into
// until it kills itself.
const importChildEnv = "KOVARA_TEST_IMPORT_INTO"

// TestImportKilledHalfway kills an import with SIGKILL in the middle of
// its second batch: the files copied since the last index write are in the
// folder but not the index, and the library must still list exactly its
// files. Importing the same files again copies only the rest.
func TestImportKilledHalfway(t *testing.T) {
	if dir := os.Getenv(importChildEnv); dir != "" {
		l, err := OpenLibrary(dir)
		if err != nil {
			t.Fatal(err)
		}
		importHook = func(i int) {
			if i == importBatch+importBatch/3 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		l.ImportFiles(context.Background(), ImportPaths([]string{os.Getenv(importChildEnv + "_FROM")}), nil)
		t.Fatal("the import was not killed")
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	t.Parallel()
	dataDir, src := t.TempDir(), t.TempDir()
	n := 2 * importBatch
	writePythonFiles(t, src, n)
	cmd := exec.Command(os.Args[0], "-test.run=^TestImportKilledHalfway$", "-test.count=1")
	cmd.Env = append(os.Environ(), importChildEnv+"="+dataDir, importChildEnv+"_FROM="+src)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v\n%s", err, out)
	}
	l, err := OpenLibrary(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(l.readIndex().Entries); got != importBatch {
		t.Errorf("index before the next List: %d entries, want the first batch's %d", got, importBatch)
	}
	assertIndexMatchesFolder(t, l)
	copied := importBatch + importBatch/3 + 1
	if list, _ := l.List(); len(list) != copied {
		t.Errorf("%d runs listed after the kill, want %d", len(list), copied)
	}
	r, err := l.ImportFiles(context.Background(), ImportPaths([]string{src}), nil)
	if err != nil {
		t.Fatal(err)
	}
	imported, dups, bad := r.Count()
	if imported != n-copied || dups != copied || bad != 0 {
		t.Errorf("import again: %d imported, %d already, %d unreadable; want %d, %d, 0", imported, dups, bad, n-copied, copied)
	}
	assertIndexMatchesFolder(t, l)
}

// assertIndexMatchesFolder holds the library's list, and the index List
// leaves behind, to exactly the results files in its folder, each readable.
func assertIndexMatchesFolder(t *testing.T, l *Library) {
	t.Helper()
	list, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(l.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var files, listed, indexed []string
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") {
			files = append(files, strings.TrimSuffix(name, ".json"))
		}
	}
	for _, s := range list {
		if s.Unreadable != "" {
			t.Errorf("%s unreadable: %s", s.ID, s.Unreadable)
		}
		listed = append(listed, s.ID)
	}
	for _, s := range l.readIndex().Entries {
		indexed = append(indexed, s.ID)
	}
	slices.Sort(files)
	slices.Sort(listed)
	slices.Sort(indexed)
	if !slices.Equal(files, listed) || !slices.Equal(files, indexed) {
		t.Errorf("%d files in the folder, %d listed, %d in the index", len(files), len(listed), len(indexed))
	}
}

// BenchmarkImport3000 imports 3,000 results files of the Python CLI into
// an empty library, as `kovara-bench import` of a folder does.
func BenchmarkImport3000(b *testing.B) {
	src := b.TempDir()
	writePythonFiles(b, src, 3000)
	paths := ImportPaths([]string{src})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, _ := newLib(b)
		b.StartTimer()
		r, err := l.ImportFiles(context.Background(), paths, nil)
		if imported, _, _ := r.Count(); err != nil || imported != 3000 {
			b.Fatalf("%d imported, %v", imported, err)
		}
	}
}

// bigLibrary is a library of n runs, imported as a person moving their
// history would, with its index warm.
func bigLibrary(b *testing.B, n int) *Library {
	b.Helper()
	l, _ := newLib(b)
	r, err := l.ImportFiles(context.Background(), writePythonFiles(b, b.TempDir(), n), nil)
	if imported, _, _ := r.Count(); err != nil || imported != n {
		b.Fatalf("%d imported, %v", imported, err)
	}
	return l
}

// BenchmarkList10000 lists a library of 10,000 runs with a warm index:
// what History does each time it opens.
func BenchmarkList10000(b *testing.B) {
	l := bigLibrary(b, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if list, err := l.List(); err != nil || len(list) != 10000 {
			b.Fatal(len(list), err)
		}
	}
}

// BenchmarkFilter10000 is one keystroke in History's search over 10,000
// runs.
func BenchmarkFilter10000(b *testing.B) {
	list, err := bigLibrary(b, 10000).List()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := Filter(list, Query{Text: "Llama3.1"}); len(got) != 10000 {
			b.Fatal(len(got))
		}
	}
}

// TestDeleteRuns deletes several runs at once: their files, index entries
// and labels go, the rest stay, and an id that is not one is said.
func TestDeleteRuns(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	r, err := l.ImportFiles(context.Background(), writePythonFiles(t, t.TempDir(), 5), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Files {
		ids = append(ids, f.Summary.ID)
	}
	for _, id := range ids {
		if err := l.SetAnnotation(id, Annotation{Label: "label of " + id}); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := l.DeleteRuns([]string{ids[0], "../elsewhere", ids[3], ids[4]})
	if !slices.Equal(gone, []string{ids[0], ids[3], ids[4]}) || err == nil || !strings.Contains(err.Error(), "not a run id") {
		t.Errorf("DeleteRuns: %v, %v", gone, err)
	}
	list, _ := l.List()
	if len(list) != 2 || list[0].Label == "" || list[1].Label == "" {
		t.Errorf("left: %+v", list)
	}
	if got := len(l.readLabels().Labels); got != 2 {
		t.Errorf("%d labels left, want 2", got)
	}
	assertIndexMatchesFolder(t, l)
}

// BenchmarkDeleteFrom10000 deletes 4 runs, as one Delete in History does,
// from a library of 10,000.
func BenchmarkDeleteFrom10000(b *testing.B) {
	l := bigLibrary(b, 10000+4*b.N)
	list, err := l.List()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ids []string
		for _, s := range list[4*i : 4*i+4] {
			ids = append(ids, s.ID)
		}
		if gone, err := l.DeleteRuns(ids); err != nil || len(gone) != 4 {
			b.Fatal(gone, err)
		}
	}
}
