package storage

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kovara/desktop/engine"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

var (
	sampleOnce sync.Once
	sampleFile *results.File
	sampleErr  error
)

// sample is a real results file, made once by the engine against the
// simulator.
func sample(t testing.TB) *results.File {
	t.Helper()
	sampleOnce.Do(func() {
		srv, url, err := sim.Start(sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6}, "127.0.0.1:0")
		if err != nil {
			sampleErr = err
			return
		}
		defer srv.Close()
		p := setup.DefaultPlan()
		p.InputTokens, p.OutputTokens, p.Concurrency, p.Requests, p.Warmup = 32, 4, []int{1, 2}, 4, 0
		sampleFile, sampleErr = engine.Run(context.Background(), p, setup.Endpoint{URL: url, Name: "lab box"}, engine.Observer{})
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	// A deep copy, so tests can change it.
	data, err := results.Marshal(sampleFile)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func newLib(t testing.TB) (*Library, string) {
	t.Helper()
	dir := t.TempDir()
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	return l, dir
}

func TestSaveListLoad(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	f := sample(t)
	id, err := l.Save("", f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(id, "kovara-sim-8b") {
		t.Errorf("id %q should carry the model", id)
	}
	list, err := l.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	s := list[0]
	if s.ID != id || s.Model != "kovara-sim-8b" || s.EndpointName != "lab box" || !reflect.DeepEqual(s.Levels, []int{1, 2}) ||
		!s.Complete || s.RunKind != "protocol" || s.Engine == "" || s.BestOutputTPS <= 0 || s.Unreadable != "" {
		t.Errorf("summary %+v", s)
	}
	got, err := l.Load(id)
	if err != nil || len(got.Runs) != 2 {
		t.Fatalf("Load: %v", err)
	}
}

func TestCheckpointRewritesSameFile(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	f := sample(t)
	partial := *f
	partial.Complete = false
	partial.Runs = f.Runs[:1]
	id, err := l.Save("", &partial)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Save(id, f); err != nil {
		t.Fatal(err)
	}
	list, _ := l.List()
	if len(list) != 1 || !list[0].Complete || len(list[0].Levels) != 2 {
		t.Fatalf("after checkpoint then final save: %+v", list)
	}
	if entries, _ := os.ReadDir(l.Dir()); len(entries) != 1 {
		t.Errorf("want exactly one file (no temp files left), got %d", len(entries))
	}
}

func TestIndexRebuildsToTheSame(t *testing.T) {
	t.Parallel()
	l, dir := newLib(t)
	f := sample(t)
	for i := 0; i < 4; i++ {
		g := sample(t)
		g.CreatedAt = time.Date(2026, 11, 1+i, 12, 0, 0, 0, time.UTC).Format(time.RFC3339)
		if i == 1 {
			g.Complete = false
			g.Local.PartialRun = &g.Runs[1]
			g.Runs = g.Runs[:1]
		}
		if i == 2 {
			g.Local.Simulated = true
		}
		if _, err := l.Save("", g); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Import(filepath.Join("..", "engine", "results", "testdata", "python_cli.json")); err != nil {
		t.Fatalf("importing a Python CLI file: %v", err)
	}
	_ = f
	os.WriteFile(filepath.Join(l.Dir(), "broken.json"), []byte(`{"format": "kovara-benchmark-results", "runs": [`), 0o644)
	before, err := l.List()
	if err != nil || len(before) != 6 {
		t.Fatalf("List: %d entries, %v", len(before), err)
	}
	if err := os.Remove(filepath.Join(dir, indexFile)); err != nil {
		t.Fatal(err)
	}
	after, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("index rebuilt from the files differs:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestUnreadableIsListedNeverDeleted(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	if _, err := l.Save("", sample(t)); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"truncated":   `{"format": "kovara-benchmark-results", "runs": [`,
		"not-results": `{"hello": "world"}`,
		"binary":      "\x00\x01\x02",
		"extra-field": strings.Replace(mustMarshal(t, sample(t)), `"complete"`, `"surprise": 1, "complete"`, 1),
	}
	for name, body := range bad {
		os.WriteFile(filepath.Join(l.Dir(), name+".json"), []byte(body), 0o644)
	}
	list, err := l.List()
	if err != nil {
		t.Fatal(err)
	}
	unreadable := 0
	for _, s := range list {
		if _, isBad := bad[s.ID]; isBad {
			unreadable++
			if s.Unreadable == "" {
				t.Errorf("%s: no reason given", s.ID)
			}
		}
	}
	if unreadable != len(bad) || len(list) != len(bad)+1 {
		t.Errorf("listed %d unreadable of %d, %d in all", unreadable, len(bad), len(list))
	}
	for name := range bad {
		if _, err := os.Stat(filepath.Join(l.Dir(), name+".json")); err != nil {
			t.Errorf("%s was removed", name)
		}
	}
	if _, err := l.Load("truncated"); err == nil {
		t.Error("Load of a broken file should fail")
	}
}

func mustMarshal(t *testing.T, f *results.File) string {
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestImport(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	src := filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(src, []byte(mustMarshal(t, sample(t))), 0o644)
	s, err := l.Import(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Import(src); err == nil || !strings.Contains(err.Error(), "already in the library") {
		t.Errorf("second import: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"format":"something-else"}`), 0o644)
	if _, err := l.Import(bad); err == nil || !strings.Contains(err.Error(), "cannot be imported") {
		t.Errorf("bad import: %v", err)
	}
	if _, err := l.Import(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file imported")
	}
	list, _ := l.List()
	if len(list) != 1 || list[0].ID != s.ID {
		t.Errorf("list after imports: %+v", list)
	}
}

func TestDeleteAndLabels(t *testing.T) {
	t.Parallel()
	l, dir := newLib(t)
	a, _ := l.Save("", sample(t))
	b, _ := l.Save("", sample(t))
	if err := l.SetAnnotation(a, Annotation{Label: "fp8 kv cache", Notes: "after driver update"}); err != nil {
		t.Fatal(err)
	}
	// Labels survive losing the index, and never enter the results file.
	os.Remove(filepath.Join(dir, indexFile))
	list, _ := l.List()
	var got Summary
	for _, s := range list {
		if s.ID == a {
			got = s
		}
	}
	if got.Label != "fp8 kv cache" || got.Notes != "after driver update" {
		t.Errorf("label after index loss: %+v", got)
	}
	if data, _ := os.ReadFile(l.Path(a)); strings.Contains(string(data), "fp8 kv cache") {
		t.Error("the label leaked into the results file")
	}
	if err := l.Delete(a); err != nil {
		t.Fatal(err)
	}
	list, _ = l.List()
	if len(list) != 1 || list[0].ID != b {
		t.Errorf("after delete: %+v", list)
	}
	if _, err := os.Stat(l.Path(a)); !os.IsNotExist(err) {
		t.Error("file still there")
	}
	if err := l.Delete("../../etc/passwd"); err == nil {
		t.Error("a path was accepted as an id")
	}
}

func TestReadOnlyFolderSaysSoAndLosesNothing(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() == 0 {
		// root ignores permissions; the read-only case runs in the
		// mount-based test in CI instead.
		t.Skip("needs a non-root user")
	}
	t.Parallel()
	l, _ := newLib(t)
	id, _ := l.Save("", sample(t))
	os.Chmod(l.Dir(), 0o555)
	defer os.Chmod(l.Dir(), 0o755)
	_, err := l.Save("", sample(t))
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("save into a read-only folder: %v", err)
	}
	if _, err := l.Load(id); err != nil {
		t.Errorf("earlier run lost: %v", err)
	}
}

func TestDirsByConvention(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	tests := []struct {
		goos, data, config string
		env                map[string]string
	}{
		{"linux", "/h/.local/share/kovara-desktop", "/h/.config/kovara-desktop", nil},
		{"linux", "/x/data/kovara-desktop", "/x/cfg/kovara-desktop", map[string]string{"XDG_DATA_HOME": "/x/data", "XDG_CONFIG_HOME": "/x/cfg"}},
		{"linux", "/h/.local/share/kovara-desktop", "/h/.config/kovara-desktop", map[string]string{"XDG_DATA_HOME": "relative"}},
		{"darwin", "/h/Library/Application Support/kovara-desktop", "/h/Library/Application Support/kovara-desktop", nil},
		{"windows", filepath.Join(`C:\Users\u\AppData\Roaming`, "kovara-desktop"), filepath.Join(`C:\Users\u\AppData\Roaming`, "kovara-desktop"), map[string]string{"AppData": `C:\Users\u\AppData\Roaming`}},
	}
	for _, tc := range tests {
		env = tc.env
		d := dirsFor(tc.goos, "/h", get)
		if d.Data != tc.data || d.Config != tc.config {
			t.Errorf("%s %v: got %+v, want %s %s", tc.goos, tc.env, d, tc.data, tc.config)
		}
	}
}

func TestHomeOverride(t *testing.T) {
	t.Setenv(HomeEnv, "/tmp/kv")
	d, err := DefaultDirs()
	if err != nil || d.Data != "/tmp/kv/data" || d.Config != "/tmp/kv/config" {
		t.Errorf("got %+v %v", d, err)
	}
}

func TestStaleTempFilesAreCleared(t *testing.T) {
	t.Parallel()
	l, _ := newLib(t)
	old := filepath.Join(l.Dir(), ".x.json.123.tmp")
	fresh := filepath.Join(l.Dir(), ".y.json.456.tmp")
	os.WriteFile(old, []byte("{"), 0o644)
	os.WriteFile(fresh, []byte("{"), 0o644)
	long := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, long, long)
	if list, err := l.List(); err != nil || len(list) != 0 {
		t.Fatalf("temp files listed as runs: %+v %v", list, err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("an hour-old temp file should be removed")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a fresh temp file may belong to a write in progress: keep it")
	}
}
