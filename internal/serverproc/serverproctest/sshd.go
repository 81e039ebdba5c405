//go:build unix

package serverproctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sshdPath is where Debian, Ubuntu, Fedora and Arch install sshd.
const sshdPath = "/usr/sbin/sshd"

// SSHHost is the ssh destination of an sshd of the test's own: it listens
// on a free port of 127.0.0.1 only, lets this user in with a key made for
// the test, and is stopped when the test ends. The system ssh is reached
// through a stand-in on PATH that adds the test's client config (-F): the
// host, port, key and known host a person's ~/.ssh/config would give, so
// the words the app passes to ssh are the ones it passes for real. The
// test is skipped, with the reason, where no sshd can run (not installed,
// or not root and so unable to run one).
func SSHHost(t *testing.T) string {
	t.Helper()
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		t.Skip("no ssh client here (the openssh-client package)")
	}
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("no ssh-keygen here (the openssh-client package)")
	}
	if _, err := os.Stat(sshdPath); err != nil {
		t.Skipf("no sshd at %s to test against (the openssh-server package)", sshdPath)
	}
	if os.Geteuid() != 0 {
		t.Skip("an sshd that lets a user in must run as root: run the tests as root (as CI does) to test through ssh")
	}
	me, err := user.Current()
	if err != nil {
		t.Skipf("who runs the tests is unknown: %v", err)
	}
	// The privilege-separation folder a packaged sshd is started with.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Skipf("sshd's /run/sshd cannot be made: %v", err)
	}
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	for _, key := range []string{"host", "user"} {
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "kovara-test-"+key, "-f", path(key)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
	}
	pub := func(name string) []byte {
		b, err := os.ReadFile(path(name + ".pub"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	port := FreePort(t)
	write := func(name, text string) {
		if err := os.WriteFile(path(name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("authorized_keys", string(pub("user")))
	write("known_hosts", fmt.Sprintf("[127.0.0.1]:%s %s", port, pub("host")))
	write("sshd_config", strings.Join([]string{
		"Port " + port,
		"ListenAddress 127.0.0.1",
		"HostKey " + path("host"),
		"AuthorizedKeysFile " + path("authorized_keys"),
		"PidFile " + path("sshd.pid"),
		"PermitRootLogin prohibit-password",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"StrictModes no",
		"UsePAM no",
		"",
	}, "\n"))
	const alias = "kovara-sshtest"
	write("ssh_config", strings.Join([]string{
		"Host " + alias,
		"  HostName 127.0.0.1",
		"  Port " + port,
		"  User " + me.Username,
		"  IdentityFile " + path("user"),
		"  IdentitiesOnly yes",
		"  UserKnownHostsFile " + path("known_hosts"),
		"  StrictHostKeyChecking yes",
		"",
	}, "\n"))

	log, err := os.Create(path("sshd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close() // sshd has its own copy
	sshd := exec.Command(sshdPath, "-D", "-e", "-f", path("sshd_config"))
	sshd.Stdout, sshd.Stderr = log, log
	if err := sshd.Start(); err != nil {
		t.Skipf("sshd does not start: %v", err)
	}
	t.Cleanup(func() {
		sshd.Process.Kill()
		sshd.Wait()
	})

	bin := path("bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fmt.Sprintf("#!/bin/sh\nexec %s -F %s \"$@\"\n", ssh, path("ssh_config"))), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	// Ready when a command runs through it (sshd listens a moment after
	// it starts).
	var last []byte
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		last, err = exec.CommandContext(ctx, "ssh", "-o", "BatchMode=yes", alias, "echo", "kovara-ssh-ok").CombinedOutput()
		cancel()
		if err == nil && strings.Contains(string(last), "kovara-ssh-ok") {
			return alias
		}
		time.Sleep(100 * time.Millisecond)
	}
	said, _ := os.ReadFile(path("sshd.log"))
	t.Fatalf("the test's sshd on 127.0.0.1:%s does not let the test in: %v: %s\nsshd: %s", port, err, last, said)
	return ""
}
