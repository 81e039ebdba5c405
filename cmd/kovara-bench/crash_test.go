package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/prompt"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// Crash safety: a run killed outright (SIGKILL, a power cut as far as the
// process can tell) at any moment never leaves a library that cannot be
// read, and never a temp file that passes for a run.

// checkLibrary asserts that every file in the library parses: List shows
// no unreadable entry and no temp file, every listed run loads, and the
// index and labels, when present, are whole JSON documents. It returns the
// number of runs.
func checkLibrary(t *testing.T, dataDir string) int {
	t.Helper()
	lib, err := storage.OpenLibrary(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	list, err := lib.List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, s := range list {
		if s.Unreadable != "" {
			t.Errorf("%s is unreadable: %s", s.ID, s.Unreadable)
		}
		if strings.HasPrefix(s.ID, ".") || strings.Contains(s.ID, ".tmp") {
			t.Errorf("a temp file is listed as a run: %s", s.ID)
		}
		if _, err := lib.Load(s.ID); err != nil {
			t.Errorf("Load %s: %v", s.ID, err)
		}
	}
	for _, name := range []string{"index.json", "labels.json"} {
		data, err := os.ReadFile(filepath.Join(dataDir, name))
		if err == nil && !json.Valid(data) {
			t.Errorf("%s is torn: %q", name, data)
		}
	}
	return len(list)
}

// TestSIGKILLAtRandomPoints starts kovara-bench run again and again and
// kills it at a moment drawn from a seeded generator, anywhere from before
// the first level to the final save and the -o copy.
func TestSIGKILLAtRandomPoints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	home := withHome(t)
	bin := buildBinary(t)
	cfg := fast()
	cfg.TokenInterval = 2 * time.Millisecond
	url := startSim(t, cfg)
	dataDir := filepath.Join(home, "data")
	copyPath := filepath.Join(home, "copies", "run.json")
	// Six short levels: five checkpoints, the final save and the copy.
	args := []string{"run", "--endpoint", url, "--concurrency", "1,2,1,2,1,2", "--requests", "4", "--warmup", "1",
		"--input-tokens", "16", "--output-tokens", "6", "--quiet", "-o", copyPath}

	// One run to the end gives the span to draw the kill times from.
	began := time.Now()
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("a full run failed: %v\n%s", err, out)
	}
	span := time.Since(began)
	runs := checkLibrary(t, dataDir)
	if runs != 1 {
		t.Fatalf("a full run left %d runs in the library", runs)
	}
	readResults(t, copyPath)

	rng := rand.New(rand.NewPCG(20261129, 9))
	deadline := time.Now().Add(45 * time.Second)
	const iterations = 12
	done := 0
	for i := range iterations {
		if time.Now().After(deadline) {
			t.Logf("time budget spent after %d kills", i)
			break
		}
		// Up to 20 % past the span, so some kills find a finished run.
		delay := time.Duration(rng.Float64() * 1.2 * float64(span))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		cancel()
		var ee *exec.ExitError
		killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled()
		if err != nil && !killed {
			t.Fatalf("kill %d: %v\n%s", i, err, out.String())
		}
		n := checkLibrary(t, dataDir)
		if n < runs || n > runs+1 {
			t.Errorf("kill %d: the library went from %d to %d runs", i, runs, n)
		}
		runs = n
		if _, err := os.Stat(copyPath); err == nil {
			readResults(t, copyPath) // the copy is written atomically too
		}
		t.Logf("kill %d after %v (span %v): killed=%v, %d runs", i, delay.Round(time.Millisecond), span.Round(time.Millisecond), killed, n)
		done++
	}
	if done < iterations/2 {
		t.Errorf("only %d kills in the time budget", done)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dataDir, "results", ".*.tmp"))
	t.Logf("%d temp files left by killed writes (never listed as runs)", len(leftovers))
}

// saveLoopEnv makes the test binary a process that saves results into the
// library as fast as it can, for TestSIGKILLMidWrite to kill.
const saveLoopEnv = "KOVARA_TEST_SAVE_LOOP"

