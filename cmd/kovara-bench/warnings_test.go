package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/sim"
)

// TestWarningsInRunAndValidate: for each kind of warning a simulator
// personality or fault makes, `run` prints every warning results.Warnings
// computes from the file it wrote, in its words (problems above the table,
// notes below), and `validate` lists them above the payload and exits 1
// while there is a problem, unless --accept-problems.
func TestWarningsInRunAndValidate(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cases := []struct {
		name  string
		cfg   func(*sim.Config)
		kind  string
		flags []string // more run flags
		again bool     // run twice with these flags; the second is checked
	}{
		{"a fifth of the requests answer 503", func(c *sim.Config) {
			c.Faults = func(n int64) sim.Fault {
				if n%5 == 4 {
					return sim.Fault503
				}
				return sim.FaultNone
			}
		}, results.WarnFailed, nil, false},
		{"the server refuses ignore_eos", func(c *sim.Config) { c.Personality = sim.Strict }, results.WarnIgnoreEOS, nil, false},
		{"no usage", func(c *sim.Config) { c.NoUsage = true }, results.WarnChunkCounts, nil, false},
		{"prompts from the server's cache", func(c *sim.Config) { c.Personality = sim.LlamaCpp }, results.WarnPromptCache, []string{"--seed", "7"}, true},
		{"GPU telemetry lost", func(*sim.Config) {}, results.WarnTelemetry, []string{"--gpu", down.URL + "/metrics"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := fast()
			tc.cfg(&cfg)
			out := filepath.Join(t.TempDir(), "r.json")
			args := append(append([]string{"run", "--endpoint", startSim(t, cfg), "-o", out}, smallFlags...), tc.flags...)
			if tc.again {
				if code, _, stderr := runCLI(args...); code != exitOK {
					t.Fatalf("first run: exit %d: %s", code, stderr)
				}
			}
			code, stdout, stderr := runCLI(args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			f, err := results.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			ws := results.Warnings(f)
			problems, _ := results.Split(ws)
			table := strings.Index(stdout, "TTFT p50")
			kinds := map[string]bool{}
			for _, w := range ws {
				kinds[w.Kind] = true
				line := "note: " + w.Text
				if w.Severity == results.SeverityProblem {
					line = "  problem: " + w.Text
				}
				at := strings.Index(stdout, line+"\n")
				if at < 0 || (at < table) != (w.Severity == results.SeverityProblem) {
					t.Errorf("run: %q is not where a %s goes:\n%s", line, w.Severity, stdout)
				}
			}
			if !kinds[tc.kind] {
				t.Errorf("no %s warning in %+v", tc.kind, ws)
			}

			code, payload, stderr := runCLI("validate", out)
			want := exitOK
			if len(problems) > 0 {
				want = exitFailed
			}
			if code != want || !strings.HasPrefix(payload, "{") {
				t.Errorf("validate: exit %d, want %d; stdout %.40q", code, want, payload)
			}
			for _, w := range ws {
				line := "  " + string(w.Severity) + ": " + w.Text + "\n"
				if !strings.Contains(stderr, line) {
					t.Errorf("validate does not list %q:\n%s", line, stderr)
				}
			}
			if code, accepted, _ := runCLI("validate", "--accept-problems", out); code != exitOK || accepted != payload {
				t.Errorf("validate --accept-problems: exit %d, payload changed: %v", code, accepted != payload)
			}
		})
	}
}
