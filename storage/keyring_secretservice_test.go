package storage

// Tests against a real Secret Service: gnome-keyring-daemon in a private
// D-Bus session with a throwaway, unlocked login keyring. They run only
// under scripts/with-keyring.sh, which sets KOVARA_KEYRING_TEST=1:
//
//	scripts/with-keyring.sh go test -race -count=1 ./storage/ -run Key -v
//
// They write to, lock and unlock the default keyring, which is why they
// refuse to run against anything but the script's throwaway one.

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dbus "github.com/godbus/dbus/v5"
	ss "github.com/zalando/go-keyring/secret_service"
)

const keyringTestEnv = "KOVARA_KEYRING_TEST"

// requireSecretService skips unless KOVARA_KEYRING_TEST=1; once it is set,
// anything missing is a failure, never a skip.
func requireSecretService(t *testing.T) {
	t.Helper()
	if os.Getenv(keyringTestEnv) != "1" {
		t.Skip("needs a real Secret Service; run: scripts/with-keyring.sh go test -count=1 ./storage/ -run Key -v")
	}
	tmp := os.Getenv("KOVARA_KEYRING_TMP")
	if tmp == "" || !strings.HasPrefix(os.Getenv("XDG_DATA_HOME"), tmp) {
		t.Fatal(keyringTestEnv + "=1 but this is not the throwaway keyring of scripts/with-keyring.sh; " +
			"these tests lock and write the default keyring, so they only run there")
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		t.Fatal(keyringTestEnv + "=1 but DBUS_SESSION_BUS_ADDRESS is not set")
	}
}

// testEndpoint returns an endpoint name no other test uses, and deletes its
// entry when the test ends.
func testEndpoint(t *testing.T, k Keys, name string) string {
	t.Helper()
	e := name + " " + testAPIKey(t)[len("sk-kovara-test-"):][:8]
	t.Cleanup(func() { _ = k.Delete(e) })
	return e
}

// secretTool runs secret-tool, a libsecret client independent of go-keyring,
// to read what really is in the Secret Service.
func secretTool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("secret-tool")
	if err != nil {
		t.Fatal("secret-tool not found (apt-get install -y libsecret-tools)")
	}
	out, err := exec.Command(path, args...).Output()
	return string(out), err
}

func timed(t *testing.T, what string, f func() error) error {
	t.Helper()
	start := time.Now()
	err := f()
	t.Logf("%-22s %8v  err=%v", what, time.Since(start).Round(10*time.Microsecond), err)
	return err
}

func TestKeyringSecretServiceRoundTrip(t *testing.T) {
	requireSecretService(t)
	k := NewKeyring(0)
	e := testEndpoint(t, k, "round trip")
	key := testAPIKey(t)

	var got string
	if err := timed(t, "get (missing)", func() (err error) { _, err = k.Get(e); return }); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Get before Set: %v, want ErrNoKey", err)
	}
	if err := timed(t, "set", func() error { return k.Set(e, key) }); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := timed(t, "get", func() (err error) { got, err = k.Get(e); return }); err != nil || got != key {
		t.Fatalf("Get = %q, %v; want the key just set", got, err)
	}

	// The entry is really in the Secret Service, where any client finds
	// it: service "kovara-desktop", user name = endpoint name.
	out, err := secretTool(t, "lookup", "service", KeyringService, "username", e)
	if err != nil || out != key {
		t.Fatalf("secret-tool lookup: %q, %v; want the key", out, err)
	}

	if err := timed(t, "delete", func() error { return k.Delete(e) }); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := k.Get(e); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Get after Delete: %v, want ErrNoKey", err)
	}
	if err := timed(t, "delete (missing)", func() error { return k.Delete(e) }); err != nil {
		t.Fatalf("Delete of a missing entry: %v", err)
	}
	if out, err := secretTool(t, "lookup", "service", KeyringService, "username", e); err == nil || out != "" {
		t.Fatalf("secret-tool still finds the entry after Delete: %q, %v", out, err)
	}
}

func TestKeyringSecretServiceMissing(t *testing.T) {
	requireSecretService(t)
	k := NewKeyring(0)
	_, err := k.Get(testEndpoint(t, k, "never stored"))
	if !errors.Is(err, ErrNoKey) {
		t.Fatalf("Get of a missing endpoint: %v, want ErrNoKey", err)
	}
	checkLowercase(t, err)
	if IsKeyringProblem(err) {
		t.Fatalf("a missing entry is not a keyring problem: %v", err)
	}
}

