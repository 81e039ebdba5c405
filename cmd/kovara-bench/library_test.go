package main

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// withHome gives one test its own app folders (the variable is process
// wide, so these tests do not run in parallel).
func withHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv(storage.HomeEnv, home)
	return home
}

func TestRunsGoIntoTheLibrary(t *testing.T) {
	home := withHome(t)
	url := startSim(t, fast())
	code, _, stderr := runCLI(append([]string{"run", "--endpoint", url}, smallFlags...)...)
	if code != exitOK || !strings.Contains(stderr, "saved in the library as ") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "results written to") {
		t.Errorf("no -o given, so no extra copy should be written: %s", stderr)
	}
	files, _ := filepath.Glob(filepath.Join(home, "data", "results", "*.json"))
	if len(files) != 1 {
		t.Fatalf("library holds %d files, want 1", len(files))
	}
	readResults(t, files[0])

	// A second run of another model, then history with and without a filter.
	cfg := fast()
	cfg.Models = []string{"other-model-3b"}
	url2 := startSim(t, cfg)
	copyPath := filepath.Join(t.TempDir(), "copy.json")
	if code, _, stderr := runCLI(append([]string{"run", "--endpoint", url2, "-o", copyPath}, smallFlags...)...); code != exitOK {
		t.Fatal(stderr)
	}
	readResults(t, copyPath)
	code, stdout, _ := runCLI("history")
	if code != exitOK || !strings.Contains(stdout, "kovara-sim-8b") || !strings.Contains(stdout, "other-model-3b") || !strings.Contains(stdout, "1,4") {
		t.Errorf("history:\n%s", stdout)
	}
	_, stdout, _ = runCLI("history", "--model", "other")
	if strings.Contains(stdout, "kovara-sim-8b") || !strings.Contains(stdout, "other-model-3b") {
		t.Errorf("history --model other:\n%s", stdout)
	}
	// A corrupt file shows up with its reason.
	os.WriteFile(filepath.Join(home, "data", "results", "junk.json"), []byte("{"), 0o644)
	_, stdout, _ = runCLI("history")
	if !strings.Contains(stdout, "junk") || !strings.Contains(stdout, "unreadable") {
		t.Errorf("corrupt file not listed:\n%s", stdout)
	}
}

// TestSIGKILLDuringSecondLevel kills the CLI outright while its second level
// runs: the library must hold a valid, incomplete file with the first level.
func TestSIGKILLDuringSecondLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	home := withHome(t)
	bin := buildBinary(t)
	cfg := fast()
	cfg.TokenInterval = 5 * time.Millisecond
	url := startSim(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--endpoint", url, "--concurrency", "2,2,2",
		"--requests", "20", "--warmup", "0", "--input-tokens", "32", "--output-tokens", "20")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "level 2 of 3") {
			time.Sleep(150 * time.Millisecond)
			cmd.Process.Kill()
			break
		}
	}
	cmd.Wait()
	lib, err := storage.OpenLibrary(filepath.Join(home, "data"))
	if err != nil {
		t.Fatal(err)
	}
	list, err := lib.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("library after SIGKILL: %+v, %v", list, err)
	}
	s := list[0]
	if s.Unreadable != "" || s.Complete || len(s.Levels) != 1 {
		t.Fatalf("summary %+v: want a readable, incomplete file with one level", s)
	}
	f, err := lib.Load(s.ID)
	if err != nil || f.Complete || len(f.Runs) != 1 || f.Runs[0].Metrics.RequestsOK != 20 {
		t.Fatalf("file: %v", err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(home, "data", "results", ".*")); len(leftovers) > 0 {
		// A temp file from an interrupted write may remain; it must never
		// be mistaken for a run.
		for _, l := range list {
			if strings.HasPrefix(l.ID, ".") {
				t.Errorf("temp file listed as a run: %s", l.ID)
			}
		}
	}
}

