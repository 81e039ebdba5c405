package engine

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// step is one moment of a synthetic run: requests begin or end, then
// the server is read (at, a second apart unless said).
type step struct {
	begin, end, gaveUp int  // requests that begin, end, end given up on
	running, waiting   int  // the server's gauges at the reading
	stage              int  // 0: no measured stage; else its serial
	noRead             bool // no reading after the events
}

func TestForeignWatchRule(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		want      []results.ForeignLoad // Stage, Readings, Foreign, MaxRequests, MaxRunning, MaxOurs
		wantAlert bool                  // said at the end
	}{
		{
			name: "alone, steady",
			steps: []step{
				{begin: 2, running: 2, stage: 1}, {running: 2, stage: 1}, {running: 2, stage: 1}, {running: 2, stage: 1},
			},
		},
		{
			// Requests that ended as the server was read, and a gauge
			// that still counts them two seconds later: never another
			// client (a third second would be one reading, no more).
			name: "our own races and a lagging gauge",
			steps: []step{
				{begin: 4, running: 4, stage: 1},
				{end: 2, running: 4, stage: 1},
				{running: 4, stage: 1},
				{running: 4, stage: 1},
				{running: 4, stage: 1},
				{end: 2, running: 2, stage: 1},
				{running: 2, stage: 1},
				{running: 0, stage: 1},
			},
		},
		{
			// Requests given up on stay on the server until it notices.
			name: "given-up requests linger",
			steps: []step{
				{begin: 2, running: 2, stage: 1},
				{gaveUp: 2, running: 2, stage: 1},
				{begin: 1, running: 3, stage: 1},
				{running: 3, stage: 1},
				{running: 3, stage: 1},
				{running: 3, stage: 1},
				{running: 3, stage: 1},
			},
		},
		{
			name: "another client during a level",
			steps: []step{
				{begin: 1, running: 1, stage: 1},
				{running: 2, stage: 1},
				{running: 2, stage: 1},
				{running: 2, waiting: 1, stage: 1},
				{running: 2, stage: 1},
			},
			want:      []results.ForeignLoad{{Stage: "s1", Readings: 5, Foreign: 4, MaxRequests: 3, MaxRunning: 2, MaxOurs: 1}},
			wantAlert: true,
		},
		{
			// Two readings of five are a transient; a third is not.
			name: "two of five readings are not enough",
			steps: []step{
				{begin: 1, running: 1, stage: 1},
				{running: 2, stage: 1}, {running: 2, stage: 1}, {running: 1, stage: 1}, {running: 1, stage: 1}, {running: 1, stage: 1},
				{running: 2, stage: 1}, {running: 2, stage: 1}, {running: 1, stage: 1}, {running: 1, stage: 1}, {running: 1, stage: 1},
				{running: 2, stage: 1},
			},
		},
		{
			// curl in a loop: between two of its requests at a reading.
			name: "a client between its requests",
			steps: []step{
				{begin: 1, running: 1, stage: 1},
				{running: 2, stage: 1}, {running: 2, stage: 1}, {running: 1, stage: 1}, {running: 2, stage: 1},
			},
			want:      []results.ForeignLoad{{Stage: "s1", Readings: 5, Foreign: 3, MaxRequests: 2, MaxRunning: 2, MaxOurs: 1}},
			wantAlert: true,
		},
		{
			// Once the server has let go of a request given up on, another
			// client's is seen again.
			name: "given up, let go, then another client",
			steps: []step{
				{begin: 1, running: 1, stage: 1},
				{gaveUp: 1, running: 1, stage: 1},
				{running: 0, stage: 1},
				{begin: 1, running: 1, stage: 1},
				{running: 1, stage: 1},
				{running: 1, stage: 1},
				{running: 2, stage: 1},
				{running: 2, stage: 1},
				{running: 2, stage: 1},
			},
			want:      []results.ForeignLoad{{Stage: "s1", Readings: 8, Foreign: 3, MaxRequests: 2, MaxRunning: 2, MaxOurs: 1}},
			wantAlert: true,
		},
		{
			// Between levels (nothing of ours in flight, no measured
			// stage) it is said live but is no level's problem.
			name: "between levels",
			steps: []step{
				{running: 1}, {running: 1}, {running: 1}, {running: 1},
			},
			wantAlert: true,
		},
		{
			name: "a streak that ends is no longer said",
			steps: []step{
				{begin: 1, running: 1, stage: 2},
				{running: 3, stage: 2}, {running: 3, stage: 2}, {running: 3, stage: 2},
				{running: 1, stage: 2}, {running: 1, stage: 2}, {running: 1, stage: 2}, {running: 1, stage: 2}, {running: 1, stage: 2},
			},
			want: []results.ForeignLoad{{Stage: "s2", Readings: 9, Foreign: 3, MaxRequests: 3, MaxRunning: 3, MaxOurs: 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live := NewLive()
			fl := &flight{}
			w := &foreignWatch{flight: fl, live: live}
			for i, st := range tc.steps {
				for range st.begin {
					fl.begin()
				}
				for range st.end {
					fl.end(false)
				}
				for range st.gaveUp {
					fl.end(true)
				}
				live.cur = Stage{}
				live.phase = PhaseProbe
				if st.stage > 0 {
					live.stage = st.stage
					live.cur = Stage{Measured: true, Name: "s" + string(rune('0'+st.stage))}
					live.phase = PhaseMeasure
				}
				if !st.noRead {
					r, wt := float64(st.running), float64(st.waiting)
					w.reading(time.Duration(i)*time.Second, &r, &wt)
				}
			}
			got := w.records()
			if len(got) != len(tc.want) {
				t.Fatalf("records %+v, want %+v", got, tc.want)
			}
			for i := range got {
				g := got[i]
				g.FirstS, g.LastS = 0, 0
				if g != tc.want[i] {
					t.Errorf("record %d: got %+v, want %+v", i, g, tc.want[i])
				}
			}
			alert := live.Snapshot().Alert
			if (alert != "") != tc.wantAlert {
				t.Errorf("alert %q, want said: %v", alert, tc.wantAlert)
			}
		})
	}
}

