package ui

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/kovara/desktop/engine/sim"
	"github.com/kovara/desktop/engine/trace"
	"github.com/kovara/desktop/storage"
)

// recordEndpoint saves an endpoint for the simulator at url through the
// form, as a person does, and leaves it selected.
func recordEndpoint(t *testing.T, h *harness, url string) *recorder {
	t.Helper()
	s := h.u.endpointS
	h.locked(func() {
		test.Tap(s.addButton)
		if !s.rec.recordButton.Disabled() {
			t.Error("Record is on for an endpoint not saved yet")
		}
		test.Type(s.nameEntry, "lab box")
		test.Type(s.urlEntry, url+"/v1")
		test.Tap(s.saveButton)
		if s.selected != "lab box" {
			t.Fatalf("the saved endpoint is not selected: %q", s.formNote.Text)
		}
	})
	return s.rec
}

// chatThrough sends one chat request to the proxy at addr, as a chat
// client does, and reads the answer whole.
func chatThrough(t *testing.T, addr string, stream bool) {
	t.Helper()
	body := `{"model":"llama-3.1-8b","max_tokens":12,"messages":[{"role":"system","content":"You are a terse assistant."},{"role":"user","content":"Say hello to the homelab."}]}`
	if stream {
		body = strings.Replace(body, `"max_tokens"`, `"stream":true,"stream_options":{"include_usage":true},"max_tokens"`, 1)
	}
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("through the proxy: %s %v", resp.Status, err)
	}
}

// TestRecordMyTraffic: Record on a saved endpoint starts the proxy in
// front of it; chat requests sent to the address shown reach the
// simulator and are counted on the page as they come, each a line of the
// trace named there; Stop ends it, the trace closed and the port free
// again, and the page says what was recorded. The address listened on is
// kept for the next start.
func TestRecordMyTraffic(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"llama-3.1-8b"}})
	r := recordEndpoint(t, h, url)
	var addr, path string
	h.locked(func() {
		if r.recordButton.Disabled() {
			t.Fatalf("Record is off for a saved endpoint: %q", r.status.Text)
		}
		if r.listenEntry.Text != defaultRecordListen {
			t.Errorf("Listen on starts at %q, want %s", r.listenEntry.Text, defaultRecordListen)
		}
		r.listenEntry.SetText("127.0.0.1:0") // any free port
		if r.reachNote.Visible() {
			t.Errorf("a loopback address warns: %q", r.reachNote.Text)
		}
		test.Tap(r.recordButton)
		if r.active == nil {
			t.Fatalf("not recording: %q", r.status.Text)
		}
		addr, path = r.active.addr, r.active.path
		if want := "Recording lab box: point your clients at http://" + addr + " "; !strings.HasPrefix(r.status.Text, want) || !strings.Contains(r.status.Text, "0 requests so far") {
			t.Errorf("status %q, want it to begin %q and count 0 requests", r.status.Text, want)
		}
		if filepath.Dir(path) != storage.TracesDir(h.u.opts.Dirs.Data) || r.pathLabel.Text != "Trace: "+path || !r.pathLabel.Selectable {
			t.Errorf("the trace %q shown as %q (selectable %v), want it in the library's traces folder", path, r.pathLabel.Text, r.pathLabel.Selectable)
		}
		if !r.recordButton.Disabled() || r.stopButton.Disabled() || !r.stopButton.Visible() || !r.listenEntry.Disabled() {
			t.Error("while recording, Record and Listen on should be off and Stop on")
		}
	})
	chatThrough(t, addr, false)
	h.waitFor("one request counted", 10*time.Second, func() bool { return strings.Contains(r.status.Text, "— 1 request so far") })
	chatThrough(t, addr, true)
	chatThrough(t, addr, true)
	h.waitFor("three requests counted", 10*time.Second, func() bool { return strings.Contains(r.status.Text, "— 3 requests so far") })
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	reqs, cut, err := trace.Read(f, 0)
	f.Close()
	if err != nil || cut != 0 || len(reqs) != 3 {
		t.Fatalf("the trace while recording: %d requests, %d cut, %v; want 3 whole", len(reqs), cut, err)
	}
	for i, q := range reqs {
		if q.Model != "llama-3.1-8b" || q.API != trace.APIChat || q.InputLength == 0 || q.OutputLength == 0 || q.Error != "" {
			t.Errorf("request %d: %+v", i+1, q)
		}
	}
	// Another endpoint selected meanwhile: the page still says the
	// recording, and offers no second one.
	h.locked(func() {
		h.u.endpointS.list.Select(0)
		if !strings.HasPrefix(r.status.Text, "Recording lab box") || !r.recordButton.Disabled() {
			t.Errorf("with the simulator selected: %q, Record off %v", r.status.Text, r.recordButton.Disabled())
		}
		test.Tap(r.stopButton)
	})
	h.waitFor("the recording to stop", 15*time.Second, func() bool { return r.active == nil })
	h.locked(func() {
		if !strings.HasPrefix(r.status.Text, "Recorded 3 requests from lab box in ") || r.status.Importance == widget.WarningImportance {
			t.Errorf("after Stop: %q", r.status.Text)
		}
		if r.pathLabel.Text != "Trace: "+path {
			t.Errorf("after Stop the page names %q, want the trace", r.pathLabel.Text)
		}
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("after Stop the port is still taken: %v", err)
	}
	ln.Close()
	if _, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader("{}")); err == nil {
		t.Error("after Stop the proxy still answers")
	}
	list, err := storage.ListTraces(h.u.opts.Dirs.Data)
	if err != nil || len(list) != 1 || list[0].Requests != 3 || list[0].Err != nil {
		t.Fatalf("the traces folder after Stop: %+v %v", list, err)
	}

	// Started again on the same Fyne app (its preferences kept), Listen
	// on is the address last recorded on.
	h2 := newHarnessOn(t, h.u.fyne, t.TempDir())
	h2.locked(func() {
		if got := h2.u.endpointS.rec.listenEntry.Text; got != "127.0.0.1:0" {
			t.Errorf("after a restart Listen on is %q, want the address last used", got)
		}
	})
}

