package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// watchPlan is three levels long enough that a server killed early in
// the second leaves the third unstarted.
func watchPlan() setup.KovaraPlan {
	p := smallPlan()
	p.Concurrency = []int{1, 4, 8}
	p.Requests, p.OutputTokens = 40, 16
	return p
}

// killWhen watches live from the test goroutine (its only reader) and
// calls kill once the second level has finished n requests.
func killWhen(t *testing.T, live *Live, n int, kill func()) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
			}
			if s := live.Snapshot(); s.Phase.Measured() && s.Level == 2 && s.LevelDone >= n {
				kill()
				return
			}
		}
	}()
	return func() { close(done) }
}

// checkGone holds a run that met a gone server to what the issue asks:
// the first level kept whole, the second partial with no request counted
// after the server went, no third, and the sentence everywhere.
func checkGone(t *testing.T, f *results.File, err error, why string) {
	t.Helper()
	var gone *ServerGoneError
	if !errors.As(err, &gone) || !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want a *ServerGoneError wrapping ErrInterrupted", err)
	}
	if f == nil {
		t.Fatal("no file")
	}
	if !strings.Contains(gone.Why, "into level 2") || !strings.Contains(gone.Why, why) {
		t.Errorf("why = %q, want it to say level 2 and %q", gone.Why, why)
	}
	if got, want := len(f.Runs), 1; got != want || f.Runs[0].Metrics.RequestsOK != 40 {
		t.Fatalf("finished levels = %d (%+v), want %d with 40 requests", got, f.Runs, want)
	}
	p := f.Local.PartialRun
	if p == nil || p.Concurrency != 4 {
		t.Fatalf("partial run = %+v, want concurrency 4", p)
	}
	if failed := p.Metrics.RequestsError + p.Metrics.RequestsTimeout; failed != 0 {
		t.Errorf("partial level counts %d failed requests, want 0: requests after the server went measure nothing", failed)
	}
	if len(f.Local.Levels) != 2 {
		t.Errorf("levels kept = %d, want 2 (no third level after the server went)", len(f.Local.Levels))
	}
	if f.Local.ServerGone != gone.Why {
		t.Errorf("local.server_gone = %q, want %q", f.Local.ServerGone, gone.Why)
	}
	ws := results.Warnings(f)
	if h := results.Headline(f, ws); !strings.HasPrefix(h, "Ended early: the server stopped answering") {
		t.Errorf("headline = %q", h)
	}
	n := 0
	for _, w := range ws {
		if strings.Contains(w.Text, "server stopped answering") {
			n++
		}
		if w.Kind == results.WarnPartial && !strings.Contains(w.Text, "because the server stopped answering") {
			t.Errorf("partial problem = %q, want it to say the server stopped answering", w.Text)
		}
	}
	if n != 1 {
		t.Errorf("the sentence is in %d warnings, want 1 (the partial run's problem)", n)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(data); err != nil {
		t.Errorf("the file does not validate: %v", err)
	}
}

// A server killed mid-level (the simulator closed: its listener and every
// connection, as a killed llama-server's are) ends the run at once.
func TestServerKilledMidLevel(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.TokenInterval = 5 * time.Millisecond
	srv, url := startSim(t, cfg)
	live := NewLive()
	stop := killWhen(t, live, 4, func() { srv.Close() })
	defer stop()
	f, err := Run(context.Background(), watchPlan(), setup.Endpoint{URL: url}, Observer{Live: live})
	checkGone(t, f, err, "nothing is listening on its port any more")
}

// A server that goes silent but keeps its socket (a process dying slowly,
// a machine that froze): no byte for the silence, the model list not
// answered twice, and the run ends; the live view said the silence first.
func TestServerSilentMidLevel(t *testing.T) {
	t.Parallel()
	cfg := fastSim()
	cfg.TokenInterval = 5 * time.Millisecond
	s := sim.New(cfg)
	var dead atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dead.Load() {
			// Holds the request and says nothing. The body is read first:
			// net/http notices the client leave only after that.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		s.ServeHTTP(w, r)
	}))
	defer hs.Close()
	live := NewLive()
	stop := killWhen(t, live, 2, func() { dead.Store(true) })
	defer stop()
	var alerts atomic.Value
	obs := Observer{Live: live, Log: func(l string) {
		if strings.Contains(l, "stopped answering") {
			alerts.Store(l)
		}
	}}
	ep := setup.Endpoint{URL: hs.URL, Silence: time.Second}
	f, err := Run(context.Background(), watchPlan(), ep, obs)
	checkGone(t, f, err, "did not answer its model list in 1 s")
	if alerts.Load() == nil {
		t.Error("the run's log never said the server stopped answering")
	}
}

// A silent stream from a server that still answers its model list (a
// stalled request, a very long prompt) is said, never taken for a gone
// server: the run goes on to its end.
func TestSilentStreamServerAnswers(t *testing.T) {
	t.Parallel()
	p := smallPlan()
	p.Concurrency, p.Requests, p.Timeout = []int{2}, 6, 4*time.Second
	stalled := levelFirstNumber(p, 0) + 2 // one measured request
	cfg := fastSim()
	cfg.Faults = func(n int64) sim.Fault {
		if n == stalled {
			return sim.FaultStall
		}
		return sim.FaultNone
	}
	_, url := startSim(t, cfg)
	live := NewLive()
	seen := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if a := live.Snapshot().Alert; strings.Contains(a, "though the server still answers") {
				select {
				case seen <- a:
				default:
				}
			}
		}
	}()
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url, Silence: time.Second}, Observer{Live: live})
	close(done)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !f.Complete || f.Local.ServerGone != "" {
		t.Errorf("complete = %v, server_gone = %q: a server that answers is not gone", f.Complete, f.Local.ServerGone)
	}
	select {
	case <-seen:
	default:
		t.Error("the live view never said the silence")
	}
}

func TestParseSilence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"10", 10 * time.Second, false},
		{"30s", 30 * time.Second, false},
		{"0", -DefaultSilence, false}, // said, never ends the run
		{"0.5", 0, true},
		{"-3", 0, true},
		{"soon", 0, true},
	} {
		got, err := ParseSilence(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseSilence(%q) = %v, %v; want %v, bad %v", c.in, got, err, c.want, c.bad)
		}
	}
}