func TestForeignAlertWords(t *testing.T) {
	tests := []struct {
		total, running, ours int
		want                 string
	}{
		{2, 2, 1, "another client is using the server: 2 requests running, 1 of them ours"},
		{3, 2, 1, "another client is using the server: 3 requests running or waiting, 1 of them ours"},
		{1, 1, 0, "another client is using the server: 1 request running, none of them ours"},
	}
	for _, tc := range tests {
		if got := foreignAlert(tc.total, tc.running, tc.ours); !strings.HasPrefix(got, tc.want) {
			t.Errorf("foreignAlert(%d, %d, %d) = %q, want it to begin %q", tc.total, tc.running, tc.ours, got, tc.want)
		}
	}
}

// The watchdog's alert and another client's are said together, and the
// time left is still estimated with another client's alone.
func TestLiveJoinsAlerts(t *testing.T) {
	l := NewLive()
	l.setForeign("another client is using the server: 2 requests running, 1 of them ours")
	if a := l.Snapshot().Alert; !strings.HasPrefix(a, "another client") {
		t.Fatalf("alert %q", a)
	}
	l.setAlert("no tokens for 12 s")
	if a := l.Snapshot().Alert; !strings.HasPrefix(a, "no tokens for 12 s; another client") {
		t.Fatalf("alert %q", a)
	}
	l.setAlert("")
	l.setForeign("")
	if a := l.Snapshot().Alert; a != "" {
		t.Fatalf("alert %q after both cleared", a)
	}
}

// otherClient streams requests to url one after another, as a second
// user of the server would, until stop is called; stop waits for it.
func otherClient(t *testing.T, url, model string, streams int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range streams {
		wg.Go(func() {
			body := []byte(`{"model":"` + model + `","stream":true,"max_tokens":60,"messages":[{"role":"user","content":"another user's question"}]}`)
			for ctx.Err() == nil {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
				if err != nil {
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
				}
				resp.Body.Close()
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// A second client streaming to the server during level 1: the problem is
// on level 1 and not on level 2, and the live view says it while it
// happens.
func TestAnotherClientDuringALevel(t *testing.T) {
	_, url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 200000, Models: []string{"m"}})
	p := smallPlan()
	p.Concurrency, p.Requests, p.Warmup, p.OutputTokens = []int{1, 2}, 16, 1, 60
	p.MetricsInterval = 50 * time.Millisecond
	live := NewLive()
	var stopOther func()
	var alerts atomic.Int64
	obs := Observer{Live: live,
		LevelStart: func(c int) {
			if c == 1 {
				stopOther = otherClient(t, url, "m", 1)
			}
		},
		Requests: func(c int, _ []RequestRecord) {
			if c == 1 {
				stopOther()
			}
		},
	}
	watching := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tk := time.NewTicker(10 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-watching:
				return
			case <-tk.C:
				if s := live.Snapshot(); strings.HasPrefix(s.Alert, "another client is using the server: ") {
					alerts.Add(1)
				}
			}
		}
	}()
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, obs)
	close(watching)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	sm := f.Local.ServerMetrics
	if sm == nil || len(sm.ForeignLoad) != 1 {
		t.Fatalf("server metrics %v, foreign load %+v; want one level's", sm != nil, sm.ForeignLoad)
	}
	fl := sm.ForeignLoad[0]
	if fl.Stage != "level 1" || fl.Foreign < foreignConfirm || fl.Foreign > fl.Readings || fl.MaxRequests < 2 || fl.MaxOurs != 1 {
		t.Errorf("foreign load %+v, want level 1 with up to 1 of ours", fl)
	}
	var said []string
	for _, w := range results.Warnings(f) {
		if w.Kind == results.WarnForeignLoad {
			if w.Severity != results.SeverityProblem {
				t.Errorf("severity %s", w.Severity)
			}
			said = append(said, w.Text)
		}
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "another client was using the server during level 1: ") {
		t.Errorf("problems %q", said)
	}
	if alerts.Load() == 0 {
		t.Error("the live view never said another client was using the server")
	}
}