// TestRecordCannotListen: where the proxy cannot listen, the page says
// why in words, nothing runs, and no trace file is made; an address
// others can reach is said before Record and asked about after it.
func TestRecordCannotListen(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"llama-3.1-8b"}})
	r := recordEndpoint(t, h, url)
	tests := []struct {
		name, addr string
		reach      bool   // the address is beyond loopback: said, and asked
		fieldErr   bool   // refused by the field, Record off
		want       string // what the page says
	}{
		{"port in use", busy.Addr().String(), false, false, "another program already listens on " + busy.Addr().String()},
		{"no port", "127.0.0.1", false, true, "give an address and a port"},
		{"not a port", "127.0.0.1:99999", false, true, `"99999" is not a port number`},
		{"not this machine's", "192.0.2.7:8099", true, false, "this machine has no address 192.0.2.7:8099"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.locked(func() {
				r.listenEntry.SetText(tc.addr)
				if r.reachNote.Visible() != tc.reach || (tc.reach && !strings.Contains(r.reachNote.Text, "anyone who can reach this machine")) {
					t.Errorf("the warning before Record: shown %v %q", r.reachNote.Visible(), r.reachNote.Text)
				}
				if r.recordButton.Disabled() != tc.fieldErr {
					t.Errorf("Record off %v, want %v: %q", r.recordButton.Disabled(), tc.fieldErr, r.status.Text)
				}
				if !tc.fieldErr {
					test.Tap(r.recordButton)
				}
				if tc.reach {
					h.tapInOverlay("Listen on " + tc.addr)
				}
				if r.active != nil {
					t.Fatalf("recording on %s", tc.addr)
				}
				if !strings.Contains(r.status.Text, tc.want) || r.status.Importance != widget.WarningImportance {
					t.Errorf("the page says %q, want %q in the warning colour", r.status.Text, tc.want)
				}
			})
		})
	}
	if list, err := storage.ListTraces(h.u.opts.Dirs.Data); err != nil || len(list) != 0 {
		t.Errorf("a trace was made for a recording that never listened: %+v %v", list, err)
	}
	// Cancel on the question starts nothing.
	h.locked(func() {
		r.listenEntry.SetText("0.0.0.0:0")
		test.Tap(r.recordButton)
		h.tapInOverlay("Cancel")
		if r.active != nil {
			t.Error("Cancel started the recording")
		}
	})
}

// TestRecordStopsWhenTheAppCloses: closing the window while recording
// asks first, then stops the recording with its trace closed and the
// port free.
func TestRecordStopsWhenTheAppCloses(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"llama-3.1-8b"}})
	r := recordEndpoint(t, h, url)
	var rec *recording
	h.locked(func() {
		r.listenEntry.SetText("127.0.0.1:0")
		test.Tap(r.recordButton)
		rec = r.active
	})
	if rec == nil {
		t.Fatal("not recording")
	}
	chatThrough(t, rec.addr, true)
	h.locked(func() {
		closeButton(t, h)()
		if h.u.closed {
			t.Fatal("the window closed without asking")
		}
		h.tapInOverlay("Stop and close")
		if !h.u.closed {
			t.Fatal("Stop and close left the window open")
		}
	})
	select {
	case <-rec.done:
	default:
		t.Fatal("the window closed with the recording still running")
	}
	ln, err := net.Listen("tcp", rec.addr)
	if err != nil {
		t.Fatalf("after closing the port is still taken: %v", err)
	}
	ln.Close()
	if s := storage.SummariseTrace(rec.path); s.Err != nil || s.Requests != 1 || s.Cut != 0 {
		t.Errorf("the trace after closing: %+v", s)
	}
}