func TestKeyringSecretServiceOverwrite(t *testing.T) {
	requireSecretService(t)
	k := NewKeyring(0)
	e := testEndpoint(t, k, "overwrite")
	first, second := testAPIKey(t), testAPIKey(t)
	if err := k.Set(e, first); err != nil {
		t.Fatal(err)
	}
	if err := k.Set(e, second); err != nil {
		t.Fatal(err)
	}
	if got, err := k.Get(e); err != nil || got != second {
		t.Fatalf("Get = %q, %v; want the second key", got, err)
	}
	// Replaced, not duplicated.
	out, err := secretTool(t, "search", "--all", "service", KeyringService, "username", e)
	if err != nil {
		t.Fatalf("secret-tool search: %v", err)
	}
	items := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "[/") {
			items++
		}
	}
	if items != 1 || strings.Contains(out, first) {
		t.Fatalf("after overwrite the keyring holds %d items (want 1); old key still there: %v", items, strings.Contains(out, first))
	}
}

func TestKeyringSecretServiceNames(t *testing.T) {
	requireSecretService(t)
	k := NewKeyring(0)
	names := []string{
		"my lab server",
		"Ünïcødé 端点 🚀",
		"http://10.0.0.5:8000/v1",
		"tab\tand 'quotes' \"double\"",
		"lab",
	}
	keys := map[string]string{}
	for _, n := range names {
		e := testEndpoint(t, k, n)
		keys[e] = testAPIKey(t)
		if err := k.Set(e, keys[e]); err != nil {
			t.Fatalf("Set(%q): %v", e, err)
		}
	}
	for e, want := range keys {
		if got, err := k.Get(e); err != nil || got != want {
			t.Fatalf("Get(%q) = %q, %v; want its own key", e, got, err)
		}
		if out, err := secretTool(t, "lookup", "service", KeyringService, "username", e); err != nil || out != want {
			t.Fatalf("secret-tool lookup %q: %q, %v", e, out, err)
		}
	}
	for e := range keys {
		if err := k.Delete(e); err != nil {
			t.Fatalf("Delete(%q): %v", e, err)
		}
	}
	for e := range keys {
		if _, err := k.Get(e); !errors.Is(err, ErrNoKey) {
			t.Fatalf("Get(%q) after Delete: %v", e, err)
		}
	}
}

// lockLoginKeyring locks the default collection through the Secret Service
// and unlocks it again with its password when the test ends. No
// prompter can run here (no display), so while it is locked every unlock
// attempt by go-keyring fails at once.
func lockLoginKeyring(t *testing.T) {
	t.Helper()
	conn, err := dbus.SessionBus()
	if err != nil {
		t.Fatal(err)
	}
	const login = dbus.ObjectPath("/org/freedesktop/secrets/collection/login")
	service := conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets")
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	if err := service.Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{login}).Store(&locked, &prompt); err != nil {
		t.Fatalf("lock: %v", err)
	}
	if len(locked) != 1 || prompt != "/" {
		t.Fatalf("lock: locked=%v prompt=%v", locked, prompt)
	}
	t.Cleanup(func() {
		// gnome-keyring's own interface unlocks without a prompt when
		// given the password, which the script passes along.
		svc, err := ss.NewSecretService()
		if err != nil {
			t.Fatalf("unlock: %v", err)
		}
		session, err := svc.OpenSession()
		if err != nil {
			t.Fatalf("unlock: %v", err)
		}
		defer svc.Close(session)
		err = service.Call("org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface.UnlockWithMasterPassword", 0,
			login, ss.NewSecret(session.Path(), os.Getenv("KOVARA_KEYRING_TEST_PASSWORD"))).Err
		if err != nil {
			t.Fatalf("unlock: %v", err)
		}
		v, err := conn.Object("org.freedesktop.secrets", login).GetProperty("org.freedesktop.Secret.Collection.Locked")
		if err != nil || v.Value() != false {
			t.Fatalf("login keyring still locked after the test: %v %v", v, err)
		}
	})
}

// TestKeyringSecretServiceLocked locks the real keyring: reads and writes
// fail with ErrKeyringLocked and never show the key, and SessionKeys keeps
// the key for the session and says why once.
func TestKeyringSecretServiceLocked(t *testing.T) {
	requireSecretService(t)
	k := NewKeyring(0)
	e := testEndpoint(t, k, "locked")
	stored, typed := testAPIKey(t), testAPIKey(t)
	if err := k.Set(e, stored); err != nil {
		t.Fatal(err)
	}
	lockLoginKeyring(t)

	_, err := k.Get(e)
	if !errors.Is(err, ErrKeyringLocked) {
		t.Fatalf("Get from a locked keyring: %v, want ErrKeyringLocked", err)
	}
	checkKeyNotIn(t, stored, err)
	err = timed(t, "set (locked)", func() error { return k.Set(e, typed) })
	if !errors.Is(err, ErrKeyringLocked) {
		t.Fatalf("Set into a locked keyring: %v, want ErrKeyringLocked", err)
	}
	checkKeyNotIn(t, typed, err)
	checkLowercase(t, err)

	var problems []error
	s := NewSessionKeys(k, func(err error) { problems = append(problems, err) })
	if err := s.Set(e, typed); err != nil {
		t.Fatalf("SessionKeys.Set with a locked keyring: %v (should keep it for the session)", err)
	}
	if got, err := s.Get(e); err != nil || got != typed || !s.SessionOnly(e) {
		t.Fatalf("SessionKeys.Get = %q, %v (session only: %v)", got, err, s.SessionOnly(e))
	}
	if len(problems) != 1 || !errors.Is(problems[0], ErrKeyringLocked) {
		t.Fatalf("problems = %v, want one ErrKeyringLocked", problems)
	}
	checkKeyNotIn(t, typed, problems[0])
	msg := KeyringProblem(problems[0])
	if !strings.Contains(msg, "locked") || strings.Contains(msg, typed) {
		t.Fatalf("KeyringProblem = %q", msg)
	}
	t.Logf("shown to the user: %s", msg)
}

