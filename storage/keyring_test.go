package storage

// Unit tests of the API key store. None needs a D-Bus session: the mapping
// runs against go-keyring's mock, the timeout against a backend that blocks,
// and "no session bus" against an address where nothing listens. The tests
// against a real Secret Service are in keyring_secretservice_test.go.
//
// go-keyring's MockInit swaps a package-global provider and offers no way
// back, and godbus keeps one shared session-bus connection per process; so
// the tests that depend on either run in a child process (runKeyringChild)
// and cannot spoil the real-keyring tests that share this binary.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	dbus "github.com/godbus/dbus/v5"
	keyring "github.com/zalando/go-keyring"
)

// testAPIKey returns a fresh random key that cannot occur by chance in any
// error text.
func testAPIKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "sk-kovara-test-" + hex.EncodeToString(b)
}

// checkKeyNotIn fails when key shows up in err's text (or in the text of
// anything err wraps).
func checkKeyNotIn(t *testing.T, key string, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), key) {
			t.Fatalf("API key leaked into an error message: %q", e.Error())
		}
	}
}

// checkLowercase fails when err's message starts with an upper-case letter.
func checkLowercase(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	r, _ := utf8.DecodeRuneInString(err.Error())
	if unicode.IsUpper(r) {
		t.Errorf("error message should start in lower case: %q", err.Error())
	}
}

const keyringChildEnv = "KOVARA_KEYRING_CHILD"

// keyringChild returns the scenario this test binary was started for by
// runKeyringChild, or "" in the normal (parent) run.
func keyringChild() string { return os.Getenv(keyringChildEnv) }

// runKeyringChild runs test (a top-level test name) again in a fresh copy
// of this test binary with scenario in KOVARA_KEYRING_CHILD and env added
// (later entries override the inherited environment). It fails unless the
// child passes; a child that skips makes the caller skip.
func runKeyringChild(t *testing.T, test, scenario string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), keyringChildEnv+"="+scenario), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("child %q:\n%s", scenario, out)
	switch {
	case err != nil:
		t.Fatalf("child %q failed: %v", scenario, err)
	case strings.Contains(string(out), "--- SKIP: "+test):
		t.Skipf("child %q skipped", scenario)
	case !strings.Contains(string(out), "--- PASS: "+test):
		t.Fatalf("child %q did not report a pass", scenario)
	}
}

// useKeyringBackend makes the next NewKeyring use b and skips the session-bus
// check, until the test ends.
func useKeyringBackend(t *testing.T, b keyringBackend) {
	t.Helper()
	oldBackend, oldCheck := newKeyringBackend, keyringBusCheck
	newKeyringBackend = func() keyringBackend { return b }
	keyringBusCheck = func() error { return nil }
	t.Cleanup(func() { newKeyringBackend, keyringBusCheck = oldBackend, oldCheck })
}

// exerciseKeys runs the contract every Keys must meet.
func exerciseKeys(t *testing.T, k Keys) {
	t.Helper()
	key1, key2 := testAPIKey(t), testAPIKey(t)
	names := []string{"lab", "my lab server", "Ünïcødé-端点-🚀", "a/b:c\td"}

	for _, name := range names {
		if _, err := k.Get(name); !errors.Is(err, ErrNoKey) {
			t.Fatalf("Get(%q) before Set: err = %v, want ErrNoKey", name, err)
		}
		if err := k.Set(name, key1+name); err != nil {
			t.Fatalf("Set(%q): %v", name, err)
		}
	}
	for _, name := range names {
		got, err := k.Get(name)
		if err != nil || got != key1+name {
			t.Fatalf("Get(%q) = %q, %v; want the key set for it", name, got, err)
		}
	}
	if err := k.Set("lab", key2); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	if got, err := k.Get("lab"); err != nil || got != key2 {
		t.Fatalf("after overwrite Get = %q, %v; want the new key", got, err)
	}
	for _, name := range names {
		if err := k.Delete(name); err != nil {
			t.Fatalf("Delete(%q): %v", name, err)
		}
		if err := k.Delete(name); err != nil {
			t.Fatalf("second Delete(%q): %v (a missing entry is not an error)", name, err)
		}
		_, err := k.Get(name)
		if !errors.Is(err, ErrNoKey) {
			t.Fatalf("Get(%q) after Delete: err = %v, want ErrNoKey", name, err)
		}
		checkLowercase(t, err)
	}

	if err := k.Set("lab", ""); err == nil {
		t.Fatal("Set with an empty key succeeded")
	} else {
		checkLowercase(t, err)
	}
	if err := k.Set("", key1); err == nil {
		t.Fatal("Set with an empty endpoint succeeded")
	} else {
		checkKeyNotIn(t, key1, err)
	}
	if _, err := k.Get(""); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Get(\"\") err = %v, want ErrNoKey", err)
	}
	if err := k.Delete(""); err != nil {
		t.Fatalf("Delete(\"\") = %v", err)
	}
}

