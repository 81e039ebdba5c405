//go:build linux

package serverproc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kovara/desktop/internal/serverproc/serverproctest"
	"github.com/kovara/desktop/internal/shellwords"
)

// The checks read /proc (Linux) for what ps would show.

// parentName is the program name of pid's parent.
func parentName(t *testing.T, pid int) string {
	t.Helper()
	f, err := statFields(pid)
	if err != nil || len(f) < 2 {
		t.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	comm, err := os.ReadFile("/proc/" + f[1] + "/comm")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(comm))
}

// statFields are the fields of /proc/pid/stat after the program's name:
// state, ppid, pgrp, session, ….
func statFields(pid int) ([]string, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])), nil
}

// group lists the live processes of process group pg, as ps -g would.
func group(pg int) []int {
	dirs, _ := os.ReadDir("/proc")
	var in []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if f, err := statFields(pid); err == nil && len(f) > 2 && f[2] == strconv.Itoa(pg) && f[0] != "Z" {
			in = append(in, pid)
		}
	}
	return in
}

// groupOf is pid's process group, which must hold more than pid alone
// (the stand-in and its child).
func groupOf(t *testing.T, pid int) int {
	t.Helper()
	f, err := statFields(pid)
	if err != nil || len(f) < 3 {
		t.Fatalf("/proc/%d/stat: %v", pid, err)
	}
	pg, _ := strconv.Atoi(f[2])
	if n := len(group(pg)); n < 2 {
		t.Fatalf("the stand-in's process group %d holds %d processes, want it and its child", pg, n)
	}
	return pg
}

