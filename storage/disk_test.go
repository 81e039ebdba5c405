//go:build linux

package storage

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// Disk safety: a full disk or a read-only data folder gives one clear
// sentence and loses no result saved before. These tests mount a small
// tmpfs (or set the immutable flag), which needs root; they skip, saying
// why, where that is not allowed.

// smallDisk mounts a tmpfs of the given size on a fresh folder.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the container does not allow mounts", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes 4 KiB files into dir until the disk is full and returns them.
func fill(t *testing.T, dir string) []string {
	t.Helper()
	block := make([]byte, 4096)
	var files []string
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf("filler-%04d", i))
		err := os.WriteFile(name, block, 0o644)
		if err == nil {
			files = append(files, name)
			continue
		}
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("filling the disk: %v", err)
		}
		os.Remove(name) // a partial file, if any
		if len(files) == 0 {
			t.Fatal("the disk was full before it was filled")
		}
		return files
	}
}

// oneSentence checks that a storage error is a single, plain sentence
// that says what it must, without the raw system error tacked on.
func oneSentence(t *testing.T, err error, must string, cause error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one saying %q", must)
	}
	msg := err.Error()
	if !strings.Contains(msg, must) {
		t.Errorf("%q does not say %q", msg, must)
	}
	for _, raw := range []string{"\n", "no space left on device", "read-only file system", "operation not permitted", ".tmp"} {
		if strings.Contains(msg, raw) {
			t.Errorf("%q carries %q: one plain sentence, please", msg, raw)
		}
	}
	if !errors.Is(err, cause) {
		t.Errorf("%v does not wrap %v", err, cause)
	}
}

// intact checks that the library lists exactly want (ids to run counts),
// all readable, and that each loads.
func intact(t *testing.T, l *Library, want map[string]int) {
	t.Helper()
	list, err := l.List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != len(want) {
		t.Errorf("List shows %d runs, want %d: %+v", len(list), len(want), list)
	}
	for _, s := range list {
		if s.Unreadable != "" {
			t.Errorf("%s is unreadable: %s", s.ID, s.Unreadable)
		}
		n, ok := want[s.ID]
		if !ok {
			t.Errorf("unexpected run %s", s.ID)
			continue
		}
		f, err := l.Load(s.ID)
		if err != nil {
			t.Errorf("Load %s: %v", s.ID, err)
			continue
		}
		if len(f.Runs) != n {
			t.Errorf("%s has %d runs, want %d", s.ID, len(f.Runs), n)
		}
	}
	tmp, _ := filepath.Glob(filepath.Join(l.Dir(), ".*"))
	tmp2, _ := filepath.Glob(filepath.Join(filepath.Dir(l.Dir()), ".*.tmp"))
	if len(tmp)+len(tmp2) > 0 {
		t.Errorf("temp files left behind: %v %v", tmp, tmp2)
	}
}

func oneLevel(t *testing.T) *results.File {
	f := sample(t)
	f.Runs = f.Runs[:1]
	f.Complete = false
	return f
}

func TestFullDiskSaysSoAndLosesNothing(t *testing.T) {
	dir := smallDisk(t, "256k")
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for range 3 {
		id, err := l.Save("", sample(t))
		if err != nil {
			t.Fatal(err)
		}
		want[id] = 2
	}
	// A run in progress: its first level saved, the second not yet.
	partial, err := l.Save("", oneLevel(t))
	if err != nil {
		t.Fatal(err)
	}
	want[partial] = 1
	filler := fill(t, dir)

	_, err = l.Save("", sample(t))
	oneSentence(t, err, "the disk is full", syscall.ENOSPC)
	t.Logf("new run: %v", err)
	// The checkpoint after the next level cannot replace the file: the
	// last good version stays.
	_, err = l.Save(partial, sample(t))
	oneSentence(t, err, "the disk is full", syscall.ENOSPC)
	intact(t, l, want)
	// Labels are the user's words: a failed write says so too.
	oneSentence(t, l.SetAnnotation(partial, Annotation{Label: "a long label that needs a new page " + strings.Repeat("x", 5000)}), "the disk is full", syscall.ENOSPC)

	// Space again: saving works and the checkpoint goes through.
	for _, f := range filler {
		os.Remove(f)
	}
	if _, err := l.Save(partial, sample(t)); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
	want[partial] = 2
	intact(t, l, want)
}

// When the results file fits but the index (a cache) does not, the run is
// saved and Save says so: the index catches up on the next List.
func TestFullDiskAfterTheResultsFile(t *testing.T) {
	dir := smallDisk(t, "256k")
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := l.Save("", sample(t))
	if err != nil {
		t.Fatal(err)
	}
	f := sample(t)
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	filler := fill(t, dir)
	// Free exactly the pages the results file needs, and no more.
	pages := (len(data) + 4095) / 4096
	for _, name := range filler[len(filler)-pages:] {
		os.Remove(name)
	}
	id, err := l.Save("", f)
	if err != nil {
		t.Fatalf("the results file was written, yet Save says: %v", err)
	}
	intact(t, l, map[string]int{first: 2, id: 2})
}

func TestReadOnlyDiskSaysSoAndLosesNothing(t *testing.T) {
	dir := smallDisk(t, "1m")
	l, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := l.Save("", sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetAnnotation(id, Annotation{Label: "before"}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount the tmpfs read-only: %v", err)
	}
	_, err = l.Save("", sample(t))
	oneSentence(t, err, "read-only disk", syscall.EROFS)
	t.Logf("new run: %v", err)
	_, err = l.Save(id, oneLevel(t))
	oneSentence(t, err, "read-only disk", syscall.EROFS)
	oneSentence(t, l.SetAnnotation(id, Annotation{Label: "after"}), "read-only disk", syscall.EROFS)
	oneSentence(t, l.Delete(id), "read-only disk", syscall.EROFS)
	intact(t, l, map[string]int{id: 2})
	if list, _ := l.List(); len(list) != 1 || list[0].Label != "before" {
		t.Errorf("label lost: %+v", list)
	}
	// A library that does not exist yet on a read-only disk.
	_, err = OpenLibrary(filepath.Join(dir, "elsewhere"))
	oneSentence(t, err, "read-only disk", syscall.EROFS)
}

// The immutable flag makes a folder unwritable even for root.
func TestImmutableFolderSaysSoAndLosesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chattr +i needs root")
	}
	chattr, err := exec.LookPath("chattr")
	if err != nil {
		t.Skip("chattr is not installed (e2fsprogs)")
	}
	l, dir := newLib(t)
	id, err := l.Save("", sample(t))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(chattr, "+i", l.Dir(), dir).CombinedOutput(); err != nil {
		t.Skipf("this file system does not take the immutable flag: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command(chattr, "-i", l.Dir(), dir).Run() })
	_, err = l.Save("", sample(t))
	oneSentence(t, err, "permission denied", syscall.EPERM)
	t.Logf("new run: %v", err)
	_, err = l.Save(id, oneLevel(t))
	oneSentence(t, err, "permission denied", syscall.EPERM)
	intact(t, l, map[string]int{id: 2})
}
