package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/results"
	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

// TestConnectEachWhenTheServerHoldsConnectionsBack: a server that serves
// fewer connections at once than the level has users, and holds an idle
// kept-alive connection's thread until its idle timeout (llama-server -np 2:
// 4 HTTP threads, 5 s), cannot keep every slot's connection open ahead of
// the level. Connections opened ahead then held every thread, and no
// request of the level went out before the idle timeout had closed some
// (5.0 s into a 9.6 s level against the real server: half its throughput).
// The slots must instead connect as each request is sent: every request
// is counted as such, the level's first requests leave at its start, none
// fails, and the notes say it.
func TestConnectEachWhenTheServerHoldsConnectionsBack(t *testing.T) {
	t.Parallel()
	const idle = 3 * time.Second
	cfg := fastSim()
	cfg.Personality = sim.LlamaCpp
	cfg.BatchCapacity = 2
	cfg.HTTPThreads = 4
	cfg.KeepAliveIdle = idle
	_, url := startSim(t, cfg)
	p := smallPlan()
	p.Concurrency = []int{8}
	p.Requests = 16
	f, err := Run(context.Background(), p, setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	run, lv := f.Runs[0], f.Local.Levels[0]
	if m := run.Metrics; m.RequestsOK != 16 {
		t.Fatalf("%d of 16 requests succeeded (%v)", m.RequestsOK, lv.Messages)
	}
	if c := lv.Connections; c == nil || c.Connected != 16 {
		t.Errorf("connections %+v: want all 16 requests connected as they were sent", c)
	}
	var starts []int64
	for _, r := range lv.Samples.Requests {
		starts = append(starts, r.StartUs-lv.Samples.StartUs)
	}
	// Held back, the first request left only when the idle timeout freed
	// a thread; connecting as sent, at the level's start (the bound is
	// half the timeout, far above any machine's scheduling).
	if first := time.Duration(slices.Min(starts)) * time.Microsecond; first >= idle/2 {
		t.Errorf("the level's first request left %v after its start, want well under the server's %v idle timeout", first, idle)
	}
	if note := results.ConnectionNote(f); !strings.Contains(note, "opened its own connection as it was sent") {
		t.Errorf("the notes do not say the requests connected as sent: %q", note)
	}
}