// groupGone waits, as gone does, for process group pg to be empty.
func groupGone(t *testing.T, how string, pg int) {
	t.Helper()
	for range 200 {
		if len(group(pg)) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%s: process group %d still holds %v", how, pg, group(pg))
}

// TestSSHStartAndStop: a server started through a real sshd runs there
// (its parent is sshd's session), answers, says its lines through ssh's
// terminal, and Stop ends it and the child it started (one that ignores
// SIGTERM) on the far side: ssh's hang-up ends the remote session.
func TestSSHStartAndStop(t *testing.T) {
	host := serverproctest.SSHHost(t)
	port := serverproctest.FreePort(t)
	spec := standInSpec("serve:" + port)
	spec.SSH = host
	s, err := Start(context.Background(), spec, Options{URL: "http://127.0.0.1:" + port, Grace: time.Second, StartTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p, c := pids(t, s.Log)
	if !alive(p) || !alive(c) {
		t.Fatalf("the stand-in %d and its child %d should run", p, c)
	}
	if got := parentName(t, p); got != "sshd" {
		t.Errorf("the stand-in's parent is %q, want sshd: it did not run through ssh", got)
	}
	pg := groupOf(t, p)
	resp, err := http.Get("http://127.0.0.1:" + port + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the started server does not answer: %v", err)
	}
	resp.Body.Close()
	s.Stop()
	gone(t, "after Stop through ssh", p, c)
	groupGone(t, "after Stop through ssh", pg)
}

// TestSSHAppKilled: kill -9 of the app leaves no server running on the
// far side: the supervisor stops ssh, whose hang-up ends the remote
// server and its child.
func TestSSHAppKilled(t *testing.T) {
	host := serverproctest.SSHHost(t)
	port := serverproctest.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app := exec.CommandContext(ctx, os.Args[0]) // killed at the latest by the timeout
	app.Env = append(os.Environ(), appEnv+"="+port, appSSHEnv+"="+host)
	out, _ := app.StdoutPipe()
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	p, c := pids(t, func() []string { return []string{strings.TrimSpace(line)} })
	if got := parentName(t, p); got != "sshd" {
		t.Errorf("the stand-in's parent is %q, want sshd", got)
	}
	pg := groupOf(t, p)
	app.Process.Signal(syscall.SIGKILL)
	app.Wait()
	gone(t, "after kill -9 of the app", p, c)
	groupGone(t, "after kill -9 of the app", pg)
}

// TestSSHRunOnce: a setting's one-off command runs on the far side and
// its failure comes back with its own lines.
func TestSSHRunOnce(t *testing.T) {
	host := serverproctest.SSHHost(t)
	if err := RunOnce(context.Background(), Spec{Command: "true", SSH: host}, 30*time.Second); err != nil {
		t.Errorf("true through ssh: %v", err)
	}
	err := RunOnce(context.Background(), Spec{Command: "ls /nonexistent-kovara", Env: []string{"LC_ALL=C"}, SSH: host}, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "it failed (exit status 2)") || !strings.Contains(err.Error(), "/nonexistent-kovara") {
		t.Errorf("a failing command through ssh: %v", err)
	}
}

// TestSSHStartFails: a server that fails on the far side fails its start
// with its own last line, not ssh's notice that the connection closed;
// ssh that cannot get in is said as ssh's failure, not the server's.
func TestSSHStartFails(t *testing.T) {
	host := serverproctest.SSHHost(t)
	fail := standInSpec("fail")
	fail.SSH = host
	tests := []struct {
		name string
		spec Spec
		why  string
		last string
	}{
		{"the server fails", fail, "the server exited before it answered (exit status 1)", "CUDA error: out of memory"},
		{"ssh is refused", Spec{Command: "llama-server -m /m/q4.gguf", SSH: "127.0.0.1"}, "ssh could not start the server on its machine", ""},
	}
	for _, tt := range tests {
		_, err := Start(context.Background(), tt.spec, Options{URL: "http://127.0.0.1:" + serverproctest.FreePort(t), Grace: time.Second, StartTimeout: time.Minute})
		var se *StartError
		if !errors.As(err, &se) || !strings.HasPrefix(se.Why, tt.why) {
			t.Errorf("%s: %v, want a start error saying %q", tt.name, err, tt.why)
			continue
		}
		if tt.last != "" && se.Last() != tt.last {
			t.Errorf("%s: the last line is %q, want %q (all: %q)", tt.name, se.Last(), tt.last, se.Lines)
		}
	}
}

// TestSSHTurnsOnOnePort: servers started one after the other on one
// port through ssh, as a settings comparison's turns are, each start as
// soon as the last Stop returns: Stop returns only once the far side's
// server has let its port go, or the next start would find it taken.
func TestSSHTurnsOnOnePort(t *testing.T) {
	host := serverproctest.SSHHost(t)
	port := serverproctest.FreePort(t)
	setting := standInSpec("serve:" + port)
	setting.SSH = host
	own := Spec{Command: shellwords.Join([]string{"ssh", host, "env", standInEnv + "=serve:" + port, os.Args[0]})}
	var all []int
	defer func() { gone(t, "after the turns", all...) }()
	for turn, spec := range []Spec{setting, setting, own, own, setting} {
		s, err := Start(context.Background(), spec, Options{URL: "http://127.0.0.1:" + port, Grace: time.Second, StartTimeout: time.Minute})
		if err != nil {
			t.Fatalf("turn %d (%s): %v", turn+1, spec.Command, err)
		}
		p, c := pids(t, s.Log)
		all = append(all, p, c)
		s.Stop()
	}
}

// TestSSHInTheCommand: a command that is itself ssh (a row's "ssh
// gpu-box llama-server …", written by hand instead of the setting's ssh
// host) is given a terminal and batch mode too, so Stop ends the server
// on the far side instead of leaving it running there.
func TestSSHInTheCommand(t *testing.T) {
	host := serverproctest.SSHHost(t)
	port := serverproctest.FreePort(t)
	spec := Spec{Command: shellwords.Join([]string{"ssh", host, "env", standInEnv + "=serve:" + port, os.Args[0]})}
	s, err := Start(context.Background(), spec, Options{URL: "http://127.0.0.1:" + port, Grace: time.Second, StartTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	p, c := pids(t, s.Log)
	if got := parentName(t, p); got != "sshd" && got != "bash" && got != "sh" {
		t.Errorf("the stand-in's parent is %q: it did not run through ssh", got)
	}
	s.Stop()
	gone(t, "after Stop of a command that is ssh", p, c)
}