func TestSpanWords(t *testing.T) {
	for _, tc := range []struct {
		secs float64
		want string
	}{
		{0, "0 s"}, {0.43, "0.4 s"}, {9.94, "9.9 s"}, {9.96, "10 s"}, {45.4, "45 s"}, {60, "1 min"}, {200, "3 min 20 s"},
		{3599.6, "1 h"}, {7500, "2 h 5 min"}, {47 * 3600, "47 h"}, {3*86400 + 4*3600 + 100, "3 d 4 h"}, {2 * 86400, "2 d"},
	} {
		if got := spanWords(tc.secs); got != tc.want {
			t.Errorf("spanWords(%g) = %q, want %q", tc.secs, got, tc.want)
		}
	}
}

// TestRecordOnEveryNetwork: a recording on 0.0.0.0, once asked, tells
// the clients an address they can connect to (this machine's on its
// network), never 0.0.0.0 or [::], and warns while it runs.
func TestRecordOnEveryNetwork(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"llama-3.1-8b"}})
	r := recordEndpoint(t, h, url)
	var rec *recording
	h.locked(func() {
		r.listenEntry.SetText("0.0.0.0:0")
		test.Tap(r.recordButton)
		h.tapInOverlay("Listen on 0.0.0.0:0")
		rec = r.active
		if rec == nil {
			t.Fatalf("not recording: %q", r.status.Text)
		}
		_, port, _ := net.SplitHostPort(rec.addr)
		if want := "point your clients at http://" + clientAddr("0.0.0.0", port) + " "; !strings.Contains(r.status.Text, want) ||
			strings.Contains(r.status.Text, "[::]") || strings.Contains(r.status.Text, "http://0.0.0.0") {
			t.Errorf("status %q, want %q", r.status.Text, want)
		}
		if !r.reachNote.Visible() || !strings.HasPrefix(r.reachNote.Text, "The proxy listens on 0.0.0.0:"+port+":") {
			t.Errorf("while recording on every network the warning says %q", r.reachNote.Text)
		}
	})
	_, port, _ := net.SplitHostPort(rec.addr)
	chatThrough(t, "127.0.0.1:"+port, false)
	h.waitFor("the request counted", 10*time.Second, func() bool { return strings.Contains(r.status.Text, "— 1 request so far") })
}

func TestClientAddr(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1:8099"}, {"localhost", "localhost:8099"}, {"::1", "[::1]:8099"}, {"192.168.1.20", "192.168.1.20:8099"},
	} {
		if got := clientAddr(tc.host, "8099"); got != tc.want {
			t.Errorf("clientAddr(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
	for _, host := range []string{"0.0.0.0", "::", ""} {
		got := clientAddr(host, "8099")
		h, _, err := net.SplitHostPort(got)
		if ip := net.ParseIP(h); err != nil || ip == nil || ip.IsUnspecified() {
			t.Errorf("clientAddr(%q) = %q, want an address a client can connect to", host, got)
		}
	}
}

// TestRecordNothingKeepsNoTrace: a recording nothing came through leaves
// no empty trace for History to list, and says so.
func TestRecordNothingKeepsNoTrace(t *testing.T) {
	h := newHarness(t)
	url := startTestSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 1e6, Models: []string{"llama-3.1-8b"}})
	r := recordEndpoint(t, h, url)
	h.locked(func() {
		r.listenEntry.SetText("127.0.0.1:0")
		test.Tap(r.recordButton)
		test.Tap(r.stopButton)
	})
	h.waitFor("the recording to stop", 15*time.Second, func() bool { return r.active == nil })
	h.locked(func() {
		if !strings.HasPrefix(r.status.Text, "No requests came through in ") || r.pathLabel.Visible() {
			t.Errorf("after an empty recording: %q, the trace named %v", r.status.Text, r.pathLabel.Visible())
		}
	})
	if list, err := storage.ListTraces(h.u.opts.Dirs.Data); err != nil || len(list) != 0 {
		t.Errorf("an empty recording left %+v (%v)", list, err)
	}
}
