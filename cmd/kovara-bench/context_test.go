package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// fastContext is the context demo's server, fast enough for a test.
func fastContext() sim.Config {
	cfg := sim.ContextDemo()
	cfg.PrefillRate, cfg.TokenInterval = 200000, time.Millisecond
	return cfg
}

func TestRunContext(t *testing.T) {
	t.Parallel()
	url := startSim(t, fastContext())
	out := filepath.Join(t.TempDir(), "context.json")
	code, stdout, stderr := runCLI("run", "--plan", "context", "--endpoint", url, "--depths", "0,1k,2k", "--output-tokens", "16",
		"--repeats", "2", "--users", "2", "-o", out, "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.ContextDoc.Decode(data)
	if err != nil || len(res.Depths) != 3 || res.Settings.Users != 2 || res.Settings.Repeats != 2 || res.Settings.OutputTokens != 16 || res.Settings.DepthsChosen {
		t.Fatalf("%v %+v", err, res)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; last != res.Headline() || !strings.HasPrefix(last, "From a short prompt to 2048 tokens of context, decode ") {
		t.Errorf("last line %q, want the headline %q", last, res.Headline())
	}
	for _, want := range []string{"Context plan (Kovara Desktop)", "context 16384 tokens (/props", "16-token answers, 2 users × 2 repeats a depth",
		"Depth  ", "Prompt tokens got", "Cold TTFT ms", "Prefill tok/s", "Decode tok/s", "Cached TTFT ms", "Cached tokens",
		"Server prefill tok/s", "Server decode tok/s", "short prompt  ", "1k  ", "2k  ", "4 / 4",
		res.Method(), res.PromptsLine()} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	assertRowsPrinted(t, stdout, res.Table())
	code, _, stderr = runCLI("validate", out)
	if code != exitFailed || !strings.Contains(stderr, "context plan result") {
		t.Errorf("validate: exit %d, %s", code, stderr)
	}
}

// assertRowsPrinted: every row of the shared table is on one printed line.
func assertRowsPrinted(t *testing.T, out string, tab results.Table) {
	t.Helper()
	for _, row := range tab.Rows {
		found := false
		for _, l := range strings.Split(out, "\n") {
			all := true
			for _, cell := range row {
				all = all && strings.Contains(l, cell)
			}
			found = found || all
		}
		if !found {
			t.Errorf("no printed line holds the row %q:\n%s", row, out)
		}
	}
}

func TestDemoContext(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo.json")
	code, stdout, stderr := runCLI("demo", "--plan", "context", "--depths", "0,1k", "--repeats", "1", "-o", out, "--quiet")
	if code != exitOK || !strings.Contains(stdout, "— SIMULATOR") || !strings.Contains(stderr, "a llama.cpp-like fake server") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := results.ContextDoc.Decode(data)
	if err != nil || !res.Local.Simulated || len(res.Depths) != 2 || res.Depths[1].CachedTokens == nil || res.Depths[1].CachedTokens.P50 < 1000 {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestContextFlags(t *testing.T) {
	t.Parallel()
	url := startSim(t, fastContext())
	small := startSim(t, func() sim.Config { c := fastContext(); c.ContextLength = 8192; return c }())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--endpoint", url, "--depths", "0,1k"}, "--depths applies to --plan context, not to --plan kovara"},
		{[]string{"--endpoint", url, "--repeats", "2"}, "--repeats applies to --plan context, not to --plan kovara"},
		{[]string{"--endpoint", url, "--plan", "context", "--depths", "1x"}, `--depths "1x": "1x" is not a depth`},
		{[]string{"--endpoint", url, "--plan", "context", "--repeats", "0"}, "--repeats 0: give at least 1"},
		{[]string{"--endpoint", url, "--plan", "context", "--users", "0"}, "--users 0: give at least 1 user"},
		{[]string{"--endpoint", url, "--plan", "context", "--output-tokens", "1"}, "answers of at least 2 tokens"},
		{[]string{"--endpoint", url, "--plan", "context", "--concurrency", "1,2"}, "--concurrency applies to --plan kovara or specdec or tune, not to --plan context"},
		// Deeper than the context the server reports: refused before any
		// request, with what to lower and the family's fix.
		{[]string{"--endpoint", small, "--plan", "context", "--depths", "0,8k"}, "depth 8192 does not fit"},
		{[]string{"--endpoint", small, "--plan", "context", "--depths", "0,8k"}, "lower the depths (--depths) or the answer (--output-tokens)"},
	} {
		code, stdout, stderr := runCLI(append([]string{"run", "--quiet"}, tc.args...)...)
		if code != exitBadInput || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q and nothing run", tc.args, code, stderr, tc.want)
		}
	}
}

// TestCompareContext: kovara-bench compare takes two context results and
// shows them depth by depth.
func TestCompareContext(t *testing.T) {
	t.Parallel()
	url := startSim(t, fastContext())
	dir := t.TempDir()
	run := func(name string) string {
		out := filepath.Join(dir, name)
		code, _, stderr := runCLI("run", "--plan", "context", "--endpoint", url, "--depths", "0,1k", "--output-tokens", "8", "--repeats", "1", "-o", out, "--quiet")
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr:\n%s", name, code, stderr)
		}
		return out
	}
	a, b := run("a.json"), run("b.json")
	code, stdout, stderr := runCLI("compare", a, b)
	if code != exitOK || !strings.HasPrefix(stdout, "These context results measured the same thing.") ||
		!strings.Contains(stdout, "decode, 1k (tok/s)") || !strings.Contains(stdout, "TTFT cached follow-up, short prompt (ms)") ||
		!strings.Contains(stdout, "a difference without brackets is within noise") {
		t.Errorf("compare: exit %d\n%s%s", code, stdout, stderr)
	}
}