func TestMemoryKeys(t *testing.T) {
	exerciseKeys(t, NewMemoryKeys())
}

func TestKeyringDefaultTimeout(t *testing.T) {
	if got := NewKeyring(0).(*osKeys).timeout; got != 5*time.Second {
		t.Fatalf("NewKeyring(0) timeout = %v, want 5s", got)
	}
	if got := NewKeyring(-time.Second).(*osKeys).timeout; got != DefaultKeyringTimeout {
		t.Fatalf("NewKeyring(-1s) timeout = %v, want the default", got)
	}
	if got := NewKeyring(250 * time.Millisecond).(*osKeys).timeout; got != 250*time.Millisecond {
		t.Fatalf("NewKeyring(250ms) timeout = %v", got)
	}
	if got := NewKeyring(0).(*osKeys).service; got != KeyringService {
		t.Fatalf("service = %q, want %q", got, KeyringService)
	}
}

// TestKeyringErrorMapping feeds the mapping the shapes of error that
// go-keyring, godbus and the Secret Service actually produce (the texts
// below were captured from go-keyring v0.2.8 against gnome-keyring 42).
func TestKeyringErrorMapping(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"not found", keyring.ErrNotFound, ErrNoKey},
		{"wrapped not found", fmt.Errorf("x: %w", keyring.ErrNotFound), ErrNoKey},
		{"service unknown", dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown",
			Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}}, ErrKeyringMissing},
		{"service unknown, pointer", &dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"}, ErrKeyringMissing},
		{"name has no owner", dbus.Error{Name: "org.freedesktop.DBus.Error.NameHasNoOwner", Body: []any{"nobody"}}, ErrKeyringMissing},
		{"no socket", errors.New("dial unix /nonexistent/bus: connect: no such file or directory"), ErrKeyringMissing},
		{"refused socket", errors.New("dial unix /tmp/bus: connect: connection refused"), ErrKeyringMissing},
		{"no address", errors.New("dbus: couldn't determine address of session bus"), ErrKeyringMissing},
		{"no dbus-launch", errors.New(`exec: "dbus-launch": executable file not found in $PATH`), ErrKeyringMissing},
		{"no collection", errors.New("Object does not exist at path “/org/freedesktop/secrets/collection/login”"), ErrKeyringMissing},
		{"is locked", dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked", Body: []any{"Cannot get secret of a locked object"}}, ErrKeyringLocked},
		{"unlock failed", errors.New("failed to unlock correct collection '/org/freedesktop/secrets/collection/login'"), ErrKeyringLocked},
		{"unlock default failed", errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'"), ErrKeyringLocked},
		{"prompt dismissed", errors.New("prompt dismissed"), ErrKeyringLocked},
		{"access denied", dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied", Body: []any{"Rejected"}}, ErrKeyringLocked},
		{"macos no ui", errors.New("security: SecKeychainItemCopyContent: User interaction is not allowed."), ErrKeyringLocked},
		{"no reply", dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply", Body: []any{"Did not receive a reply."}}, ErrKeyringTimeout},
		{"too big", keyring.ErrSetDataTooBig, keyring.ErrSetDataTooBig},
		{"something else", errors.New("org.example.Weird: the moon is full"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := classifyKeyringError(c.err); got != c.want {
				t.Fatalf("classify(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
	if got := classifyKeyringError(nil); got != nil {
		t.Fatalf("classify(nil) = %v", got)
	}
}

// TestKeyringMock runs the whole NewKeyring stack over go-keyring's own
// mock provider (in a child process; see the top of this file).
func TestKeyringMock(t *testing.T) {
	if keyringChild() != "mock" {
		runKeyringChild(t, "TestKeyringMock", "mock")
		return
	}
	keyringBusCheck = func() error { return nil }

	t.Run("contract", func(t *testing.T) {
		keyring.MockInit()
		exerciseKeys(t, NewKeyring(time.Second))
	})

	cases := []struct {
		name string
		err  error
		want error
	}{
		{"not found", keyring.ErrNotFound, ErrNoKey},
		{"service unknown", dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown",
			Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}}, ErrKeyringMissing},
		{"no socket", errors.New("dial unix /nonexistent/bus: connect: no such file or directory"), ErrKeyringMissing},
		{"no address", errors.New("dbus: couldn't determine address of session bus"), ErrKeyringMissing},
		{"is locked", dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked", Body: []any{"Cannot create an item in a locked collection"}}, ErrKeyringLocked},
		{"unlock failed", errors.New("failed to unlock correct collection '/org/freedesktop/secrets/collection/login'"), ErrKeyringLocked},
		{"prompt dismissed", errors.New("prompt dismissed"), ErrKeyringLocked},
		{"no reply", dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply", Body: []any{"Did not receive a reply."}}, ErrKeyringTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keyring.MockInitWithError(c.err)
			k := NewKeyring(time.Second)
			key := testAPIKey(t)

			_, err := k.Get("lab")
			if !errors.Is(err, c.want) {
				t.Fatalf("Get: err = %v, want %v", err, c.want)
			}
			checkLowercase(t, err)
			t.Logf("get: %v", err)

			err = k.Set("lab", key)
			if !errors.Is(err, c.want) {
				t.Fatalf("Set: err = %v, want %v", err, c.want)
			}
			checkKeyNotIn(t, key, err)
			checkLowercase(t, err)

			err = k.Delete("lab")
			if c.want == ErrNoKey {
				if err != nil {
					t.Fatalf("Delete of a missing entry: %v", err)
				}
			} else if !errors.Is(err, c.want) {
				t.Fatalf("Delete: err = %v, want %v", err, c.want)
			}
		})
	}

	t.Run("backend echoes the key", func(t *testing.T) {
		key := testAPIKey(t)
		keyring.MockInitWithError(dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied",
			Body: []any{"will not store " + key + " for you"}})
		err := NewKeyring(time.Second).Set("lab", key)
		if !errors.Is(err, ErrKeyringLocked) {
			t.Fatalf("err = %v, want ErrKeyringLocked", err)
		}
		checkKeyNotIn(t, key, err)
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Fatalf("expected the echoed key to be redacted: %q", err)
		}
	})

	t.Run("session fallback over the mock", func(t *testing.T) {
		keyring.MockInitWithError(errors.New("dial unix /nonexistent/bus: connect: no such file or directory"))
		var problems []error
		s := NewSessionKeys(NewKeyring(time.Second), func(err error) { problems = append(problems, err) })
		key := testAPIKey(t)
		if err := s.Set("lab", key); err != nil {
			t.Fatalf("Set: %v", err)
		}
		if got, err := s.Get("lab"); err != nil || got != key {
			t.Fatalf("Get = %q, %v", got, err)
		}
		if len(problems) != 1 || !errors.Is(problems[0], ErrKeyringMissing) {
			t.Fatalf("problems = %v, want one ErrKeyringMissing", problems)
		}
	})
}

// blockingBackend never answers until release is closed.
type blockingBackend struct {
	release chan struct{}
	calls   chan string
}

func (b blockingBackend) wait(op string) {
	b.calls <- op
	<-b.release
}
func (b blockingBackend) Get(_, _ string) (string, error) {
	b.wait("get")
	return "", keyring.ErrNotFound
}
func (b blockingBackend) Set(_, _, _ string) error { b.wait("set"); return nil }
func (b blockingBackend) Delete(_, _ string) error { b.wait("delete"); return nil }

func TestKeyringTimeout(t *testing.T) {
	b := blockingBackend{release: make(chan struct{}), calls: make(chan string, 10)}
	useKeyringBackend(t, b)
	const timeout = 150 * time.Millisecond
	k := NewKeyring(timeout)
	key := testAPIKey(t)
	released := false
	defer func() {
		if !released {
			close(b.release)
		}
	}()

	start := time.Now()
	_, err := k.Get("lab")
	took := time.Since(start)
	if !errors.Is(err, ErrKeyringTimeout) {
		t.Fatalf("Get: err = %v, want ErrKeyringTimeout", err)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Fatalf("Get gave up after %v, want about %v", took, timeout)
	}
	checkLowercase(t, err)
	t.Logf("get after %v: %v", took.Round(time.Millisecond), err)

	// The first call is still stuck in the backend: the next one waits for
	// it no longer than its own timeout, and never starts a second
	// goroutine.
	start = time.Now()
	err = k.Set("lab", key)
	took = time.Since(start)
	if !errors.Is(err, ErrKeyringTimeout) {
		t.Fatalf("Set: err = %v, want ErrKeyringTimeout", err)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Fatalf("Set gave up after %v, want about %v", took, timeout)
	}
	checkKeyNotIn(t, key, err)
	if n := len(b.calls); n != 1 {
		t.Fatalf("backend saw %d calls, want 1 (the stuck one)", n)
	}

	// Once the backend answers, the lingering goroutine ends and the
	// keyring is usable again.
	close(b.release)
	released = true
	deadline := time.Now().Add(5 * time.Second)
	for len(k.(*osKeys).busy) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the lingering goroutine never finished")
		}
		time.Sleep(time.Millisecond)
	}
	if err := k.Set("lab", key); err != nil {
		t.Fatalf("Set after the backend recovered: %v", err)
	}
	if err := k.Delete("lab"); err != nil {
		t.Fatalf("Delete after the backend recovered: %v", err)
	}
}

// TestKeyringNoSessionBus: with the session bus address pointing at a socket
// nobody listens on, or not set at all, every call fails fast with
// ErrKeyringMissing; nothing hangs and no dbus-daemon gets autolaunched.
func TestKeyringNoSessionBus(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("the keyring does not use D-Bus on " + runtime.GOOS)
	}
	switch keyringChild() {
	case "":
		sock := filepath.Join(t.TempDir(), "no-bus-here")
		t.Run("nonexistent socket", func(t *testing.T) {
			runKeyringChild(t, "TestKeyringNoSessionBus", "socket", "DBUS_SESSION_BUS_ADDRESS=unix:path="+sock)
		})
		t.Run("unset", func(t *testing.T) {
			runKeyringChild(t, "TestKeyringNoSessionBus", "unset", "DBUS_SESSION_BUS_ADDRESS=")
		})
		return
	case "unset":
		if sessionBusPresent() == nil {
			t.Skip("this machine has a session bus at /run/user/UID; godbus would find it")
		}
	}

	const timeout = 2 * time.Second
	k := NewKeyring(timeout)
	key := testAPIKey(t)
	start := time.Now()
	_, getErr := k.Get("lab")
	setErr := k.Set("lab", key)
	delErr := k.Delete("lab")
	took := time.Since(start)
	for op, err := range map[string]error{"get": getErr, "set": setErr, "delete": delErr} {
		if !errors.Is(err, ErrKeyringMissing) {
			t.Errorf("%s: err = %v, want ErrKeyringMissing", op, err)
		}
		checkKeyNotIn(t, key, err)
		checkLowercase(t, err)
		t.Logf("%s: %v", op, err)
	}
	if took > timeout {
		t.Fatalf("three calls took %v; each should fail at once", took)
	}
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); keyringChild() == "unset" && addr != "" {
		t.Fatalf("a session bus was autolaunched: %s", addr)
	}
	if msg := KeyringProblem(getErr); !strings.Contains(msg, "not available") {
		t.Fatalf("KeyringProblem = %q", msg)
	}
}