// privateBus starts a bare dbus-daemon with no services on it (nothing can
// be activated) and returns its address.
func privateBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Fatal("dbus-daemon not found (apt-get install -y dbus-daemon)")
	}
	dir, err := os.MkdirTemp("", "kbus") // short: socket paths are limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "bus.conf")
	sock := filepath.Join(dir, "bus")
	err = os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+sock+`</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+conf, "--nofork", "--print-address=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon gave no address: %v", err)
	}
	return strings.TrimSpace(line)
}

// TestKeyringSecretServiceNoService: a session bus on which no Secret
// Service runs or can be started gives ErrKeyringMissing (godbus reports
// org.freedesktop.DBus.Error.ServiceUnknown).
func TestKeyringSecretServiceNoService(t *testing.T) {
	if keyringChild() != "no-service" {
		requireSecretService(t)
		runKeyringChild(t, "TestKeyringSecretServiceNoService", "no-service",
			"DBUS_SESSION_BUS_ADDRESS="+privateBus(t))
		return
	}
	k := NewKeyring(2 * time.Second)
	key := testAPIKey(t)
	_, err := k.Get("lab")
	if !errors.Is(err, ErrKeyringMissing) {
		t.Fatalf("Get: %v, want ErrKeyringMissing", err)
	}
	t.Logf("get: %v", err)
	err = k.Set("lab", key)
	if !errors.Is(err, ErrKeyringMissing) {
		t.Fatalf("Set: %v, want ErrKeyringMissing", err)
	}
	checkKeyNotIn(t, key, err)
}

// stalledSecrets answers nothing: every call into it blocks until release
// is closed, like a Secret Service stuck behind an unanswered prompt.
type stalledSecrets struct{ release chan struct{} }

func (s stalledSecrets) Get(string, string) (dbus.Variant, *dbus.Error) {
	<-s.release
	return dbus.MakeVariant([]dbus.ObjectPath{}), nil
}

// TestKeyringSecretServiceStalled: a Secret Service that owns its name on
// the bus but never answers. go-keyring would wait forever (godbus has no
// call timeout and the bus's own reply timeout is long); NewKeyring gives up
// after its timeout.
func TestKeyringSecretServiceStalled(t *testing.T) {
	if keyringChild() != "stalled" {
		requireSecretService(t)
		runKeyringChild(t, "TestKeyringSecretServiceStalled", "stalled",
			"DBUS_SESSION_BUS_ADDRESS="+privateBus(t))
		return
	}
	conn, err := dbus.Connect(os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	if err != nil { // from here on err holds the last keyring error
		t.Fatal(err)
	}
	defer conn.Close()
	stall := stalledSecrets{release: make(chan struct{})}
	defer close(stall.release)
	if err := conn.Export(stall, "/org/freedesktop/secrets", "org.freedesktop.DBus.Properties"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.secrets", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("could not own org.freedesktop.secrets: %v %v", reply, err)
	}

	const timeout = 300 * time.Millisecond
	k := NewKeyring(timeout)
	key := testAPIKey(t)
	for _, op := range []string{"get", "set", "delete"} {
		start := time.Now()
		switch op {
		case "get":
			_, err = k.Get("lab")
		case "set":
			err = k.Set("lab", key)
		case "delete":
			err = k.Delete("lab")
		}
		took := time.Since(start)
		t.Logf("%s after %v: %v", op, took.Round(time.Millisecond), err)
		if !errors.Is(err, ErrKeyringTimeout) {
			t.Fatalf("%s: %v, want ErrKeyringTimeout", op, err)
		}
		if took < timeout || took > timeout+3*time.Second {
			t.Fatalf("%s gave up after %v, want about %v", op, took, timeout)
		}
		checkKeyNotIn(t, key, err)
	}
	if msg := KeyringProblem(err); msg == "" {
		t.Fatal("no sentence for a timeout")
	}
}
