package ui

import (
	"strings"
	"testing"
)

// One level is "1 level", not "1 levels", in each form's summary.
func TestSummaryCountsOneLevel(t *testing.T) {
	h := newHarness(t)
	b := h.u.bench
	b.kovara.levelsEntry.SetText("8")
	if got := b.kovara.summary(); !strings.Contains(got, "1 level ×") {
		t.Errorf("Kovara summary %q, want it to say 1 level", got)
	}
	b.specDec.levelsEntry.SetText("4")
	if got := b.specDec.summary(); !strings.Contains(got, "1 level,") {
		t.Errorf("speculative-decoding summary %q, want it to say 1 level", got)
	}
}
