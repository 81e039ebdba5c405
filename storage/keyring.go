package storage

// API keys (README, "Benchmark your server"). A key lives in the OS keyring (Secret Service on
// Linux and the BSDs, the login keychain on macOS, Credential Manager on
// Windows) or, when that is not possible, in memory for this session only.
// A key never goes into a file, a log, a results file, an export or an error
// message: every error built here names the operation and the endpoint,
// never the key, and any text that comes back from the keyring is scrubbed of
// the key before it is used.

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	dbus "github.com/godbus/dbus/v5"
	keyring "github.com/zalando/go-keyring"
)

// KeyringService is the service name of every keyring entry this app owns.
// There is one entry per saved endpoint; the endpoint name is the entry's
// user name ("username" attribute in the Secret Service).
const KeyringService = "kovara-desktop"

// DefaultKeyringTimeout bounds each keyring call when NewKeyring is given 0.
const DefaultKeyringTimeout = 5 * time.Second

// Keys stores one API key per saved endpoint, keyed by endpoint name.
type Keys interface {
	// Get returns the key saved for endpoint, or an error that matches
	// ErrNoKey when there is none.
	Get(endpoint string) (string, error)
	// Set saves key for endpoint, replacing any earlier key. The key must
	// not be empty; use Delete to forget a key.
	Set(endpoint, key string) error
	// Delete forgets the key of endpoint. Deleting a key that is not there
	// is not an error.
	Delete(endpoint string) error
}

var (
	// ErrNoKey: nothing is stored for that endpoint.
	ErrNoKey = errors.New("no api key stored for this endpoint")
	// ErrKeyringMissing: there is no keyring to talk to (no D-Bus session
	// bus, no Secret Service on it, no default keyring).
	ErrKeyringMissing = errors.New("system keyring not available")
	// ErrKeyringLocked: the keyring is there but locked, or the user (or
	// the system) refused access.
	ErrKeyringLocked = errors.New("system keyring is locked or refused access")
	// ErrKeyringTimeout: the keyring did not answer in time.
	ErrKeyringTimeout = errors.New("system keyring did not answer in time")
)

// KeyringProblem turns a keyring error into one sentence a user can read,
// or "" for nil. It says what happened and what it means for the key.
func KeyringProblem(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrKeyringMissing):
		switch runtime.GOOS {
		case "darwin":
			return "The macOS keychain could not be reached, so the API key is kept for this session only and must be entered again next time."
		case "windows":
			return "The Windows Credential Manager could not be reached, so the API key is kept for this session only and must be entered again next time."
		}
		return "The system keyring is not available (no Secret Service such as gnome-keyring or KeePassXC is running), so the API key is kept for this session only and must be entered again next time."
	case errors.Is(err, ErrKeyringLocked):
		return "The system keyring is locked or refused access, so the API key is kept for this session only; unlock the keyring (or allow access) to have it remembered."
	case errors.Is(err, ErrKeyringTimeout):
		return "The system keyring did not answer in time (it may be waiting for an unlock prompt), so the API key is kept for this session only and must be entered again next time."
	case errors.Is(err, ErrNoKey):
		return "No API key is saved for this endpoint."
	case errors.Is(err, errKeyEmpty):
		return "The API key is empty; enter a key or remove it from the endpoint."
	case errors.Is(err, errKeyEndpointEmpty):
		return "The endpoint needs a name before its API key can be saved."
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return "The API key is too long for the system keyring to store."
	}
	return "The system keyring reported an unexpected error, so the API key could not be read or saved there."
}

// KeyringReadProblem is KeyringProblem for a key being read, not saved:
// nothing was typed that could be "kept for this session", and the
// endpoint may well have no key at all.
func KeyringReadProblem(err error) string {
	const tail = "this endpoint's API key, if it has one, could not be read."
	switch {
	case err == nil, errors.Is(err, ErrNoKey):
		return ""
	case errors.Is(err, ErrKeyringMissing):
		return "No system keyring answers (on Linux, no Secret Service such as gnome-keyring or KeePassXC is running): " + tail
	case errors.Is(err, ErrKeyringLocked):
		return "The system keyring is locked or refused access: " + tail
	case errors.Is(err, ErrKeyringTimeout):
		return "The system keyring did not answer in time (it may be waiting for an unlock prompt): " + tail
	}
	return "The system keyring reported an unexpected error: " + tail
}

