package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kovara/desktop/engine/sim"
)

// countingSim serves cfg and counts the chat requests it gets.
func countingSim(t *testing.T, cfg sim.Config) (string, *atomic.Int64) {
	t.Helper()
	var chats atomic.Int64
	target := sim.New(cfg)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			chats.Add(1)
		}
		target.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL, &chats
}

// libraryFiles lists the results files in the library under home.
func libraryFiles(t *testing.T, home string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, "data", "results", "*.json"))
	return files
}

// TestRunWithoutAPIKeyExit2: against a server that lists its models to
// anyone but wants the key for chat (llama-server --api-key, as the
// simulator's APIKey models it), run and check exit 2 with the sentence
// that says where the key goes (the variable --api-key-env names), never
// the key; with the key the run goes through.
func TestRunWithoutAPIKeyExit2(t *testing.T) {
	home := withHome(t)
	cfg := fast()
	cfg.Personality, cfg.APIKey = sim.LlamaCpp, "sim-key-5150"
	url := startSim(t, cfg)
	out := filepath.Join(t.TempDir(), "r.json")
	run := func(extra ...string) (int, string, string) {
		args := append([]string{"run", "--endpoint", url, "-o", out}, smallFlags...)
		return runCLI(append(args, extra...)...)
	}

	code, _, stderr := run("--api-key-env", "KOVARA_TEST_UNSET_KEY")
	want := "kovara-bench: probing: the server wants an API key for chat requests (HTTP 401 on /v1/chat/completions; the server said: Invalid API Key), though it listed its models without one: the key goes in the environment variable KOVARA_TEST_UNSET_KEY (--api-key-env names another)"
	if code != exitBadInput || !strings.Contains(stderr, want) {
		t.Errorf("no key: exit %d, stderr:\n%s\nwant exit 2 and\n%s", code, stderr, want)
	}
	if os.Getenv("KOVARA_API_KEY") == "" {
		if code, _, stderr := run(); code != exitBadInput || !strings.Contains(stderr, "the key goes in the environment variable KOVARA_API_KEY (--api-key-env names another)") {
			t.Errorf("no key, default variable: exit %d, stderr:\n%s", code, stderr)
		}
	}

	t.Setenv("KOVARA_TEST_WRONG_KEY", "sk-wrong-3344")
	code, stdout, stderr := run("--api-key-env", "KOVARA_TEST_WRONG_KEY")
	if code != exitBadInput || !strings.Contains(stderr, "the server refused the API key (HTTP 401 on /v1/chat/completions; the server said: Invalid API Key): check the key for this endpoint; it goes in the environment variable KOVARA_TEST_WRONG_KEY") ||
		strings.Contains(stdout+stderr, "sk-wrong-3344") {
		t.Errorf("wrong key: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil || len(libraryFiles(t, home)) != 0 {
		t.Errorf("a run refused for its key left a results file")
	}

	// kovara-bench check, as the app's Test.
	code, stdout, _ = runCLI("check", "--api-key-env", "KOVARA_TEST_UNSET_KEY", url)
	if code != exitBadInput || !strings.HasPrefix(stdout, "Failed: probing: the server wants an API key for chat requests") ||
		!strings.Contains(stdout, "KOVARA_TEST_UNSET_KEY") || !strings.Contains(stdout, "Serving 1 model: kovara-sim-8b") {
		t.Errorf("check: exit %d:\n%s", code, stdout)
	}

	t.Setenv("KOVARA_TEST_RIGHT_KEY", "sim-key-5150")
	if code, _, stderr := run("--api-key-env", "KOVARA_TEST_RIGHT_KEY"); code != exitOK {
		t.Errorf("with the key: exit %d, stderr:\n%s", code, stderr)
	}
	if code, _, _ := runCLI("check", "--api-key-env", "KOVARA_TEST_RIGHT_KEY", url); code != exitOK {
		t.Errorf("check with the key: exit %d", code)
	}
}

// TestRunRefusedBeyondContext: a plan whose prompt and answer cannot fit
// the context the server reported at the endpoint check is refused with
// the numbers and exit 2, before any chat request, with no results file
// and nothing in the library; the capacity plan too.
func TestRunRefusedBeyondContext(t *testing.T) {
	home := withHome(t)
	cfg := fast()
	cfg.Personality, cfg.ContextLength = sim.LlamaCpp, 2048
	url, chats := countingSim(t, cfg)
	out := filepath.Join(t.TempDir(), "r.json")
	want := "kovara-bench: the plan asks for 3000-token prompts and 64-token answers, 3064 tokens, but the server's context holds 2048 (from /props default_generation_settings.n_ctx), so every request would be refused: lower --input-tokens or --output-tokens, or start the server with a larger context"
	for _, args := range [][]string{
		{"run", "--endpoint", url, "-o", out, "--input-tokens", "3000", "--output-tokens", "64", "--concurrency", "1", "--requests", "2"},
		{"run", "--plan", "capacity", "--endpoint", url, "-o", out, "--input-tokens", "3000", "--output-tokens", "64"},
	} {
		code, stdout, stderr := runCLI(args...)
		if code != exitBadInput || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 2 and\n%s", args, code, stderr, want)
		}
		if strings.Contains(stderr, "probing") || stdout != "" {
			t.Errorf("%v: went on past the check:\n%s%s", args, stdout, stderr)
		}
	}
	if n := chats.Load(); n != 0 {
		t.Errorf("%d chat requests were sent", n)
	}
	if _, err := os.Stat(out); err == nil || len(libraryFiles(t, home)) != 0 {
		t.Errorf("a refused plan left a results file")
	}
	// A plan that fits the same server runs.
	if code, _, stderr := runCLI(append([]string{"run", "--endpoint", url, "-o", out}, smallFlags...)...); code != exitOK {
		t.Errorf("a plan that fits: exit %d:\n%s", code, stderr)
	}
}
