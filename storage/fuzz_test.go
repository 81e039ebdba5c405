package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// FuzzImport feeds arbitrary bytes to Library.Import, as a file dropped on
// the History screen or given to "kovara-bench import". It must never
// panic; it accepts exactly what results.Decode accepts; an accepted file
// is copied byte for byte, lists as readable and loads; a refused one adds
// nothing to the library and is refused with a message that starts by naming the file. Seeds are in
// testdata/fuzz/FuzzImport.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"hardware.json", "python_cli.json"} {
		data, err := os.ReadFile(filepath.Join("..", "engine", "results", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Every accepted input is written with fsync (several times, with the
	// index): on a memory file system, where there is one, that costs
	// nothing and the fuzzer runs many times faster.
	dir := f.TempDir()
	if shm, err := os.MkdirTemp("/dev/shm", "kovara-fuzz-import-"); err == nil {
		dir = shm
		f.Cleanup(func() { os.RemoveAll(shm) })
	}
	lib, err := OpenLibrary(filepath.Join(dir, "data"))
	if err != nil {
		f.Fatal(err)
	}
	in := filepath.Join(dir, "dropped.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, decodeErr := results.Decode(data)
		s, err := lib.Import(in)
		if err != nil {
			if decodeErr == nil {
				t.Fatalf("Decode accepts the file but Import refuses it: %v", err)
			}
			// The first line names the file; a validation failure lists
			// its problems on the lines after.
			if msg := err.Error(); !strings.HasPrefix(msg, "dropped.json cannot be imported: ") {
				t.Fatalf("refusal does not start by naming the file: %q", msg)
			}
			if entries, _ := os.ReadDir(lib.Dir()); len(entries) != 0 {
				t.Fatalf("a refused import left %d files in the library", len(entries))
			}
			return
		}
		if decodeErr != nil {
			t.Fatalf("Import accepted a file Decode refuses: %v", decodeErr)
		}
		copied, err := os.ReadFile(lib.Path(s.ID))
		if err != nil || !bytes.Equal(copied, data) {
			t.Fatalf("the imported file is not a byte-for-byte copy (%v)", err)
		}
		if _, err := lib.Load(s.ID); err != nil {
			t.Fatalf("an imported file does not load: %v", err)
		}
		list, err := lib.List()
		if err != nil || len(list) != 1 || list[0].ID != s.ID || list[0].Unreadable != "" {
			t.Fatalf("List after import: %+v %v", list, err)
		}
		// Leave the library empty for the next input.
		if err := lib.Delete(s.ID); err != nil {
			t.Fatal(err)
		}
	})
}
