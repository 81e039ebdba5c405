//go:build unix

package serverproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"
)

// launch starts the supervisor of argv as the leader of a new process
// group. The goroutine that starts it keeps its OS thread until the
// supervisor ends: Linux tells a child of its parent's death when the
// parent *thread* ends, and the Go runtime may end an idle thread.
func launch(argv, env []string, grace time.Duration) (*Server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot start the server's supervisor: %w", err)
	}
	s := &Server{grace: grace, log: &ringLog{}, exited: make(chan struct{})}
	cmd := exec.Command(self, argv...)
	// The server's own environment rides in one variable the supervisor
	// hands to the server alone: PATH or LD_PRELOAD meant for the server
	// must not change the supervisor or a local ssh.
	own, _ := json.Marshal(env)
	cmd.Env = append(withoutOurs(os.Environ()), supervisorEnv+"="+fmt.Sprint(grace.Milliseconds()), serverEnvVar+"="+string(own))
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
	cmd.WaitDelay = time.Second
	s.cmd = cmd
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.err = cmd.Wait()
		close(s.exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("cannot start the server: %w", err)
	}
	return s, nil
}

// onceAttr makes a one-off command the leader of its own group, and a
// timeout kill the group: a shell's children go with it.
func onceAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// terminate asks the supervisor to stop the server's group.
func (s *Server) terminate() { _ = s.cmd.Process.Signal(syscall.SIGTERM) }

// kill kills the supervisor, which did not answer SIGTERM; the server dies
// with it (its parent-death signal, on Linux).
func (s *Server) kill() { _ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) }

// supervise runs argv in this process's group and ends the group when
// told to (SIGTERM from Stop, or the kernel's word that the app died), when
// the app is gone (its parent is no longer the app), or when the server
// exits. Its exit code is the server's.
func supervise(argv []string) int {
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "kovara: no server command to supervise")
		return 2
	}
	grace := defaultGrace
	if ms, err := time.ParseDuration(os.Getenv(supervisorEnv) + "ms"); err == nil && ms > 0 {
		grace = ms
	}
	app := os.Getppid()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// This thread stays the server's parent for its whole life, so its
	// parent-death signal means the supervisor's death.
	runtime.LockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = withoutOurs(os.Environ())
	var own []string
	if err := json.Unmarshal([]byte(os.Getenv(serverEnvVar)), &own); err == nil {
		cmd.Env = append(cmd.Env, own...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// The server leads a group of its own, so the supervisor can end it
	// and all it started without ending itself; and should the supervisor
	// itself be killed (SIGKILL, the OOM killer), the server is killed too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setServerDeathSignal(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "the server could not be started: %v\n", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	orphaned := time.NewTicker(500 * time.Millisecond)
	defer orphaned.Stop()
	for {
		select {
		case err := <-done:
			// The server ended; whatever it left in its group goes too.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			return exitCode(err)
		case <-sig:
			return endGroup(cmd.Process.Pid, done, grace)
		case <-orphaned.C:
			if os.Getppid() != app {
				return endGroup(cmd.Process.Pid, done, grace)
			}
		}
	}
}

// endGroup sends SIGTERM to the server's group pg, waits up to grace for
// the server (done), then SIGKILLs what is left of the group.
func endGroup(pg int, done <-chan error, grace time.Duration) int {
	_ = syscall.Kill(-pg, syscall.SIGTERM)
	code := 0
	select {
	case err := <-done:
		code = exitCode(err)
	case <-time.After(grace):
		fmt.Fprintf(os.Stderr, "the server did not stop within %v of SIGTERM: killed\n", grace)
		code = 128 + int(syscall.SIGKILL)
	}
	_ = syscall.Kill(-pg, syscall.SIGKILL)
	return code
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}