var (
	errKeyEmpty         = errors.New("api key is empty (use delete to forget a key)")
	errKeyEndpointEmpty = errors.New("endpoint name is empty")
)

// keyringBackend is the OS keyring as go-keyring exposes it.
type keyringBackend interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// goKeyring forwards to go-keyring's package-level functions (so that
// keyring.MockInit in tests replaces it too).
type goKeyring struct{}

func (goKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (goKeyring) Set(service, user, pw string) error       { return keyring.Set(service, user, pw) }
func (goKeyring) Delete(service, user string) error        { return keyring.Delete(service, user) }

// newKeyringBackend picks the backend a new keyring Keys talks to. Tests swap
// it for one that blocks or fails; each Keys reads it once, in NewKeyring.
var newKeyringBackend = func() keyringBackend { return goKeyring{} }

// keyringBusCheck runs before every call to the real backend. On Linux and
// the BSDs it reports ErrKeyringMissing when no D-Bus session bus can be
// found, instead of letting godbus "autolaunch" one: godbus would run
// dbus-launch, which starts a fresh dbus-daemon that outlives this process
// and has no unlocked keyring on it. Tests that use keyring.MockInit turn it
// off.
var keyringBusCheck = sessionBusPresent

func sessionBusPresent() error {
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "android", "plan9", "js", "wasip1":
		return nil
	}
	if addr := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); addr != "" && addr != "autolaunch:" {
		return nil
	}
	// The places godbus looks when the variable is unset.
	run := fmt.Sprintf("/run/user/%d/", os.Getuid())
	for _, p := range []string{run + "bus", run + "dbus-session"} {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	return errors.New("no d-bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
}

// NewKeyring returns Keys kept in the OS keyring under KeyringService.
//
// Every call is bounded by timeout (DefaultKeyringTimeout when timeout <= 0):
// go-keyring has no timeout of its own and can block forever, for example
// while the Secret Service waits on an unlock prompt nobody answers. The
// go-keyring call runs in its own goroutine; when the timeout passes, the
// method returns an error matching ErrKeyringTimeout and that goroutine is
// left behind until go-keyring returns, which may be never. Calls on one Keys
// are serialised, so at most one such goroutine lingers per Keys value: while
// it is stuck, later calls wait for it up to their own timeout and then time
// out too. A Set that timed out may still reach the keyring later.
//
// Failures match ErrNoKey, ErrKeyringMissing, ErrKeyringLocked or
// ErrKeyringTimeout where they can be told apart; anything else comes back
// as a plain error. No error text ever contains the key.
func NewKeyring(timeout time.Duration) Keys {
	return newKeyringService(KeyringService, timeout)
}

func newKeyringService(service string, timeout time.Duration) *osKeys {
	if timeout <= 0 {
		timeout = DefaultKeyringTimeout
	}
	return &osKeys{
		service: service,
		timeout: timeout,
		backend: newKeyringBackend(),
		busy:    make(chan struct{}, 1),
	}
}

type osKeys struct {
	service string
	timeout time.Duration
	backend keyringBackend
	busy    chan struct{} // holds a token while a backend call runs
}

func (k *osKeys) Get(endpoint string) (string, error) {
	if endpoint == "" {
		return "", keyError("get", endpoint, ErrNoKey, "", "")
	}
	var key string
	err := k.call("get", endpoint, "", func() error {
		var err error
		key, err = k.backend.Get(k.service, endpoint)
		return err
	})
	if err != nil {
		return "", err
	}
	return key, nil
}

func (k *osKeys) Set(endpoint, key string) error {
	if endpoint == "" {
		return keyError("set", endpoint, errKeyEndpointEmpty, "", "")
	}
	if key == "" {
		return keyError("set", endpoint, errKeyEmpty, "", "")
	}
	return k.call("set", endpoint, key, func() error {
		return k.backend.Set(k.service, endpoint, key)
	})
}

func (k *osKeys) Delete(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	err := k.call("delete", endpoint, "", func() error {
		return k.backend.Delete(k.service, endpoint)
	})
	if errors.Is(err, ErrNoKey) {
		return nil
	}
	return err
}

// call runs fn in a goroutine and waits for it at most k.timeout, counting
// the wait for an earlier call that is still running. key is the secret the
// call handles ("" when none); it is scrubbed from any error text.
func (k *osKeys) call(op, endpoint, key string, fn func() error) error {
	if err := keyringBusCheck(); err != nil {
		return keyError(op, endpoint, ErrKeyringMissing, err.Error(), key)
	}
	timer := time.NewTimer(k.timeout)
	defer timer.Stop()

	select {
	case k.busy <- struct{}{}:
	case <-timer.C:
		return keyError(op, endpoint, ErrKeyringTimeout,
			fmt.Sprintf("an earlier keyring call is still waiting after %s", k.timeout), key)
	}

	// Buffered, so the goroutine can always deliver and exit, even after
	// nobody waits for it any more.
	done := make(chan error, 1)
	go func() {
		defer func() { <-k.busy }()
		done <- fn()
	}()

	select {
	case err := <-done:
		if err == nil {
			return nil
		}
		kind, detail := classifyKeyringError(err), err.Error()
		if kind == ErrNoKey {
			detail = "" // "secret not found in keyring" says nothing more
		}
		return keyError(op, endpoint, kind, detail, key)
	case <-timer.C:
		return keyError(op, endpoint, ErrKeyringTimeout, fmt.Sprintf("no answer after %s", k.timeout), key)
	}
}

// keyError builds the error for a failed call: the operation, the endpoint,
// the named error it matches (kind, may be nil) and the backend's own words
// (detail, with the key scrubbed out). The backend's error is not wrapped,
// only described, so its text cannot leak the key through Unwrap either.
func keyError(op, endpoint string, kind error, detail, key string) error {
	detail = scrubKey(detail, key)
	prefix := fmt.Sprintf("keyring %s for endpoint %q", op, endpoint)
	switch {
	case kind == nil && detail == "":
		return errors.New(prefix + ": failed")
	case kind == nil:
		return errors.New(prefix + ": " + detail)
	case detail == "" || detail == kind.Error():
		return fmt.Errorf("%s: %w", prefix, kind)
	}
	return fmt.Errorf("%s: %w: %s", prefix, kind, detail)
}

// scrubKey removes every copy of key from s.
func scrubKey(s, key string) string {
	if key == "" || s == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// classifyKeyringError maps what go-keyring (and, below it, godbus, the
// Secret Service, /usr/bin/security or wincred) returned to one of the named
// errors, or nil when it is none of them.
func classifyKeyringError(err error) error {
	if err == nil {
		return nil
	}
	for _, named := range []error{ErrNoKey, ErrKeyringMissing, ErrKeyringLocked, ErrKeyringTimeout, keyring.ErrSetDataTooBig} {
		if errors.Is(err, named) {
			return named
		}
	}
	if errors.Is(err, keyring.ErrNotFound) {
		return ErrNoKey
	}

	// godbus puts the D-Bus error name in Name and the human text in
	// Body; Error() returns only the text, so look at both.
	text := strings.ToLower(err.Error())
	var de dbus.Error
	var dep *dbus.Error
	switch {
	case errors.As(err, &de):
		text = strings.ToLower(de.Name) + " " + text
	case errors.As(err, &dep) && dep != nil:
		text = strings.ToLower(dep.Name) + " " + text
	}

	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("org.freedesktop.dbus.error.noreply",
		"org.freedesktop.dbus.error.timeout",
		"org.freedesktop.dbus.error.timedout",
		"did not receive a reply", "timed out", "timeout"):
		return ErrKeyringTimeout
	case has("org.freedesktop.secret.error.islocked",
		"islocked", "locked", "failed to unlock", "cannot unlock",
		"prompt dismissed", "dismissed",
		"org.freedesktop.dbus.error.accessdenied", "access denied",
		"not authorized",
		"user interaction is not allowed", // macOS: keychain locked, no UI
		"user canceled", "user cancelled"):
		return ErrKeyringLocked
	case has("org.freedesktop.dbus.error.serviceunknown",
		"org.freedesktop.dbus.error.namehasnoowner",
		"org.freedesktop.dbus.error.spawn",
		"org.freedesktop.secret.error.nosuchobject",
		"org.freedesktop.dbus.error.unknownobject",
		"was not provided by any .service files",
		"dbus_session_bus_address",
		"couldn't determine address of session bus",
		"session bus", "dbus-launch",
		"no such file or directory", "connection refused", "permission denied",
		"object does not exist", "no such object",
		"executable file not found",
		"could not be found in the keychain"):
		return ErrKeyringMissing
	}
	return nil
}

// NewMemoryKeys returns Keys that live only in this process's memory and are
// gone when it exits: the fallback when the OS keyring cannot be used.
func NewMemoryKeys() Keys { return newMemoryKeys() }

func newMemoryKeys() *memoryKeys { return &memoryKeys{m: map[string]string{}} }

type memoryKeys struct {
	mu sync.Mutex
	m  map[string]string
}

func (k *memoryKeys) Get(endpoint string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, ok := k.m[endpoint]
	if !ok {
		return "", keyError("get", endpoint, ErrNoKey, "", "")
	}
	return key, nil
}

func (k *memoryKeys) Set(endpoint, key string) error {
	switch {
	case endpoint == "":
		return keyError("set", endpoint, errKeyEndpointEmpty, "", "")
	case key == "":
		return keyError("set", endpoint, errKeyEmpty, "", "")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[endpoint] = key
	return nil
}

func (k *memoryKeys) Delete(endpoint string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, endpoint)
	return nil
}

func (k *memoryKeys) has(endpoint string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[endpoint]
	return ok
}

// IsKeyringProblem reports whether err means the keyring itself cannot be
// used right now (missing, locked, or not answering), as opposed to a
// missing entry or a bad argument.
func IsKeyringProblem(err error) bool {
	return errors.Is(err, ErrKeyringMissing) || errors.Is(err, ErrKeyringLocked) || errors.Is(err, ErrKeyringTimeout)
}

// SessionKeys puts a session-only memory store in front of a Keys (normally
// NewKeyring). When the keyring is missing, locked or does not answer, Set
// keeps the key in memory for the rest of this session and still succeeds,
// and the problem is reported once: to the callback given to NewSessionKeys
// (if any) the first time it happens, and from Problem at any time after.
// Show it with KeyringProblem.
//
// Every call may wait for the keyring up to the wrapped Keys' timeout, so
// call it off the UI goroutine.
//
// Get looks in memory first (a key there was typed this session and could
// not be saved), then in the keyring. A keyring problem on Get or Delete is
// returned, because then the caller really lacks the key or it really is
// still stored; it is reported through the callback as well.
type SessionKeys struct {
	store     Keys
	mem       *memoryKeys
	onProblem func(error)

	mu      sync.Mutex
	problem error
}

var _ Keys = (*SessionKeys)(nil)

// NewSessionKeys wraps store. onProblem may be nil; if set it is called at
// most once, with the first keyring problem (an error matching
// ErrKeyringMissing, ErrKeyringLocked or ErrKeyringTimeout), from the
// goroutine that made the failing call and with no lock held.
func NewSessionKeys(store Keys, onProblem func(err error)) *SessionKeys {
	return &SessionKeys{store: store, mem: newMemoryKeys(), onProblem: onProblem}
}

// Problem returns the first keyring problem seen, or nil.
func (s *SessionKeys) Problem() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// SessionOnly reports whether the key of endpoint lives only in memory and
// will be lost when the app exits.
func (s *SessionKeys) SessionOnly(endpoint string) bool { return s.mem.has(endpoint) }

func (s *SessionKeys) report(err error) {
	s.mu.Lock()
	first := s.problem == nil
	if first {
		s.problem = err
	}
	s.mu.Unlock()
	if first && s.onProblem != nil {
		s.onProblem(err)
	}
}

// Get returns the key typed this session if the keyring could not take it,
// else the keyring's.
func (s *SessionKeys) Get(endpoint string) (string, error) {
	if key, err := s.mem.Get(endpoint); err == nil {
		return key, nil
	}
	key, err := s.store.Get(endpoint)
	if IsKeyringProblem(err) {
		s.report(err)
	}
	return key, err
}

// Set saves the key in the keyring, or in memory when the keyring cannot be
// used (then it returns nil and reports the problem). Other failures, such
// as an empty key, are returned and nothing is kept.
func (s *SessionKeys) Set(endpoint, key string) error {
	err := s.store.Set(endpoint, key)
	switch {
	case err == nil:
		// The keyring has it now; drop any session copy.
		return s.mem.Delete(endpoint)
	case IsKeyringProblem(err):
		if merr := s.mem.Set(endpoint, key); merr != nil {
			return merr
		}
		s.report(err)
		return nil
	}
	return err
}

// Delete forgets the key in memory and in the keyring. A keyring problem is
// returned (the keyring may still hold the key) and reported.
func (s *SessionKeys) Delete(endpoint string) error {
	_ = s.mem.Delete(endpoint)
	err := s.store.Delete(endpoint)
	if IsKeyringProblem(err) {
		s.report(err)
	}
	return err
}
