// Package serverproctest helps the tests that start servers as the app
// does (serverproc): a loopback port for a stand-in server to listen on.
package serverproctest

import (
	"net"
	"strconv"
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