func TestCompareNamesDifferences(t *testing.T) {
	withHome(t)
	dir := t.TempDir()
	run := func(name string, cfg sim.Config, extra ...string) string {
		url := startSim(t, cfg)
		out := filepath.Join(dir, name+".json")
		args := append([]string{"run", "--endpoint", url, "-o", out}, smallFlags...)
		if code, _, stderr := runCLI(append(args, extra...)...); code != exitOK {
			t.Fatal(stderr)
		}
		return out
	}
	a := run("a", fast())
	b := run("b", fast())
	c := run("c", fast(), "--output-tokens", "6")
	code, stdout, stderr := runCLI("compare", a, b)
	if code != exitOK || !strings.HasPrefix(stdout, "These runs are comparable") || !strings.Contains(stdout, "output tok/s") || !strings.Contains(stdout, "[2] b") {
		t.Errorf("compare a b: %d %s\n%s", code, stderr, stdout)
	}
	_, stdout, _ = runCLI("compare", a, b, c)
	if !strings.HasPrefix(stdout, "Not comparable") || !strings.Contains(stdout, "output tokens: 8 | 8 | 6") {
		t.Errorf("compare a b c:\n%s", stdout)
	}
	// Library ids work as well as paths.
	lib, _ := openLibrary()
	list, _ := lib.List()
	if len(list) < 2 {
		t.Fatalf("library has %d runs", len(list))
	}
	code, stdout, stderr = runCLI("compare", list[0].ID, list[1].ID)
	if code != exitOK || !strings.Contains(stdout, "comparable") {
		t.Errorf("compare by id: %d %s %s", code, stdout, stderr)
	}
	code, _, stderr = runCLI("compare", a, "no-such-run")
	if code != exitBadInput || !strings.Contains(stderr, "neither a results file nor a run") {
		t.Errorf("compare with a bad id: %d %s", code, stderr)
	}
}

