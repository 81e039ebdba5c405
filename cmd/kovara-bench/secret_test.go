package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/internal/keytest"
	"github.com/kovara/desktop/storage"
)

// TestKeyFromKeyringLeavesNoTrace stores a key in the real Secret Service
// for a saved endpoint, benchmarks through it by name, and scans every file
// under the data and config folders, and everything printed, for the key.
// It runs under scripts/with-keyring.sh (make test-keyring).
func TestKeyFromKeyringLeavesNoTrace(t *testing.T) {
	if os.Getenv("KOVARA_KEYRING_TEST") != "1" {
		t.Skip("needs a Secret Service: run under scripts/with-keyring.sh")
	}
	home := withHome(t)
	const key = "sk-kovara-keyring-3c1d9e"
	url := keytest.NewServer(t, fast(), key, nil).URL
	store := storage.OpenEndpoints(filepath.Join(home, "config"))
	if err := store.Put(storage.SavedEndpoint{Name: "secured box", URL: url, VerifyTLS: true}, ""); err != nil {
		t.Fatal(err)
	}
	keys := storage.NewKeyring(0)
	if err := keys.Set("secured box", key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keys.Delete("secured box") })
	out := filepath.Join(home, "data", "copy.json")
	code, stdout, stderr := runCLI(append([]string{"run", "--endpoint", "secured box", "--api-key-env", "NO_SUCH_VAR", "-o", out}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := keytest.ScanTree(t, home, key); n < 3 {
		t.Errorf("scanned only %d files; expected the results, the index and the endpoints", n)
	}
	if strings.Contains(stdout+stderr, key) {
		t.Error("the API key was printed")
	}
	// Without the keyring entry the server refuses, and the error says so
	// without the key in it.
	keys.Delete("secured box")
	code, _, stderr = runCLI("run", "--endpoint", "secured box", "--api-key-env", "NO_SUCH_VAR")
	if code != exitBadInput || !strings.Contains(stderr, "API key") {
		t.Errorf("no key: exit %d %s", code, stderr)
	}
}

// TestKeyFromEnvLeavesNoTrace is the same check for a key given through
// the environment; it runs everywhere.
func TestKeyFromEnvLeavesNoTrace(t *testing.T) {
	home := withHome(t)
	const key = "sk-kovara-env-51b0aa"
	url := keytest.NewServer(t, fast(), key, nil).URL
	t.Setenv("KOVARA_TEST_KEY", key)
	out := filepath.Join(home, "data", "copy.json")
	code, stdout, stderr := runCLI(append([]string{"run", "--endpoint", url, "--api-key-env", "KOVARA_TEST_KEY", "-o", out}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	keytest.ScanTree(t, home, key)
	if strings.Contains(stdout+stderr, key) {
		t.Error("the API key was printed")
	}
	code, _, stderr = runCLI("run", "--endpoint", url, "--api-key-env", "UNSET_KEY_VAR")
	if code != exitBadInput || !strings.Contains(stderr, "none was given: the key goes in the environment variable UNSET_KEY_VAR") {
		t.Errorf("no key: exit %d %s", code, stderr)
	}
}
