package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// syscallCounter counts this process's system calls over a stretch of
// work, with perf stat's raw_syscalls:sys_enter tracepoint attached to the
// process (Linux, perf installed, and a kernel that lets this user count
// it); ok is false anywhere that is not so. It counts the threads that
// exist when it starts, which for a Go program past its start-up is all
// of them but the rare late one.
type syscallCounter struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startSyscallCounter() *syscallCounter {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil
	}
	c := &syscallCounter{}
	c.cmd = exec.Command(perf, "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", strconv.Itoa(os.Getpid()))
	c.cmd.Stderr = &c.out
	c.cmd.WaitDelay = 5 * time.Second
	if c.cmd.Start() != nil {
		return nil
	}
	// perf attaches after it starts; give it the moment it needs.
	time.Sleep(200 * time.Millisecond)
	return c
}

// stop ends the count and returns it.
func (c *syscallCounter) stop() (count int64, ok bool) {
	if c == nil {
		return 0, false
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		c.cmd.Process.Kill()
		<-done
		return 0, false
	}
	return parsePerfCount(c.out.String())
}

// parsePerfCount reads perf stat -x, output: "COUNT,,EVENT,…" per event.
func parsePerfCount(out string) (int64, bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) >= 3 && f[2] == "raw_syscalls:sys_enter" {
			n, err := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
