package comparetest

import (
	"bytes"
	"testing"

	"github.com/kovara/desktop/engine/results"
)

// A synthetic file, and a slowed copy of it, are valid results files:
// they pass the schema as written and read back to the same bytes, so
// the app's Compare and the CLI's compare take them as they take a real
// run. The same seed gives the same file, byte for byte.
func TestSynthFileIsValid(t *testing.T) {
	t.Parallel()
	marshal := func(name string, f *results.File) []byte {
		t.Helper()
		data, err := results.Marshal(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := results.Decode(data)
		if err != nil {
			t.Fatalf("%s: read back: %v", name, err)
		}
		again, err := results.Marshal(back)
		if err != nil {
			t.Fatalf("%s: written again: %v", name, err)
		}
		if !bytes.Equal(again, data) {
			t.Errorf("%s: read back and written again, the file changed", name)
		}
		return data
	}
	levels := []int{1, 4}
	f := SynthFile(3, levels, Typical(0, 40, 8))
	data := marshal("synthetic", f)
	if again := marshal("the same seed", SynthFile(3, levels, Typical(0, 40, 8))); !bytes.Equal(again, data) {
		t.Error("the same seed gave another file")
	}
	if other := marshal("another seed", SynthFile(4, levels, Typical(0, 40, 8))); bytes.Equal(other, data) {
		t.Error("another seed gave the same file")
	}
	slowed, err := Slowed(f, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	marshal("slowed", slowed)
	marshal("resampled", Resampled(f, 1))

	for i, c := range levels {
		r, ls := f.Runs[i], f.SamplesAt(c)
		if ls == nil {
			t.Fatalf("level %d: no samples", c)
		}
		if r.Concurrency != c || len(ls.Requests) != 40 || ls.Slots != c || r.Requests != 40 || r.OutputTokens != 8 ||
			r.Metrics.RequestsOK != 40 || r.Metrics.TTFTMs == nil || r.Metrics.TTFTMs.N != 40 || r.Metrics.ITLMs.N != 40*7 {
			t.Errorf("level %d: record %+v, %d samples", c, r, len(ls.Requests))
		}
	}
}

// Stalls hold up about StallP of the gaps by about StallUs.
func TestSynthStalls(t *testing.T) {
	t.Parallel()
	s := Typical(8, 100, 64)
	plain := SynthFile(4, []int{8}, s)
	s.StallP, s.StallUs = 0.02, 60_000
	stalled := SynthFile(4, []int{8}, s)
	long, gaps := 0, 0
	for _, r := range stalled.SamplesAt(8).Requests {
		gs, err := results.DecodeGaps(nil, r.Gaps)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gs {
			gaps++
			if g > 30_000 { // the plain gaps are 8 ms, give or take a quarter
				long++
			}
		}
	}
	if share := float64(long) / float64(gaps); share < 0.015 || share > 0.025 {
		t.Errorf("%d of %d gaps stalled (%.3f), want about 0.02", long, gaps, share)
	}
	// Stalls change only the gaps they hold up (and so the times after
	// them): the requests' other draws are the plain level's.
	if a, b := plain.SamplesAt(8).Requests[0], stalled.SamplesAt(8).Requests[0]; a.TTFTUs != b.TTFTUs || a.Slot != b.Slot {
		t.Errorf("the first request's TTFT %d, then %d with stalls: want the same draw", a.TTFTUs, b.TTFTUs)
	}
}
