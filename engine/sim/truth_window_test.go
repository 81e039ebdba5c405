package sim

import (
	"testing"
	"time"
)

// TestTruthWindows: a measured time inside the window of the write call
// that sent a chunk is exact; outside it, the error is the distance to the
// nearer edge.
func TestTruthWindows(t *testing.T) {
	t.Parallel()
	const ms = int64(time.Millisecond)
	tm := Timing{TTFTNs: 10 * ms, GapsNs: []int64{20 * ms, 20 * ms}, SpansNs: []int64{3 * ms, 0, 3 * ms / 2}}
	ttft := []struct {
		measured time.Duration
		want     time.Duration
	}{
		{10 * time.Millisecond, 0},
		{12 * time.Millisecond, 0}, // the write call stalled 3 ms: the chunk may have left this late
		{13 * time.Millisecond, 0},
		{14 * time.Millisecond, time.Millisecond},
		{9 * time.Millisecond, time.Millisecond},
	}
	for _, tt := range ttft {
		if got := tm.TTFTErr(tt.measured); got != tt.want {
			t.Errorf("TTFTErr(%v) = %v, want %v", tt.measured, got, tt.want)
		}
	}
	gaps := []struct {
		i              int
		measured, want float64 // ms
	}{
		{0, 20, 0},
		{0, 17, 0}, // chunk 0 may have left up to 3 ms late
		{0, 16.5, 0.5},
		{0, 20.5, 0.5}, // chunk 1 left at once
		{1, 21.5, 0},   // chunk 2's write stalled 1.5 ms
		{1, 22, 0.5},
	}
	for _, tt := range gaps {
		if got := tm.GapErr(tt.i, tt.measured); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("GapErr(%d, %v) = %v, want %v", tt.i, tt.measured, got, tt.want)
		}
	}
	if got, want := tm.GapAtLeastNs(0), 17*ms; got != want {
		t.Errorf("GapAtLeastNs(0) = %d, want %d", got, want)
	}
	// A write call under StallNs is delivery, not a stall: the transmit
	// stamp stays the truth. Without spans (an older simulator) the same.
	for _, tm := range []Timing{
		{TTFTNs: 10 * ms, GapsNs: []int64{20 * ms}, SpansNs: []int64{ms / 2, ms / 2}},
		{TTFTNs: 10 * ms, GapsNs: []int64{20 * ms}},
	} {
		if got := tm.TTFTErr(10*time.Millisecond + 300*time.Microsecond); got != 300*time.Microsecond {
			t.Errorf("spans %v: TTFTErr = %v, want 300µs", tm.SpansNs, got)
		}
		if got := tm.GapErr(0, 20.3); got < 0.3-1e-9 || got > 0.3+1e-9 {
			t.Errorf("spans %v: GapErr = %v, want 0.3", tm.SpansNs, got)
		}
	}
}

// TestTimingsCarrySpans: every streamed chunk's write call is recorded.
func TestTimingsCarrySpans(t *testing.T) {
	s, url := startSim(t, Config{RecordTruth: true, TokenInterval: 2 * time.Millisecond})
	mustStream(t, url, chatBody("kovara-sim-8b", 7, 20, streamOpts(6, true)))
	for _, tm := range s.Timings() {
		if tm.N != 7 {
			continue
		}
		if len(tm.SpansNs) != 6 || len(tm.GapsNs) != 5 {
			t.Fatalf("spans %v, gaps %v: want 6 and 5", tm.SpansNs, tm.GapsNs)
		}
		for i, sp := range tm.SpansNs {
			if sp < 0 || sp > int64(time.Second) {
				t.Errorf("chunk %d: write call took %v", i, time.Duration(sp))
			}
		}
		return
	}
	t.Fatal("no record of request 7")
}
