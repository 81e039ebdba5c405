package main

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/storage"
)

// keyServer is the simulator behind a bearer-key check.
func keyServer(t *testing.T, key string) string {
	t.Helper()
	s := sim.New(fast())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(401)
			w.Write([]byte(`{"error":{"message":"invalid api key"}}`))
			return
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// scanForKey fails the test if key appears in any file under root.
func scanForKey(t *testing.T, root, key string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		n++
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), key) {
			t.Errorf("the API key is written in %s", path)
		}
		return nil
	})
	return n
}

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
	url := keyServer(t, key)
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
	if n := scanForKey(t, home, key); n < 3 {
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
	url := keyServer(t, key)
	t.Setenv("KOVARA_TEST_KEY", key)
	out := filepath.Join(home, "data", "copy.json")
	code, stdout, stderr := runCLI(append([]string{"run", "--endpoint", url, "--api-key-env", "KOVARA_TEST_KEY", "-o", out}, smallFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	scanForKey(t, home, key)
	if strings.Contains(stdout+stderr, key) {
		t.Error("the API key was printed")
	}
	code, _, stderr = runCLI("run", "--endpoint", url, "--api-key-env", "UNSET_KEY_VAR")
	if code != exitBadInput || !strings.Contains(stderr, "none was given: the key goes in the environment variable UNSET_KEY_VAR") {
		t.Errorf("no key: exit %d %s", code, stderr)
	}
}