// fakeKeys is a Keys whose failure can be switched on and off.
type fakeKeys struct {
	mu  sync.Mutex
	err error // returned by every call while set
	mem Keys
}

func newFakeKeys() *fakeKeys { return &fakeKeys{mem: NewMemoryKeys()} }

func (f *fakeKeys) fail(err error) { f.mu.Lock(); f.err = err; f.mu.Unlock() }
func (f *fakeKeys) failing() error { f.mu.Lock(); defer f.mu.Unlock(); return f.err }

func (f *fakeKeys) Get(e string) (string, error) {
	if err := f.failing(); err != nil {
		return "", keyError("get", e, err, "fake failure", "")
	}
	return f.mem.Get(e)
}

func (f *fakeKeys) Set(e, k string) error {
	if err := f.failing(); err != nil {
		return keyError("set", e, err, "fake failure", k)
	}
	return f.mem.Set(e, k)
}

func (f *fakeKeys) Delete(e string) error {
	if err := f.failing(); err != nil {
		return keyError("delete", e, err, "fake failure", "")
	}
	return f.mem.Delete(e)
}

func TestSessionKeysFallback(t *testing.T) {
	for _, named := range []error{ErrKeyringMissing, ErrKeyringLocked, ErrKeyringTimeout} {
		t.Run(named.Error(), func(t *testing.T) {
			store := newFakeKeys()
			store.fail(named)
			var problems []error
			var s *SessionKeys
			s = NewSessionKeys(store, func(err error) {
				problems = append(problems, err)
				_ = s.Problem() // the callback may call back in: no deadlock
			})
			key, other := testAPIKey(t), testAPIKey(t)

			if err := s.Set("lab", key); err != nil {
				t.Fatalf("Set: %v (should fall back to memory)", err)
			}
			if !s.SessionOnly("lab") {
				t.Fatal("SessionOnly = false after a fallback")
			}
			if got, err := s.Get("lab"); err != nil || got != key {
				t.Fatalf("Get = %q, %v; want the session key", got, err)
			}
			if err := s.Set("other box", other); err != nil {
				t.Fatalf("second Set: %v", err)
			}
			if len(problems) != 1 || !errors.Is(problems[0], named) {
				t.Fatalf("problems reported = %v; want exactly one matching %v", problems, named)
			}
			if !errors.Is(s.Problem(), named) {
				t.Fatalf("Problem() = %v", s.Problem())
			}
			msg := KeyringProblem(s.Problem())
			if !strings.Contains(msg, "this session only") || strings.Contains(msg, key) {
				t.Fatalf("KeyringProblem = %q", msg)
			}
			checkKeyNotIn(t, key, problems[0])

			// Nothing in memory and the keyring is failing: the caller
			// learns why it has no key.
			if _, err := s.Get("never set"); !errors.Is(err, named) {
				t.Fatalf("Get of an unknown endpoint: err = %v, want %v", err, named)
			}
			// Delete drops the session copy but says the keyring could
			// not be reached.
			if err := s.Delete("lab"); !errors.Is(err, named) {
				t.Fatalf("Delete: err = %v, want %v", err, named)
			}
			if s.SessionOnly("lab") {
				t.Fatal("session copy survived Delete")
			}
			if len(problems) != 1 {
				t.Fatalf("reported %d times, want once", len(problems))
			}
		})
	}
}

