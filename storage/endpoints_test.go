package storage

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestEndpointStore(t *testing.T) {
	t.Parallel()
	s := OpenEndpoints(t.TempDir())
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Fatalf("empty store: %v %v", list, err)
	}
	a := SavedEndpoint{Name: "4090 box", URL: "http://10.0.0.5:8000/v1", VerifyTLS: true, Timeout: 30 * time.Second, GPU: "ssh://me@10.0.0.5", Wall: "http://192.168.1.40"}
	b := SavedEndpoint{Name: "lab", URL: "https://lab.home:8443", VerifyTLS: false}
	for _, e := range []SavedEndpoint{a, b} {
		if err := s.Put(e, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(SavedEndpoint{Name: "lab", URL: "http://x"}, ""); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate name: %v", err)
	}
	got, ok, err := s.Get("4090 box")
	if err != nil || !ok || got != a {
		t.Errorf("Get = %+v %v %v, want %+v", got, ok, err, a)
	}
	got, _, _ = s.Get("lab")
	if got.VerifyTLS || got.WithKey("k").InsecureTLS != true {
		t.Errorf("verify-TLS off did not survive: %+v", got)
	}
	// Rename keeps one entry.
	a2 := a
	a2.Name = "big box"
	if err := s.Put(a2, a.Name); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if len(list) != 2 || list[0].Name != "big box" || list[1].Name != "lab" {
		t.Errorf("after rename: %+v", list)
	}
	if err := s.Delete("lab"); err != nil {
		t.Fatal(err)
	}
	list, _ = s.List()
	if len(list) != 1 {
		t.Errorf("after delete: %+v", list)
	}
	data, _ := os.ReadFile(s.path)
	if strings.Contains(string(data), "api_key") || !strings.Contains(string(data), "keyring") {
		t.Errorf("file:\n%s", data)
	}
}

func TestEndpointValidateAndBadFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    SavedEndpoint
		want string
	}{
		{SavedEndpoint{URL: "http://h"}, "name"},
		{SavedEndpoint{Name: "x", URL: "ftp://h"}, "only http"},
		{SavedEndpoint{Name: "x", URL: "http://h", GPU: "nvidia"}, "GPU telemetry"},
		{SavedEndpoint{Name: "x", URL: "http://h", Wall: "mqtt://broker/plug"}, "wall power"},
	}
	for _, tc := range tests {
		if err := tc.e.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.e, err, tc.want)
		}
	}
	dir := t.TempDir()
	s := OpenEndpoints(dir)
	os.WriteFile(s.path, []byte("endpoints:\n  - name: a\n    url: http://h\n    colour: red\n"), 0o600)
	if _, err := s.List(); err == nil || !strings.Contains(err.Error(), "line 4") || !strings.Contains(err.Error(), "colour") {
		t.Errorf("unknown key: %v", err)
	}
}

// lockedKeys is a keyring that refuses everything, and counts the asks.
type lockedKeys struct{ asked int }

func (k *lockedKeys) Get(string) (string, error) { k.asked++; return "", ErrKeyringLocked }
func (k *lockedKeys) Set(string, string) error   { k.asked++; return ErrKeyringLocked }
func (k *lockedKeys) Delete(string) error        { k.asked++; return ErrKeyringLocked }

// An endpoint saved without a key says so in its file, and its key is
// never asked of the keyring (a desktop without one was told at every run
// that it could not keep a key nobody gave); one saved before the field
// existed asks as before.
func TestEndpointSavedWithoutKey(t *testing.T) {
	t.Parallel()
	s := OpenEndpoints(t.TempDir())
	if err := s.Put(SavedEndpoint{Name: "open box", URL: "http://10.0.0.5:8080", VerifyTLS: true, NoKey: true}, ""); err != nil {
		t.Fatal(err)
	}
	got, _, err := s.Get("open box")
	if err != nil || !got.NoKey {
		t.Fatalf("NoKey did not survive the file: %+v %v", got, err)
	}
	keys := &lockedKeys{}
	if key, err := got.Key(keys); key != "" || !errors.Is(err, ErrNoKey) || keys.asked != 0 {
		t.Errorf("Key = %q, %v after %d keyring asks; want ErrNoKey and none", key, err, keys.asked)
	}
	old := `endpoints:
  - name: old box
    url: http://10.0.0.6:8080
`
	if err := os.WriteFile(s.path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, _ = s.Get("old box")
	if _, err := got.Key(keys); got.NoKey || !errors.Is(err, ErrKeyringLocked) || keys.asked != 1 {
		t.Errorf("an endpoint saved before no_key: NoKey %v, err %v, %d asks; want the keyring asked", got.NoKey, err, keys.asked)
	}
}
