package main

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/hw/hwtest"
)

// TestCheckSaysTheOtherScheme: kovara-bench check says a scheme mix-up in
// the engine's one sentence, with the address that works, and exits 2
// (the address is the user's to change); that address then checks out. A
// mistyped scheme is refused before any lookup, with the address check's
// own sentence.
func TestCheckSaysTheOtherScheme(t *testing.T) {
	t.Parallel()
	target := sim.New(fast())
	t.Cleanup(func() { target.Close() })
	plain := httptest.NewServer(target)
	t.Cleanup(func() { plain.CloseClientConnections(); plain.Close() })
	tlsSrv := httptest.NewUnstartedServer(target)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // each refused handshake would log
	tlsSrv.StartTLS()
	t.Cleanup(func() { tlsSrv.CloseClientConnections(); tlsSrv.Close() })
	plainAddr := strings.TrimPrefix(plain.URL, "http://")
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")

	tests := []struct {
		name  string
		args  []string
		first string // stdout's first line
		then  []string
	}{
		{"https to a plain server", []string{"check", "https://" + plainAddr + "/v1"},
			"Failed: the server at " + plainAddr + " speaks plain HTTP, not HTTPS: try http://" + plainAddr + " as the address",
			[]string{"check", "http://" + plainAddr}},
		{"http to a TLS server", []string{"check", "http://" + tlsAddr},
			"Failed: the server at " + tlsAddr + " speaks HTTPS, not plain HTTP: try https://" + tlsAddr + " as the address",
			[]string{"check", "--insecure", "https://" + tlsAddr}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(tc.args...)
			if got := strings.SplitN(stdout, "\n", 2)[0]; code != exitBadInput || got != tc.first {
				t.Errorf("exit %d, first line\n%q\nwant exit %d and\n%q\n%s", code, got, exitBadInput, tc.first, stderr)
			}
			if code, stdout, stderr := runCLI(tc.then...); code != exitOK {
				t.Errorf("the address it gives: exit %d\n%s%s", code, stdout, stderr)
			}
		})
	}

	code, stdout, stderr := runCLI("check", "htp:/x")
	const want = `kovara-bench check: "htp:/x" is not a saved endpoint, and as an address: "htp:/x" is not a server address: it should start with http:// or https://, like http://192.168.1.10:8000`
	if got := strings.TrimSpace(stderr); code != exitBadInput || got != want || stdout != "" {
		t.Errorf("htp:/x: exit %d, stdout %q, stderr\n%q\nwant exit %d and\n%q", code, stdout, got, exitBadInput, want)
	}
}

// TestCheckReadsTheWallPlug: --wall reads the plug once beside the
// server's check, its family found from what it answers (a stand-in
// answering a real Shelly Plus 1PM's status), in the Test's words; an
// address that is not a plug's form is refused before anything runs.
func TestCheckReadsTheWallPlug(t *testing.T) {
	t.Parallel()
	target := sim.New(fast())
	t.Cleanup(func() { target.Close() })
	srv := httptest.NewServer(target)
	t.Cleanup(srv.Close)
	plug := hwtest.StandInShelly(t)
	code, stdout, stderr := runCLI("check", "--wall", plug, srv.URL)
	want := "Wall power: Shelly (Gen2 or later) at " + strings.TrimPrefix(plug, "http://") + ": 28.2 W now (switch:0)"
	if code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout\n%s\nwant the line %q\n%s", code, stdout, want, stderr)
	}
	if code, _, stderr := runCLI("check", "--wall", "mqtt://broker/plug", srv.URL); code != exitBadInput || !strings.Contains(stderr, "--wall: the wall plug's scheme") {
		t.Errorf("a plug address of another form: exit %d, %s", code, stderr)
	}
}