func TestSessionKeysRecovery(t *testing.T) {
	store := newFakeKeys()
	calls := 0
	s := NewSessionKeys(store, func(error) { calls++ })
	key1, key2, key3 := testAPIKey(t), testAPIKey(t), testAPIKey(t)

	if err := s.Set("lab", key1); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.mem.Get("lab"); got != key1 || s.SessionOnly("lab") {
		t.Fatal("a healthy keyring should hold the key, not memory")
	}

	store.fail(ErrKeyringLocked)
	if err := s.Set("lab", key2); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get("lab"); err != nil || got != key2 {
		t.Fatalf("Get = %q, %v; the newer session key should win", got, err)
	}

	store.fail(nil)
	if got, err := s.Get("lab"); err != nil || got != key2 {
		t.Fatalf("Get = %q, %v; the session key should still win", got, err)
	}
	if err := s.Set("lab", key3); err != nil {
		t.Fatal(err)
	}
	if s.SessionOnly("lab") {
		t.Fatal("session copy kept after the keyring took the key")
	}
	if got, err := s.Get("lab"); err != nil || got != key3 {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if calls != 1 {
		t.Fatalf("callback ran %d times, want 1", calls)
	}
}

func TestSessionKeysOtherErrorsPassThrough(t *testing.T) {
	store := newFakeKeys()
	called := false
	s := NewSessionKeys(store, func(error) { called = true })
	key := testAPIKey(t)

	if err := s.Set("lab", ""); err == nil {
		t.Fatal("empty key accepted")
	}
	if _, err := s.Get("lab"); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Get of nothing: %v, want ErrNoKey", err)
	}
	boom := errors.New("unexpected failure")
	store.fail(boom)
	err := s.Set("lab", key)
	if err == nil || IsKeyringProblem(err) {
		t.Fatalf("Set err = %v; an unknown failure must be returned, not hidden", err)
	}
	checkKeyNotIn(t, key, err)
	if s.SessionOnly("lab") || called || s.Problem() != nil {
		t.Fatal("an unknown failure must not fall back to memory or be reported as a keyring problem")
	}
}