// A run alone never meets another client, even at 32 users with short
// answers: a start and end every few milliseconds, read every 5 ms.
func TestRunAloneHasNoOtherClient(t *testing.T) {
	_, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 400000, BatchCapacity: 16})
	p := smallPlan()
	p.Concurrency, p.Requests, p.Warmup, p.OutputTokens, p.InputTokens = []int{8, 32}, 320, 8, 4, 64
	p.MetricsInterval = 5 * time.Millisecond
	live := NewLive()
	var alerts atomic.Int64
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				if strings.Contains(live.Snapshot().Alert, "another client") {
					alerts.Add(1)
				}
			}
		}
	}()
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{Live: live})
	close(done)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	sm := f.Local.ServerMetrics
	if sm == nil || len(sm.Samples) < 10 {
		t.Fatalf("too few server readings to judge: %v", sm != nil)
	}
	if len(sm.ForeignLoad) != 0 || alerts.Load() != 0 {
		t.Errorf("a run alone was said to meet another client: %+v, %d alerts", sm.ForeignLoad, alerts.Load())
	}
}

// Every plan: the context plan against llama-server without --metrics
// but with --slots, a second client streaming all along. Its busy slots
// are read instead, and the problem is among the plan's own.
func TestAnotherClientSeenInSlots(t *testing.T) {
	cfg := sim.ContextDemo()
	cfg.Personality, cfg.NoMetrics, cfg.Slots, cfg.BatchCapacity = sim.LlamaCpp, true, true, 4
	cfg.PrefillRate, cfg.TokenInterval = 200000, 5*time.Millisecond
	_, url := startSim(t, cfg)
	plan := setup.DefaultContextPlan()
	plan.Depths, plan.OutputTokens, plan.Repeats, plan.Users = []int{0, 1024}, 120, 3, 1
	plan.Timeout = 20 * time.Second
	plan.MetricsInterval = 50 * time.Millisecond
	stop := otherClient(t, url, cfg.Models[0], 2)
	res, err := RunContext(context.Background(), plan, setup.Endpoint{URL: url}, Observer{Live: NewLive()})
	stop()
	if err != nil {
		t.Fatal(err)
	}
	sm := res.Local.ServerMetrics
	if sm == nil || sm.Source != "/slots" || sm.Family != results.FamilyLlamaCpp {
		t.Fatalf("server readings %+v, want llama.cpp's /slots", sm)
	}
	if len(sm.ForeignLoad) == 0 {
		t.Fatal("no stage met the other client")
	}
	for _, f := range sm.ForeignLoad {
		if !strings.HasPrefix(f.Stage, "depth ") || f.MaxRequests < f.MaxOurs+1 || f.MaxRequests > cfg.BatchCapacity {
			t.Errorf("foreign load %+v", f)
		}
	}
	found := false
	for _, p := range res.Problems() {
		found = found || strings.HasPrefix(p, "another client was using the server during depth ")
	}
	if !found {
		t.Errorf("problems %q", res.Problems())
	}
	if _, err := results.MarshalDocument(res); err != nil {
		t.Errorf("the document does not validate: %v", err)
	}
}

func TestParseSlots(t *testing.T) {
	tests := []struct {
		body    string
		busy    float64
		wantErr bool
	}{
		{`[{"id":0,"is_processing":true},{"id":1,"is_processing":false},{"id":2,"is_processing":true}]`, 2, false},
		{`[{"id":0,"state":1},{"id":1,"state":0}]`, 1, false},
		{`[]`, 0, true},
		{`[{"id":0}]`, 0, true},
		{`{"error":{"code":501}}`, 0, true},
	}
	for _, tc := range tests {
		m, err := ParseSlots([]byte(tc.body))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err %v", tc.body, err)
			continue
		}
		if err == nil && (m.Running == nil || *m.Running != tc.busy || m.Waiting != nil || m.Family != results.FamilyLlamaCpp) {
			t.Errorf("%s: %+v", tc.body, m)
		}
	}
}

// Shards of one run from several machines are each other's expected
// load: two shards at once never say another client.
func TestShardsAreNotAnotherClient(t *testing.T) {
	_, url := startSim(t, sim.Config{TokenInterval: 5 * time.Millisecond, PrefillRate: 200000})
	p := smallPlan()
	p.Concurrency, p.Requests, p.OutputTokens = []int{4}, 16, 60
	p.MetricsInterval = 20 * time.Millisecond
	const n = 2
	start := time.Now().Add(1500 * time.Millisecond)
	files := make([]*results.File, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			files[i], errs[i] = RunShard(context.Background(), p, setup.Endpoint{URL: url}, Observer{Live: NewLive()},
				Shard{Index: i + 1, Of: n, StartAt: start, LevelEvery: 3 * time.Second})
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i+1, errs[i])
		}
		sm := files[i].Local.ServerMetrics
		if sm == nil || len(sm.Samples) < 10 {
			t.Fatalf("shard %d: too few server readings to judge", i+1)
		}
		if len(sm.ForeignLoad) != 0 {
			t.Errorf("shard %d said the other shard was another client: %+v", i+1, sm.ForeignLoad)
		}
	}
}
