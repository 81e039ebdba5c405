package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/compare/comparetest"
	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/plans"
	"github.com/kovara/desktop/plans/planstest"
)

// writeDoc saves d as a results file in dir, its local naming an
// endpoint that must never be reported.
func writeDoc(t *testing.T, dir, name string, d plans.Doc) string {
	t.Helper()
	data, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func synthRun(t *testing.T, seed uint64) *results.File {
	t.Helper()
	f := comparetest.SynthFile(seed, []int{1, 4}, comparetest.Typical(1, 20, 32))
	f.Local.Endpoint, f.Local.EndpointHost, f.Local.EndpointName = "http://attic-box.lan:8080", "attic-box.lan", "Attic rig"
	return f
}

// TestReportFormats: each format of one run, and md and csv of two runs
// compared, from the files as given; nothing of the endpoint in md, csv
// or html.
func TestReportFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeDoc(t, dir, "a.json", plans.Kovara{File: synthRun(t, 1)})
	b := writeDoc(t, dir, "b.json", plans.Kovara{File: synthRun(t, 2)})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", a}, "| Concurrency | OK / err | Output (tok/s) |"},
		{[]string{"report", a, "--format", "csv"}, "Concurrency,OK,err,Output (tok/s),"},
		{[]string{"report", "--format", "md", a, b}, "| Concurrency | Metric | [1]"},
		{[]string{"report", a, b, "--format", "csv"}, "Concurrency,Metric,Unit,Run,Label,Value,Change (%),Better"},
		{[]string{"report", a, "--format", "html"}, "<html"},
		{[]string{"report", a, "--format", "jsonl"}, `{"set":0,"where":"local.levels[0]","level":1,"user":0,`},
	} {
		code, stdout, stderr := runCLI(c.args...)
		if code != exitOK {
			t.Fatalf("%q: exit %d: %s", c.args, code, stderr)
		}
		if !strings.Contains(stdout, c.want) {
			t.Errorf("%q: no %q in:\n%s", c.args, c.want, stdout)
		}
		if slicesContain(c.args, "jsonl") {
			if got, want := strings.Count(stdout, "\n"), 40; got != want {
				t.Errorf("jsonl: %d lines, want %d (one per request)", got, want)
			}
			continue
		}
		for _, p := range []string{"attic-box", "Attic rig"} {
			if strings.Contains(stdout, p) {
				t.Errorf("%q reports the endpoint (%q)", c.args, p)
			}
		}
	}
}

func slicesContain(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestReportToFile writes -o FILE, a CSV with one header row and a row
// per probe of a real llama-server's capacity search.
func TestReportToFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := writeDoc(t, dir, "capacity.json", plans.NewCapacity(planstest.LlamaCapacity(t)))
	out := filepath.Join(dir, "capacity.csv")
	if code, _, stderr := runCLI("report", in, "--format", "csv", "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 1+len(planstest.LlamaCapacity(t).Probes); got != want {
		t.Errorf("%d records, want %d (a header and a row per probe)", got, want)
	}
}

// TestReportRefuses: what cannot be written is said, with exit 2.
func TestReportRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeDoc(t, dir, "a.json", plans.Kovara{File: synthRun(t, 1)})
	b := writeDoc(t, dir, "b.json", plans.Kovara{File: synthRun(t, 2)})
	var stages string
	for _, c := range planstest.Cases() {
		if c.Doc.Kind().ID == results.PlanStages {
			stages = writeDoc(t, dir, "stages.json", c.Doc)
			break
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "give one run"},
		{[]string{"report", a, "--format", "pdf"}, `--format "pdf" is not one of md, csv, html, jsonl`},
		{[]string{"report", a, b, "--format", "jsonl"}, "writes one run's requests"},
		{[]string{"report", a, stages}, "compare takes runs of one kind"},
		{[]string{"report", stages, "--format", "jsonl"}, "no raw samples"},
		{[]string{"report", filepath.Join(dir, "missing.json")}, "kovara-bench report:"},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != exitBadInput || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", c.args, code, stderr, exitBadInput, c.want)
		}
	}
}