func TestSaveLoopProcess(t *testing.T) {
	dir := os.Getenv(saveLoopEnv)
	if dir == "" {
		t.Skip("helper process for TestSIGKILLMidWrite")
	}
	lib, err := storage.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "engine", "results", "testdata", "hardware.json"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	id := ""
	for i := 0; ; i++ {
		// Rewrite one run (a checkpoint), start new ones now and then,
		// and label them: every kind of write the library does.
		if i%5 == 0 {
			id = ""
		}
		if id, err = lib.Save(id, f); err != nil {
			t.Fatal(err)
		}
		if err := lib.SetAnnotation(id, storage.Annotation{Label: "save " + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// A run is in the library from here on: a kill after this
			// line that leaves none is the library's fault. (Said before
			// the first save, a kill under load could land before any.)
			fmt.Println("saving")
		}
	}
}

// TestSIGKILLMidWrite kills a process that does nothing but write to the
// library, so that most kills land inside a write.
func TestSIGKILLMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs helper processes")
	}
	t.Parallel()
	dataDir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 20261129))
	for i := range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSaveLoopProcess$")
		cmd.Env = append(os.Environ(), saveLoopEnv+"="+dataDir)
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		// Wait until its first run is saved, then let it write a little
		// while.
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if line != "saving\n" {
			cmd.Process.Kill()
			cmd.Wait()
			cancel()
			t.Fatalf("helper did not start: %q", line)
		}
		time.Sleep(time.Duration(rng.IntN(40)+5) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		cancel()
		n := checkLibrary(t, dataDir)
		if n == 0 {
			t.Errorf("kill %d: no run survived", i)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dataDir, "results", ".*.tmp"))
	more, _ := filepath.Glob(filepath.Join(dataDir, ".*.tmp"))
	t.Logf("%d temp files left by killed writes (never listed as runs)", len(leftovers)+len(more))
}

// --- A library that cannot be written ----------------------------------

// roDisk mounts a tmpfs on dir and, after prepare, makes it read-only.
func roDisk(t *testing.T, dir string, prepare func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a read-only tmpfs needs root")
	}
	os.MkdirAll(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m,mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): the container does not allow mounts", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	if prepare != nil {
		prepare()
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only: %v", err)
	}
}

