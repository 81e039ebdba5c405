package main

import (
	"bytes"
	"testing"

	"github.com/kovara/desktop/engine"
)

// TestProgressWhileReadingPrompts: while a prompts file is read the
// progress line is how far, with the file's share as the bar and no
// request counts (none is sent yet); in a measured stage it is the
// stage's words with its counts. Reading the file has a line, as the
// warmup and measured stages do.
func TestProgressWhileReadingPrompts(t *testing.T) {
	t.Parallel()
	reading := engine.Snapshot{Phase: engine.PhasePrompts, Line: "Reading your prompts file: 1,000 of 2,000 MB…", Read: 0.5}
	measuring := engine.Snapshot{Phase: engine.PhaseMeasure, Line: "Level 1 of 2 — concurrency 4 — 3 of 12 requests", LevelDone: 3, LevelTotal: 12, OK: 3}
	for _, tc := range []struct {
		name string
		tty  bool
		s    engine.Snapshot
		want string
	}{
		{"reading, a log", false, reading, "Reading your prompts file: 1,000 of 2,000 MB…\n"},
		{"reading, a terminal", true, reading, "\r\x1b[K[############............]  Reading your prompts file: 1,000 of 2,000 MB…"},
		{"measuring, a log", false, measuring, "Level 1 of 2 — concurrency 4 — 3 of 12 requests  ok 3  err 0  timeout 0  0 tok/s  plan 0%\n"},
	} {
		var buf bytes.Buffer
		p := &progress{w: &buf, tty: tc.tty}
		p.draw(tc.s)
		if got := buf.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for p, want := range map[engine.Phase]bool{engine.PhasePrompts: true, engine.PhaseWarmup: true, engine.PhaseMeasure: true, engine.PhaseCalibrate: false, engine.PhaseCheck: false} {
		if drawn(p) != want {
			t.Errorf("phase %q drawn: %v, want %v", p, !want, want)
		}
	}
}
