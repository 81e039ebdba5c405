// Package serverproctest helps the tests that start servers as the app
// does (serverproc): a loopback port for a stand-in server to listen on,
// and whether the stand-in has ended.
package serverproctest

import (
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// FreePort is a loopback port nothing listens on now. The tests that take
// one must not run in parallel with each other: two of them could be
// given the same port between its release here and a stand-in's listen.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// Gone says whether the process whose pid a stand-in server wrote to
// file has ended; the test fails when the file holds no pid.
func Gone(t testing.TB, file string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the server never said its pid: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatalf("the server's pid file holds %q", b)
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