func TestKeyringProblemSentences(t *testing.T) {
	if got := KeyringProblem(nil); got != "" {
		t.Fatalf("KeyringProblem(nil) = %q", got)
	}
	errs := []error{
		ErrKeyringMissing, ErrKeyringLocked, ErrKeyringTimeout, ErrNoKey,
		keyError("set", "lab", ErrKeyringMissing, "dial unix /x: connect: no such file or directory", ""),
		keyError("get", "lab", ErrKeyringLocked, "failed to unlock", ""),
		keyError("get", "lab", ErrKeyringTimeout, "no answer after 5s", ""),
		keyError("set", "lab", errKeyEmpty, "", ""),
		keyError("set", "", errKeyEndpointEmpty, "", ""),
		errors.New("something else"),
	}
	seen := map[string]bool{}
	for _, err := range errs {
		msg := KeyringProblem(err)
		r, _ := utf8.DecodeRuneInString(msg)
		if !unicode.IsUpper(r) || !strings.HasSuffix(msg, ".") ||
			strings.Count(msg, ". ") > 0 || strings.Contains(msg, "\n") {
			t.Errorf("KeyringProblem(%v) = %q; want one sentence", err, msg)
		}
		seen[msg] = true
		t.Logf("%v\n\t→ %s", err, msg)
	}
	if len(seen) < 7 {
		t.Errorf("only %d distinct sentences for %d kinds of error", len(seen), len(errs))
	}
	if KeyringProblem(ErrKeyringLocked) == KeyringProblem(ErrKeyringMissing) {
		t.Error("locked and missing should read differently")
	}
}

// A key that could not be read is said as such: nothing was typed to keep
// for the session, and the endpoint may have no key at all.
func TestKeyringReadProblem(t *testing.T) {
	t.Parallel()
	for _, err := range []error{ErrKeyringMissing, ErrKeyringLocked, ErrKeyringTimeout, errors.New("dbus exploded")} {
		got := KeyringReadProblem(err)
		if !strings.HasSuffix(got, "this endpoint's API key, if it has one, could not be read.") || strings.Contains(got, "kept for this session") {
			t.Errorf("%v: %q", err, got)
		}
	}
	if KeyringReadProblem(nil) != "" || KeyringReadProblem(ErrNoKey) != "" {
		t.Error("no problem to say for no error or no key")
	}
}
