package storage

import (
	"os"
	"testing"
)

// A checkpoint keeps one file for the run through every save, a failed
// one included: the next save rewrites it instead of starting a second.
func TestCheckpointKeepsOneFile(t *testing.T) {
	t.Parallel()
	lib, err := OpenLibrary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := sample(t)
	cp := lib.Checkpoint()
	if cp.ID() != "" {
		t.Fatal("an id before the first save")
	}
	f.Complete = false
	if err := cp.Save(f); err != nil {
		t.Fatal(err)
	}
	first := cp.ID()
	// A save that fails (here: a folder stands where the file goes,
	// which stops root too) keeps the id.
	path := lib.Path(first)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := cp.Save(f); err == nil || cp.ID() != first {
		t.Errorf("a failed save: err %v, id %q (want the first, %q)", err, cp.ID(), first)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	f.Complete = true
	if err := cp.Save(f); err != nil || cp.ID() != first {
		t.Fatalf("last save: %v, id %q want %q", err, cp.ID(), first)
	}
	list, err := lib.List()
	if err != nil || len(list) != 1 || !list[0].Complete || list[0].ID != first {
		t.Errorf("the library holds %+v (%v); want the one run, complete", list, err)
	}
}