// TestUnwritableLibrary: when the library cannot be written the CLI still
// prints the summary, says in one line why the run is not in the library,
// and writes the copy elsewhere (with -o where asked, else in the current
// folder).
func TestUnwritableLibrary(t *testing.T) {
	url := startSim(t, fast())
	small := []string{"--concurrency", "1,2", "--requests", "2", "--warmup", "0", "--input-tokens", "16", "--output-tokens", "4"}
	tests := []struct {
		name    string
		prepare func(t *testing.T, home string)
		want    string // what stderr must say about the library
	}{
		{"read-only data folder", func(t *testing.T, home string) {
			dataDir := filepath.Join(home, "data")
			roDisk(t, dataDir, func() {
				if _, err := storage.OpenLibrary(dataDir); err != nil {
					t.Fatal(err)
				}
			})
		}, "kovara-bench: could not save into the library: could not write in "},
		{"no library and a read-only home", func(t *testing.T, home string) {
			roDisk(t, home, nil)
		}, "warning: the results library cannot be used (could not create the results folder "},
		{"full disk", func(t *testing.T, home string) {
			dataDir := filepath.Join(home, "data")
			os.MkdirAll(dataDir, 0o755)
			if os.Geteuid() != 0 {
				t.Skip("mounting a tmpfs needs root")
			}
			if err := syscall.Mount("tmpfs", dataDir, "tmpfs", 0, "size=16k,mode=0755"); err != nil {
				t.Skipf("cannot mount a tmpfs here (%v)", err)
			}
			t.Cleanup(func() { syscall.Unmount(dataDir, syscall.MNT_DETACH) })
			os.MkdirAll(filepath.Join(dataDir, "results"), 0o755)
			block := make([]byte, 4096)
			for i := 0; ; i++ {
				if os.WriteFile(filepath.Join(dataDir, "filler"+strconv.Itoa(i)), block, 0o644) != nil {
					break
				}
			}
		}, "the disk is full"},
	}
	for _, tc := range tests {
		for _, withCopy := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/-o=%v", tc.name, withCopy), func(t *testing.T) {
				home := withHome(t)
				tc.prepare(t, home)
				elsewhere := t.TempDir()
				args := append([]string{"run", "--endpoint", url}, small...)
				var out string
				if withCopy {
					out = filepath.Join(elsewhere, "copy.json")
					args = append(args, "-o", out)
				} else {
					t.Chdir(elsewhere)
				}
				code, stdout, stderr := runCLI(args...)
				if code != exitOK {
					t.Fatalf("exit %d:\n%s", code, stderr)
				}
				if !strings.Contains(stdout, "TTFT p50") || strings.Count(strings.TrimSpace(stdout), "\n") < 3 {
					t.Errorf("no summary:\n%s", stdout)
				}
				if !strings.Contains(stderr, tc.want) {
					t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
				}
				for _, line := range strings.Split(stderr, "\n") {
					if strings.Contains(line, "library") && (strings.Contains(line, "no space left") || strings.Contains(line, "read-only file system") || strings.Contains(line, ".tmp")) {
						t.Errorf("raw system error in %q", line)
					}
				}
				if strings.Contains(stderr, "saved in the library") {
					t.Errorf("claims the run was saved:\n%s", stderr)
				}
				if !withCopy {
					found, _ := filepath.Glob(filepath.Join(elsewhere, "kovara-results-*.json"))
					if len(found) != 1 {
						t.Fatalf("no copy in the current folder: %v\n%s", found, stderr)
					}
					out = found[0]
				}
				if !strings.Contains(stderr, "results written to "+filepath.Base(out)) && !strings.Contains(stderr, "results written to "+out) {
					t.Errorf("stderr does not say where the results went:\n%s", stderr)
				}
				f := readResults(t, out)
				if !f.Complete || len(f.Runs) != 2 {
					t.Errorf("copy: complete=%v runs=%d", f.Complete, len(f.Runs))
				}
				t.Logf("stderr:\n%s", stderr)
			})
		}
	}
}

// TestSaveFailsThenRecovers: a checkpoint that cannot be written (the disk
// filled up during the run) does not make the run start a second file
// once there is room again: the library ends with one run, complete.
func TestSaveFailsThenRecovers(t *testing.T) {
	home := withHome(t)
	dataDir := filepath.Join(home, "data")
	os.MkdirAll(dataDir, 0o755)
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	if err := syscall.Mount("tmpfs", dataDir, "tmpfs", 0, "size=512k,mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dataDir, syscall.MNT_DETACH) })

	const requests = 2
	var filler []string
	fillDisk := func() {
		block := make([]byte, 4096)
		for i := 0; ; i++ {
			name := filepath.Join(dataDir, "filler"+strconv.Itoa(i))
			if os.WriteFile(name, block, 0o644) != nil {
				os.Remove(name)
				return
			}
			filler = append(filler, name)
		}
	}
	cfg := fast()
	// The simulator's fault hook sees each request first: the disk fills
	// up as level 2 starts (so the checkpoint after it fails) and has room
	// again when level 3 starts.
	cfg.Faults = func(n int64) sim.Fault {
		switch n {
		case prompt.MeasuredRequest(0, requests, 1, 0):
			fillDisk()
		case prompt.MeasuredRequest(0, requests, 2, 0):
			for _, f := range filler {
				os.Remove(f)
			}
		}
		return sim.FaultNone
	}
	url := startSim(t, cfg)
	code, _, stderr := runCLI("run", "--endpoint", url, "--concurrency", "1,1,1", "--requests", strconv.Itoa(requests),
		"--warmup", "0", "--input-tokens", "16", "--output-tokens", "4")
	if code != exitOK || !strings.Contains(stderr, "the disk is full") || !strings.Contains(stderr, "saved in the library") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	lib, _ := storage.OpenLibrary(dataDir)
	list, err := lib.List()
	if err != nil || len(list) != 1 || !list[0].Complete || len(list[0].Levels) != 3 {
		t.Fatalf("library: %+v %v: want one complete run of 3 levels", list, err)
	}
}
