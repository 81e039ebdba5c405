package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// export writes exactly what validate prints and the app saves: the
// results file without local. A run whose local section holds the
// endpoint's address, its error messages and its name exports none of them.
func TestExportWritesOnlyWhatIsPublished(t *testing.T) {
	t.Parallel()
	cfg := fast()
	cfg.Faults = func(n int64) sim.Fault {
		if n%7 == 3 {
			return sim.Fault503
		}
		return sim.FaultNone
	}
	url := startSim(t, cfg)
	dir := t.TempDir()
	file := filepath.Join(dir, "r.json")
	if code, _, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", file}, smallFlags...)...); code != exitOK && code != exitFailed {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	f := readResults(t, file)
	f.Local.EndpointName = "basement rig"
	data, err := results.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	private := []string{`"local"`, f.Local.Endpoint, f.Local.EndpointHost, "basement rig"}
	for _, l := range f.Local.Levels {
		for _, msgs := range l.Messages {
			private = append(private, msgs...)
		}
	}
	if len(private) < 5 {
		t.Fatalf("the run has no server error message to keep private: %+v", f.Local.Levels)
	}

	out := filepath.Join(dir, "export.json")
	// With problems (the 503s), nothing is written until they are accepted.
	if code, _, stderr := runCLI("export", file, "-o", out); code != exitFailed || !strings.Contains(stderr, "problem:") {
		t.Fatalf("export with problems: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("export wrote a file with unaccepted problems")
	}
	if code, _, stderr := runCLI("export", file, "-o", out, "--accept-problems"); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range private {
		if strings.Contains(string(got), secret) {
			t.Errorf("the exported file contains %q", secret)
		}
	}
	want, reasons := results.PublishCheck(data)
	if reasons != nil || string(got) != string(want) {
		t.Errorf("export differs from the published document (reasons %q)", reasons)
	}
	if _, stdout, _ := runCLI("validate", "--accept-problems", file); stdout != string(got) {
		t.Error("export and validate give different documents")
	}
	if g, err := results.Decode(got); err != nil || len(g.Runs) != len(f.Runs) {
		t.Errorf("the exported file is not a results file: %v", err)
	}
}

func TestExportRefuses(t *testing.T) {
	t.Parallel()
	url := startSim(t, fast())
	dir := t.TempDir()
	file := filepath.Join(dir, "r.json")
	if code, _, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", file}, smallFlags...)...); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	f := readResults(t, file)
	f.Local.Simulated = true
	sim, _ := results.Marshal(f)
	simFile := filepath.Join(dir, "sim.json")
	os.WriteFile(simFile, sim, 0o644)
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no output", []string{"export", file}, exitBadInput, "-o FILE"},
		{"no run", []string{"export", "-o", out}, exitBadInput, "exactly one run"},
		{"unknown run", []string{"export", "no-such-run", "-o", out}, exitBadInput, "neither a results file nor a run"},
		{"simulated", []string{"export", simFile, "-o", out}, exitFailed, "simulator"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, want %d; stderr %q should say %q", tc.name, code, tc.code, stderr, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%s: a file was written", tc.name)
		}
	}
	// The flags may also come first, and - writes to standard output.
	if code, stdout, stderr := runCLI("export", "-o", "-", file); code != exitOK || !strings.Contains(stdout, `"runs"`) {
		t.Errorf("export -o - FILE: exit %d, %s", code, stderr)
	}
}