func TestManifestMakesHardwareRun(t *testing.T) {
	withHome(t)
	cfg := fast()
	cfg.Models = []string{"qwen3-8b-awq"}
	url := startSim(t, cfg)
	manifest := filepath.Join(t.TempDir(), "kovara.yaml")
	os.WriteFile(manifest, []byte(`name: Qwen3 8B on one 4090
model: {id: Qwen/Qwen3-8B, revision: 0123456789abcdef}
engine: {name: vllm, version: 0.11.0}
hardware: {accelerator: NVIDIA GeForce RTX 4090, gpu_count: 1}
precision: awq-int4
parallelism: {tensor: 1, pipeline: 1}
profiles:
  quick: {input_tokens: 64, output_tokens: 8, concurrency: [1, 2], requests: 6, warmup: 1}
`), 0o644)
	out := filepath.Join(t.TempDir(), "r.json")
	// The alias is served; the profile sets the plan; --requests overrides it.
	code, stdout, stderr := runCLI("run", "--endpoint", url, "--manifest", manifest, "--model", "qwen3-8b-awq", "--requests", "4", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f := readResults(t, out)
	r := f.Runs[0]
	if len(f.Runs) != 2 || r.RunKind != "hardware" || r.ModelID != "Qwen/Qwen3-8B" || *r.Profile != "quick" || r.Requests != 4 || r.InputTokens != 64 || *r.GPUCount != 1 || *r.Precision != "awq-int4" {
		t.Errorf("hardware run %+v", r)
	}
	if f.Manifest == nil || !strings.HasPrefix(f.Manifest.Revision, "r") || len(f.Manifest.ContentHash) != 64 {
		t.Errorf("manifest ref %+v", f.Manifest)
	}
	if !strings.Contains(stderr, "alias") {
		t.Errorf("the alias warning is missing: %s", stderr)
	}
	_ = stdout
	// A manifest whose model is not served, and a broken manifest.
	os.WriteFile(manifest, []byte("model: {id: Qwen/Qwen3-8B}\nprofiles:\n  quick: {concurency: [1]}\n"), 0o644)
	code, _, stderr = runCLI("run", "--endpoint", url, "--manifest", manifest)
	if code != exitBadInput || !strings.Contains(stderr, "kovara.yaml:3: profiles.quick.concurency") {
		t.Errorf("broken manifest: %d %s", code, stderr)
	}
	os.WriteFile(manifest, []byte("model: {id: Qwen/Qwen3-8B}\n"), 0o644)
	code, _, stderr = runCLI("run", "--endpoint", url, "--manifest", manifest, "--requests", "4", "--concurrency", "1")
	if code != exitBadInput || !strings.Contains(stderr, `does not serve "Qwen/Qwen3-8B"`) || !strings.Contains(stderr, "qwen3-8b-awq") {
		t.Errorf("unserved manifest model: %d %s", code, stderr)
	}
}

func TestSavedEndpointByName(t *testing.T) {
	home := withHome(t)
	url := startSim(t, fast())
	store := storage.OpenEndpoints(filepath.Join(home, "config"))
	if err := store.Put(storage.SavedEndpoint{Name: "gpu box", URL: url, VerifyTLS: true}, ""); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(append([]string{"run", "--endpoint", "gpu box"}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lib, _ := openLibrary()
	list, _ := lib.List()
	if len(list) != 1 || list[0].EndpointName != "gpu box" {
		t.Errorf("library: %+v", list)
	}
	code, _, stderr = runCLI("run", "--endpoint", "no such box")
	if code != exitBadInput || !strings.Contains(stderr, "not a saved endpoint") {
		t.Errorf("unknown name: %d %s", code, stderr)
	}
}

func TestImportCommand(t *testing.T) {
	withHome(t)
	py := filepath.Join("..", "..", "engine", "results", "testdata", "python_cli.json")
	code, stdout, stderr := runCLI("import", py)
	if code != exitOK || !strings.Contains(stdout, "imported") {
		t.Fatalf("import: %d %s %s", code, stdout, stderr)
	}
	code, _, stderr = runCLI("import", py)
	if code != exitFailed || !strings.Contains(stderr, "already in the library") {
		t.Errorf("second import: %d %s", code, stderr)
	}
	_, stdout, _ = runCLI("history")
	if strings.Count(stdout, "\n") != 2 {
		t.Errorf("history after import:\n%s", stdout)
	}

	// A folder: every .json file in it, one count at the end.
	dir := t.TempDir()
	data, err := os.ReadFile(py)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "same.json"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "other.json"), []byte(strings.Replace(string(data), `"seed": 7`, `"seed": 8`, 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644)
	code, stdout, stderr = runCLI("import", dir)
	if code != exitFailed || !strings.Contains(stdout, "1 imported, 1 already in the library, 1 unreadable: broken.json cannot be imported") {
		t.Errorf("import of a folder: %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr = runCLI("import", t.TempDir()); code != exitBadInput || !strings.Contains(stderr, "no .json files") {
		t.Errorf("import of an empty folder: %d %s", code, stderr)
	}
}

func TestRunWithGPUShowsEnergy(t *testing.T) {
	withHome(t)
	cfg := fast()
	cfg.TokenInterval = 5 * time.Millisecond
	url := startSim(t, cfg)
	page, err := os.ReadFile(filepath.Join("..", "..", "hw", "testdata", "nvidia_gpu_exporter_3090_x2.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(page) }))
	defer exp.Close()
	code, stdout, stderr := runCLI("run", "--endpoint", url, "--gpu", exp.URL+"/metrics", "--concurrency", "1,2",
		"--requests", "4", "--warmup", "0", "--input-tokens", "32", "--output-tokens", "60")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Tokens per J") || !strings.Contains(stdout, "GPU power from") {
		t.Errorf("summary:\n%s", stdout)
	}
	code, _, stderr = runCLI("run", "--endpoint", url, "--gpu", "nvidia", "--concurrency", "1", "--requests", "1")
	if code != exitBadInput || !strings.Contains(stderr, "--gpu") {
		t.Errorf("a bad --gpu: exit %d %s", code, stderr)
	}
}

// TestHistoryKindLine: `kovara-bench history` names a settings
// comparison's run by its setting and round, as the app's History does
// (storage.Summary.KindLine).
func TestHistoryKindLine(t *testing.T) {
	home := withHome(t)
	lib, err := storage.OpenLibrary(filepath.Join(home, "data"))
	if err != nil {
		t.Fatal(err)
	}
	f := comparetest.Session([]int{1, 8}, func(r *results.Run) { r.RunKind = results.RunKindProtocol })
	f.Local.Tune = &results.TuneRef{ID: "tune-1", Setting: "np8", Round: 2, Rounds: 12}
	f.Local.Group = &results.RunGroup{ID: "tune-1-2", Index: 2, Of: 12}
	if _, err := lib.SaveTuneRun(f); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("history")
	if want := "np8, round 2/12"; code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, history lacks %q:\n%s%s", code, want, stdout, stderr)
	}
}
