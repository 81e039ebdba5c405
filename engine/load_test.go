package engine

import (
	"context"
	"testing"
	"time"

	"github.com/kovara/desktop/engine/setup"
	"github.com/kovara/desktop/engine/sim"
)

func TestPacers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		p  Pacer
		k  int
		at time.Duration
		ok bool
	}{
		{ClosedLoop, 0, 0, true}, {ClosedLoop, 1000, 0, true},
		{ConstantRate(4), 0, 0, true}, {ConstantRate(4), 3, 750 * time.Millisecond, true},
		{ConstantRate(0.5), 2, 4 * time.Second, true},
		{ConstantRate(0), 0, 0, false}, {ConstantRate(-1), 5, 0, false},
		{ConstantRate(1e-12), 1, 0, false}, // later than a Duration can say
	} {
		if at, ok := tt.p.Due(tt.k); at != tt.at || ok != tt.ok {
			t.Errorf("%#v.Due(%d) = %v, %v; want %v, %v", tt.p, tt.k, at, ok, tt.at, tt.ok)
		}
	}
}

// stopAt is a pacer that sends n requests at once and ends the loop.
type stopAt int

func (n stopAt) Due(k int) (time.Duration, bool) { return 0, k < int(n) }

// TestPacedLoop: the one request loop with a pacer. At a constant rate
// over three slots every request is sent, none before its due time (the
// simulator's own record of when each arrived says so, whatever the
// machine's speed) and each outcome keeps that time; a pacer that ends
// the loop ends it there; a rate of 0 sends nothing; ClosedLoop given
// sends them all, due at the release.
func TestPacedLoop(t *testing.T) {
	t.Parallel()
	srv, url := startSim(t, sim.Config{TokenInterval: time.Millisecond, PrefillRate: 200000, RecordTruth: true})
	ctx := context.Background()
	sess, err := newSession(setup.Endpoint{URL: url}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.check(ctx, "", false); err != nil {
		t.Fatal(err)
	}
	var live *Live // no live view: plain slots
	set := sess.openSlots(ctx, live.beginStage(Stage{Users: 3}), true)
	defer set.close()
	opts := requestOpts{model: sess.model, maxTokens: 4, words: 20, seed: 7, streamOptions: true}
	from := int64(0)
	loop := func(total int, pace Pacer) (loadRun, int64) {
		first := from
		from += int64(total)
		return set.run(ctx, loadSpec{total: total, timeout: 10 * time.Second, pace: pace, request: func(k int) (requestOpts, int64) {
			return opts, first + int64(k)
		}}), first
	}

	rate := ConstantRate(200) // one every 5 ms: the slots keep up or fall behind, either way none leaves early
	lr, first := loop(12, rate)
	outs := lr.outcomes()
	if len(outs) != 12 {
		t.Fatalf("%d requests sent at a rate, want 12", len(outs))
	}
	for _, o := range outs {
		k := int(o.n - first)
		at, _ := rate.Due(k)
		due := lr.start + at
		if !o.ok() || o.due != due {
			t.Errorf("request %d: %q, due %v; want a success due %v", k, o.class, o.due, due)
		}
		tr, ok := srv.Truth(o.n)
		if !ok {
			t.Errorf("request %d: the simulator has no record of it", k)
			continue
		}
		if arrived := tr.Arrived.Sub(sess.t0); arrived < due || o.start < due {
			t.Errorf("request %d arrived %v after the start (sent %v), before it was due at %v", k, arrived, o.start, due)
		}
	}

	if lr, _ = loop(12, stopAt(5)); len(lr.outcomes()) != 5 {
		t.Errorf("a pacer that stops at request 5: %d sent", len(lr.outcomes()))
	}
	if lr, _ = loop(12, ConstantRate(0)); len(lr.outcomes()) != 0 {
		t.Errorf("a rate of 0: %d sent", len(lr.outcomes()))
	}
	lr, _ = loop(7, ClosedLoop)
	if outs := lr.outcomes(); len(outs) != 7 {
		t.Errorf("closed loop: %d sent, want 7", len(outs))
	}
	for _, o := range lr.outcomes() {
		if !o.ok() || o.due != lr.start {
			t.Errorf("closed loop: request %d %q due %v, want a success due at the release %v", o.n, o.class, o.due, lr.start)
		}
	}
	// Without a pacer the loop is the closed loop, and no outcome has a
	// due time.
	lr, _ = loop(4, nil)
	for _, o := range lr.outcomes() {
		if !o.ok() || o.due != 0 {
			t.Errorf("no pacer: request %d %q due %v", o.n, o.class, o.due)
		}
	}
}
